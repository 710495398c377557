/**
 * What a session format is to the strategies that rewrite messages in place: how a row of that
 * format names its tool calls, clears a tool result or a tool input, drops thinking, and what a
 * rewritten row then counts. One object per format, in the format's own folder
 * (`anthropic/format.ts`, `openai-chat/format.ts`, `openai-responses/format.ts`), found by the
 * session's format in the registry (registry.ts). A strategy asks the format, never a block type.
 * Each method takes a row of any shape and leaves alone what is not its format's (a summary row's
 * text in a Chat Completions session, say). Pure: no I/O.
 */
import type { StoredContent } from '../contract/blocks.ts';
import type { MessageMeta } from '../contract/message.ts';
import type { SessionFormat as SessionFormatName } from '../contract/session-format.ts';
import type { Rewrite } from '../planning/types.ts';

/** A tool result clearing asks of one row. */
export interface ResultClearing {
  /** The tool call ids whose results may be cleared. */
  clearable: ReadonlySet<string>;
  /** The text a cleared result reads, from its call id and the result's estimated tokens. */
  placeholder: (callId: string, tokens: number) => string;
  /** How every placeholder begins: a result that already does is cleared. */
  clearedPrefix: string;
}

/** What clearing one row's tool results did. */
export interface ClearedResults {
  /** The row's new content; null when nothing in it changed. */
  content: StoredContent | null;
  /** Clearable call ids the row answers (cleared now or before). */
  answered: string[];
  /** Call ids whose results were cleared now. */
  cleared: string[];
}

/** The row-level rules of one session format (see the module's comment). */
export interface SessionFormat {
  /** The format's name, as `sessions.format` records it. */
  readonly name: SessionFormatName;
  /** `[call id, tool name]` of each tool call the row makes; empty when it makes none. */
  toolNames(content: StoredContent): Array<[string, string]>;
  /** The row with its clearable tool results replaced by their placeholders. */
  clearToolResults(content: StoredContent, clearing: ResultClearing): ClearedResults;
  /**
   * The row with the inputs of the calls in `ids` emptied, and the ids emptied now; null when
   * nothing changed.
   */
  clearToolInputs(
    content: StoredContent,
    ids: ReadonlySet<string>,
  ): { content: StoredContent; cleared: string[] } | null;
  /**
   * The row without its thinking (reasoning), and how many blocks or items of it were dropped;
   * `thinking only` when the row holds nothing else (it keeps it: no empty message); null when it
   * holds none to drop.
   */
  clearThinking(content: StoredContent): { content: StoredContent; dropped: number } | 'thinking only' | null;
  /** The rewrite of `meta` into the row's new `content`: its rendering and token estimate recomputed. */
  rewriteOf(meta: MessageMeta, content: StoredContent): Rewrite;
}

/** Nothing cleared, nothing answered. */
const UNTOUCHED: ClearedResults = { content: null, answered: [], cleared: [] };

/**
 * {@link SessionFormat.clearToolResults} for a format whose tool result is a row of its own that
 * answers one call (a Chat Completions tool message, a Responses call output).
 * @param result the row's call id, whether its text begins with the placeholder's prefix, its
 *   result's estimated tokens, and the row with its result replaced; null when the row is no result.
 */
export function clearOneResult(
  clearing: ResultClearing,
  result: {
    callId: string;
    cleared: (prefix: string) => boolean;
    tokens: () => number;
    replaced: (placeholder: string) => StoredContent | null;
  } | null,
): ClearedResults {
  if (result === null || !clearing.clearable.has(result.callId)) return UNTOUCHED;
  const answered = [result.callId];
  if (result.cleared(clearing.clearedPrefix)) return { content: null, answered, cleared: [] };
  const content = result.replaced(clearing.placeholder(result.callId, result.tokens()));
  return content === null
    ? { content: null, answered, cleared: [] }
    : { content, answered, cleared: answered };
}
