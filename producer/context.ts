/**
 * "Context out": what an agent service passes to `client.messages.create` as its next request,
 * read from a session's live history and rendered by shared/context/render.ts.
 *
 * ```ts
 * const context = await loadContext(db, { tenantId: 'acme', sessionId: 'session-42' });
 * const reply = await client.messages.create({
 *   model, max_tokens: 4096, system: context.system, messages: [...context.messages, next],
 * });
 * await appendMessages(db, 'acme', context.sessionId, [next, { role: 'assistant', content: reply.content }]);
 * ```
 */
import type { MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { ContextNotice, ContextRow } from '../shared/context/render.ts';
import { ContextLimitError, InvalidInputError, SessionNotFoundError } from '../shared/contract/errors.ts';
import type { SessionFormat } from '../shared/contract/session-format.ts';
import type { AiSdkStoredMessage } from '../shared/formats/ai-sdk/encoding.ts';
import type { RenderedFormatContext } from '../shared/formats/format.ts';
import type { ChatMessage } from '../shared/formats/openai-chat/message.ts';
import type { ResponsesItem } from '../shared/formats/openai-responses/item.ts';
import { foreignWord, formatMismatch, SESSION_FORMAT_RULES } from '../shared/formats/registry.ts';
import { countPdfPages } from './media/pdf-pages.ts';
import { type ContextRead, readContext } from './postgres/context-query.ts';
import type { Db } from './postgres/db.ts';

export type { ContextNotice } from '../shared/context/render.ts';

/** Which session to load, and how. */
export interface LoadContextInput {
  tenantId: string;
  /** The session, or any ancestor of it: a lineage is followed to its live session. */
  sessionId: string;
  /** `keep` (default): thinking comes back wherever its signature still holds; `strip`: none. */
  thinking?: 'keep' | 'strip';
  /**
   * An `anthropic-compaction` summary: `native` (default) sends Anthropic's signed `compaction`
   * block first (send the request with `betas`); `text` sends compactor's readable checkpoint
   * instead, for a client that cannot send the beta (every thinking block made since is then left
   * out: it was bound to the block).
   */
  compactionBlock?: 'native' | 'text';
  /**
   * The largest context to load, bytes of the live messages' stored content (a tenant's
   * `maxContextBytes`, shared/policy/limits.ts): a larger one is measured in Postgres and refused
   * before any message is read. Absent: no limit.
   */
  maxBytes?: number;
  /** The same in the live session's estimated tokens (a tenant's `maxContextTokens`). */
  maxTokens?: number;
  /**
   * Messages not stored yet, in the session's format: rendered after the session's rows as the
   * next append would store them, so that the context a model is sent can hold the turn it answers
   * while that turn is stored with the answer, in one append (a framework middleware does). They
   * are validated as an append validates them and written nowhere; they count in `tokens`, not in
   * `maxBytes`/`maxTokens`.
   */
  pending?: readonly unknown[];
  /**
   * The session format the caller expects (it decides the result's shape): `anthropic` (default)
   * gives a {@link LoadedContext}, `openai-chat` a {@link LoadedChatContext}, `openai-responses` a
   * {@link LoadedResponsesContext}, another format (`ai-sdk`) a {@link LoadedFormatContext} with the
   * fields its folder renders (`prompt`), and `any` whichever the session's format is (tell them
   * apart by `format`: the Anthropic shape has none). A session of another format than the one
   * expected is refused with an {@link InvalidInputError} naming this field.
   */
  format?: SessionFormat | 'any';
}

/** The next request's `system` and `messages`, ready for `client.messages.create`. */
export interface LoadedContext {
  /** The SDK's `system` parameter: text blocks, or undefined when the session has no system text. */
  system: TextBlockParam[] | undefined;
  /** The SDK's `messages` parameter, as it is. */
  messages: MessageParam[];
  /** Estimated input tokens of `system` and `messages`. */
  tokens: number;
  /** The live session read (where the agent appends next): `sessionId` unless it continued in a child. */
  sessionId: string;
  /** What the caller must act on to send the request (see shared/context/render.ts). */
  notices: ContextNotice[];
  /**
   * The `anthropic-beta` values the request needs: `compact-2026-09-04` when it carries a
   * compaction block; empty otherwise. With the SDK: `client.beta.messages.create({ …, betas })`.
   */
  betas: string[];
  /**
   * The live session's compaction version this context was rendered at. Pass it to
   * `appendMessages(…, { contextVersion })` with the model's reply, so that a compaction that runs
   * while the model answers cannot leave the reply's thinking in a later context it would fail in.
   */
  version: number;
}

/**
 * An `openai-chat` session's next request: `messages` ready for `client.chat.completions.create`
 * (shared/formats/openai-chat/context.ts gives the rules they keep).
 *
 * ```ts
 * const context = await loadContext(db, { tenantId: 'acme', sessionId: 's-1', format: 'openai-chat' });
 * const completion = await openai.chat.completions.create({ model, messages: [...context.messages, next] });
 * ```
 */
/** The session formats added after those with a shape of their own here (none yet). */
export type LaterFormat = Exclude<SessionFormat, 'anthropic' | 'openai-chat' | 'openai-responses' | 'ai-sdk'>;

/**
 * The context of a session whose format has no shape of its own here: the request fields its
 * folder's `renderContext` gives (`shared/formats/<format>/format.ts`), with `format`, `sessionId`
 * and `version` as every shape has them.
 */
export type LoadedFormatContext = RenderedFormatContext & {
  format: LaterFormat;
  sessionId: string;
  version: number;
};

export interface LoadedChatContext {
  format: 'openai-chat';
  /** The request's `messages`: every stored message exactly as the agent wrote it, the summary a user message. */
  messages: ChatMessage[];
  /** Estimated input tokens of `messages`. */
  tokens: number;
  /** The live session read (where the agent appends next). */
  sessionId: string;
  /** Nothing to act on yet for this format: always empty (kept for the shape's sake). */
  notices: ContextNotice[];
  /** The live session's compaction version this context was rendered at (see {@link LoadedContext.version}). */
  version: number;
}

/**
 * An `openai-responses` session's next request: `input` ready for
 * `client.responses.create({ model, input, store: false })`
 * (shared/formats/openai-responses/context.ts gives the rules it keeps).
 *
 * ```ts
 * const context = await loadContext(db, { tenantId: 'acme', sessionId: 's-1', format: 'openai-responses' });
 * const response = await openai.responses.create({ model, input: [...context.input, next], store: false });
 * ```
 */
export interface LoadedResponsesContext {
  format: 'openai-responses';
  /**
   * The request's `input`: every stored item sent exactly as the agent wrote it, the summary a user
   * message; reasoning only where the API takes it back; nothing before the newest compaction item
   * but the leading system/developer messages.
   */
  input: ResponsesItem[];
  /** Estimated input tokens of `input`. */
  tokens: number;
  /** The live session read (where the agent appends next). */
  sessionId: string;
  /** Nothing to act on yet for this format: always empty (kept for the shape's sake). */
  notices: ContextNotice[];
  /** The live session's compaction version this context was rendered at (see {@link LoadedContext.version}). */
  version: number;
}

/**
 * An `ai-sdk` session's next call: `prompt` ready for a language model's `doGenerate`/`doStream`
 * once decoded (`decodeAiSdkPrompt`, shared/formats/ai-sdk/encoding.ts: a file's `{ $bytes }` and
 * `{ $url }` back to a `Uint8Array` and a `URL`); shared/formats/ai-sdk/context.ts gives the rules
 * it keeps.
 *
 * ```ts
 * const context = await loadContext(db, { tenantId: 'acme', sessionId: 's-1', format: 'ai-sdk' });
 * const result = await model.doGenerate({ prompt: decodeAiSdkPrompt(context.prompt) });
 * ```
 */
export interface LoadedAiSdkContext {
  format: 'ai-sdk';
  /**
   * The call's `prompt`, its file data encoded: every stored message as the agent wrote it, the
   * summary a user message.
   */
  prompt: AiSdkStoredMessage[];
  /** Estimated input tokens of `prompt`. */
  tokens: number;
  /** The live session read (where the agent appends next). */
  sessionId: string;
  /** Nothing to act on yet for this format: always empty (kept for the shape's sake). */
  notices: ContextNotice[];
  /** The live session's compaction version this context was rendered at (see {@link LoadedContext.version}). */
  version: number;
}

/** Every shape `loadContext` returns, one per format, and a later format's {@link LoadedFormatContext}. */
export type AnyLoadedContext =
  | LoadedContext
  | LoadedChatContext
  | LoadedResponsesContext
  | LoadedAiSdkContext
  | LoadedFormatContext;

/**
 * Loads a session's next request: its live history rendered by the rules of
 * shared/context/render.ts, read by producer/postgres/context-query.ts. One statement, so one round
 * trip and one snapshot: it follows the lineage to the live session (a `newSession` compaction
 * continued it in a child), reads the checkpoint, which compactions changed the history under the
 * thinking signed before them, the system messages they archived (or left in an ancestor), and
 * the live rows. Every read is scoped by tenant.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 * @throws {ContextLimitError} if the context is over `input.maxBytes` or `input.maxTokens`
 *   (nothing was loaded).
 */
export async function loadContext(
  db: Db,
  input: LoadContextInput & { format: 'openai-chat' },
): Promise<LoadedChatContext>;
export async function loadContext(
  db: Db,
  input: LoadContextInput & { format: 'openai-responses' },
): Promise<LoadedResponsesContext>;
export async function loadContext(
  db: Db,
  input: LoadContextInput & { format: 'ai-sdk' },
): Promise<LoadedAiSdkContext>;
/** A session of a format added after these: the fields its folder's `renderContext` gives. */
export async function loadContext(
  db: Db,
  input: LoadContextInput & {
    format: LaterFormat;
  },
): Promise<LoadedFormatContext>;
export async function loadContext(
  db: Db,
  input: LoadContextInput & { format: 'any' },
): Promise<AnyLoadedContext>;
export async function loadContext(
  db: Db,
  input: LoadContextInput & { format?: 'anthropic' },
): Promise<LoadedContext>;
export async function loadContext(db: Db, input: LoadContextInput): Promise<AnyLoadedContext>;
export async function loadContext(db: Db, input: LoadContextInput): Promise<AnyLoadedContext> {
  const { tenantId, sessionId } = input;
  const caps = {
    ...(input.maxBytes === undefined ? {} : { maxBytes: input.maxBytes }),
    ...(input.maxTokens === undefined ? {} : { maxTokens: input.maxTokens }),
  };
  const read = await readContext(db, tenantId, sessionId, undefined, caps);
  if (read === null) throw new SessionNotFoundError(tenantId, sessionId);
  if (read.overLimit === 'maxBytes')
    throw new ContextLimitError(read.liveId, 'maxContextBytes', input.maxBytes ?? 0, read.bytes);
  if (read.overLimit === 'maxTokens')
    throw new ContextLimitError(read.liveId, 'maxContextTokens', input.maxTokens ?? 0, read.tokens);
  const expected = input.format ?? 'anthropic';
  if (expected !== 'any' && expected !== read.format) {
    throw new InvalidInputError(
      `format: session "${read.liveId}" has format "${read.format}", not "${expected}"; pass format: "${read.format}" (or "any")`,
    );
  }
  const format = SESSION_FORMAT_RULES[read.format];
  const rows = [...read.render.rows, ...pendingRows(input.pending ?? [], read)];
  const rendered = format.renderContext({
    ...read.render,
    rows,
    thinking: input.thinking ?? 'keep',
    compactionBlock: input.compactionBlock ?? 'native',
    pdfPages: countPdfPages,
  });
  // The format's own shape (see the overloads): its request's fields, `format` but for the default's.
  return { ...rendered, sessionId: read.liveId, version: read.version } as AnyLoadedContext;
}

/**
 * {@link LoadContextInput.pending}'s messages as the rows an append would store after the live ones.
 * @throws {InvalidInputError} naming `pending[i]` and the field: a message of another format, or
 *   one the session's format refuses.
 */
function pendingRows(pending: readonly unknown[], read: ContextRead): ContextRow[] {
  if (!Array.isArray(pending)) throw new InvalidInputError('pending: expected a list of messages');
  const last = read.render.rows.at(-1)?.seq ?? -1;
  return pending.map((message, i) => {
    const where = `pending[${i}]`;
    const foreign = foreignWord(read.format, message, where);
    if (foreign) throw formatMismatch(foreign, read.liveId, read.format);
    const row = SESSION_FORMAT_RULES[read.format].rowOf(message, where, { pdfPages: countPdfPages });
    return {
      seq: last + 1 + i,
      role: row.role,
      kind: row.kind,
      content: row.contentBlocks,
      pinned: false,
      contextVersion: null,
    };
  });
}
