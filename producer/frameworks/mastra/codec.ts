/**
 * How this adapter stores a Mastra agent's conversation in a compactor session, whatever the
 * session's format: a {@link SessionCodec} turns the AI SDK prompt messages Mastra builds into the
 * format's messages (refusing, with an error naming the part, what the format cannot hold) and a
 * loaded context back into prompt messages. Everything else of the adapter (which messages are new,
 * when to store them, the session, the run's event) is the same for every format, so the format is
 * chosen in one place: `codecFor` (./registry.ts). Pure: no I/O.
 *
 * The formats: `openai-chat` (./openai-chat.ts) stores what a Chat Completions request carries,
 * for models without signed reasoning; `anthropic` (./anthropic.ts) stores Messages API
 * `MessageParam`s, for Claude models whose thinking carries Anthropic's signatures. A format that
 * stores the AI SDK prompt itself would need no mapping at all: its codec is the identity, one
 * more entry of `CODECS` (./registry.ts).
 */

import type { SessionFormat } from '../../../shared/contract/session-format.ts';
import type { AnyLoadedContext } from '../../context.ts';
import type { PromptMessage, PromptVersion } from './prompt.ts';

/** A context as `loadContext` answers it, in any format. */
export type { AnyLoadedContext };

/** The mapping between Mastra's prompt messages and one session format's messages. */
export interface SessionCodec {
  /** The session format this codec writes and reads. */
  readonly format: SessionFormat;
  /**
   * The session messages holding `messages` (prompt messages after the instructions: no leading
   * system message), in order, ready for `appendToLiveSession`; each stored exactly as returned.
   * @param where names the first message in errors (`conversation[4]`); the others count on from it.
   * @throws {InvalidInputError} naming the message and part, for what the format cannot hold
   *   (nothing of the batch is to be stored then).
   */
  encode(messages: readonly PromptMessage[], where: string): unknown[];
  /**
   * The prompt messages of a context loaded in this codec's format, for a model of prompt
   * `version`: what was stored comes back as the prompt messages it was made from (see the codec's
   * own rules for what "the same" means there), compactor's own messages (the summary, the answer
   * of a call that got none) as the prompt messages that carry them.
   * @throws {Error} for a context of another format, or a message no session of it holds.
   */
  decode(context: AnyLoadedContext, version: PromptVersion): PromptMessage[];
}
