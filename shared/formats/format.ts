/**
 * What a session format is, to everything that reads or writes a session's rows: the words that
 * mark its messages (for the error that names a message of another format), validating a message
 * and deriving its row, rendering a context under its provider's pairing rules, the transcripts it
 * imports, and the row rules of the strategies that rewrite messages in place (its tool calls,
 * clearing a tool result or a tool input, dropping thinking, what a rewritten row then counts) and
 * the media a row holds.
 * One object per format, in the format's own folder (`anthropic/format.ts`,
 * `openai-chat/format.ts`, `openai-responses/format.ts`, `ai-sdk/format.ts`), found by the session's format in the
 * registry (registry.ts). Callers ask the format, never a block type. Each row method takes a row
 * of any shape and leaves alone what is not its format's (a summary row's text in a Chat
 * Completions session, say). Pure: no I/O.
 */
import type { z } from 'zod';
import type { ContextNotice, RenderContextInput } from '../context/render.ts';
import type { StoredContent } from '../contract/blocks.ts';
import type { ToolUseIdAt } from '../contract/content-checks.ts';
import type { InlineImage, MediaFound } from '../contract/media-refs.ts';
import type { PdfPageCounter } from '../contract/media-tokens.ts';
import type { Kind, MessageMeta, Role } from '../contract/message.ts';
import type { SessionFormat as SessionFormatName } from '../contract/session-format.ts';
import type { Rewrite } from '../planning/types.ts';

/**
 * The words a format's messages are made of, as the registry compares them: a message holding a
 * word its session's format lacks and another format has is that format's, and the append's error
 * says so (registry.ts, `foreignWord`). Only the top level of a message is read: its `type`, its
 * `role`, its field names, its `content` part types, and whether its `content` is null.
 */
export interface FormatVocabulary {
  /** What the format's messages are, in an error: `Anthropic Messages API MessageParams`. */
  messages: string;
  /** Values of a message's `type` (items of a typed format; an Anthropic `Message` is `message`). */
  itemTypes: ReadonlySet<string>;
  roles: ReadonlySet<string>;
  /** Top-level field names a message of the format may have. */
  fields: ReadonlySet<string>;
  /** `type`s of the parts or blocks of a `content` list. */
  partTypes: ReadonlySet<string>;
  /** Whether a message's `content` may be null. */
  nullContent: boolean;
  /**
   * Whether every message of the format is an item named by its `type`, so that a `type` no
   * format knows is still one of its items (refused by its own check, which names the type).
   */
  openItemTypes: boolean;
  /**
   * How each kind of word is named in an error, with its article: `{ role: 'a Chat Completions
   * role', field: 'a Chat Completions field', part: 'a Chat Completions content part', item: …,
   * nullContent: "a Chat Completions message's" }` (read after "a null content is").
   */
  names: { item: string; role: string; field: string; part: string; nullContent: string };
}

/** A message's row, everything but the seq. `tokenCount` in estimated tokens. */
export interface MessageRow {
  role: Role;
  kind: Exclude<Kind, 'summary'>;
  /** The plain-text rendering (shared/contract/blocks.ts): for summaries, search, tokens. */
  content: string;
  /** The message as the agent wrote it. */
  contentBlocks: StoredContent;
  toolCallId: string | null;
  toolName: string | null;
  toolUseIds: string[];
  toolResultIds: string[];
  hasThinking: boolean;
  tokenCount: number;
  pinned: boolean;
  createdAt: Date | null;
  contextVersion?: number | null;
  /** Where each tool call id of the message is in the request (not stored). */
  toolUseIdsAt?: ToolUseIdAt[];
}

/** Options given beside a message (`{ message, pinned, createdAt, tokenCount }`). */
export interface RowOptions {
  /** The message was given inside `{ message, … }`. */
  wrapped?: boolean;
  pinned?: boolean;
  createdAt?: Date | null;
  tokenCount?: number;
  /** Counts a PDF's pages for the token estimate (the producer passes one that inflates streams). */
  pdfPages?: PdfPageCounter;
}

/**
 * A rendered context: the fields of the format's request (`system` and `messages`, `messages`,
 * `input`), as `loadContext` returns them but for `sessionId` and `version`, with its estimated
 * input tokens and what the caller must act on.
 */
export type RenderedFormatContext = { tokens: number; notices: ContextNotice[] } & Record<string, unknown>;

/** One message a transcript held, for `createSession` (`{ seq, message, createdAt }`). */
export interface TranscriptMessage {
  message: unknown;
  createdAt: Date | null;
}

/** A kind of transcript file a format imports (`compactor import --format <name>`). */
export interface TranscriptReader {
  /**
   * Whether a file whose first non-empty line is the JSON object `first` is of this kind: `yes`
   * when the line has what only this kind has, `maybe` when it is plain enough to be (a bare
   * `{ role, content }`). The registry takes the first `yes` in its order, else the first `maybe`.
   */
  detects(first: Record<string, unknown>): 'yes' | 'maybe' | 'no';
  /** What its first line looks like, for the error when no kind detects a file: `a MessageParam (role, content)`. */
  looksLike: string;
  /**
   * For a kind also written as one JSON array (not a line each): whether the file, parsed whole,
   * is one of it. Asked before the first line is.
   */
  detectsArray?(value: readonly unknown[]): boolean;
  /**
   * The file's messages, in order.
   * @throws {TranscriptError} naming the file and line of what is wrong.
   */
  parse(text: string, file: string, options: { sidechains: boolean }): TranscriptMessage[];
}

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

/** What one session format is (see the module's comment). */
export interface SessionFormat {
  /** The format's name, as `sessions.format` records it. */
  readonly name: SessionFormatName;
  /** The words its messages are made of. */
  readonly vocabulary: FormatVocabulary;
  /**
   * Validates one message of the format and derives its row; the message is stored as given (this
   * object, not a parsed copy), options beside it (`pinned`) apart.
   * @param where the message's field, for errors (`messages[3]`).
   * @throws {InvalidInputError} naming the field and what is wrong, by the provider's rules.
   */
  rowOf(message: unknown, where: string, options: RowOptions): MessageRow;
  /** Renders a session's live rows as the next request of the format's API (the rules in its folder). */
  renderContext(input: RenderContextInput): RenderedFormatContext;
  /**
   * Estimated tokens of a text summary as the format's context sends it (its introduction and
   * frame included), the summary row rendered alone.
   */
  summaryTokens(input: Pick<RenderContextInput, 'rows' | 'checkpoint'>): number;
  /** The kinds of transcript file the format imports, by the name `--format` takes. */
  readonly transcripts: Readonly<Record<string, TranscriptReader>>;
  /**
   * The format in the HTTP API's OpenAPI document and JSON Schemas: a message as a request body
   * takes it (`pinned` beside its fields), and the context route's answer.
   */
  readonly apiSchemas: {
    message: z.ZodType<Record<string, unknown> & { pinned?: boolean }>;
    context: z.ZodType;
  };
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
  /**
   * The images and documents a row's stored content holds (`contentBlocks`), in order, with what
   * its message says of each (shared/contract/media-refs.ts): a summary lists them so an agent can
   * read them back. Empty for content of another shape.
   * @param pdfPages counts a base64 PDF's pages for its tokens.
   */
  mediaOf(stored: unknown, pdfPages: PdfPageCounter): MediaFound[];
  /**
   * The images a row's stored content holds inline (base64), in order, with their media types:
   * what recall's MCP server also returns as image content, so that a model reading a message back
   * sees its images. Images at a URL or in a provider's file are left out; empty for content of
   * another shape.
   */
  imagesOf(stored: unknown): InlineImage[];
  /** The rewrite of `meta` into the row's new `content`: its rendering and token estimate recomputed. */
  rewriteOf(meta: MessageMeta, content: StoredContent): Rewrite;
}

/**
 * Rows of a format for the tests every format passes (test/unit/format-rules.test.ts), exported by
 * its folder's `examples.ts` as `examples`: a new format is tested by adding them, not by editing
 * a central test. Plain data, as the format stores it.
 */
export interface FormatExamples {
  /** A row that answers the tool call `call_1` with a result of 400 `x`s. */
  toolResult: StoredContent;
  /**
   * A user message that says `see this` and holds one image: the PNG whose base64 (RFC 4648,
   * padded) is `png`, in the form the format stores an image's bytes in.
   */
  image(png: string): StoredContent;
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
