/**
 * Native Anthropic message content as compactor stores it: a string or a list of content blocks,
 * kept exactly as the agent wrote it (any block type, every field, in order; never rewritten), and
 * what the rest of compactor derives from it: the message's kind, the tool ids it opens and answers,
 * whether it carries thinking, a plain-text rendering (for summarizing, search and token
 * estimates: an image or a document is a short marker, never its base64) and a token estimate.
 * Also the conversion of a corpus-format row (one text row per block) into native content.
 * Pure: no I/O.
 */

import {
  describeMedia,
  documentTokens,
  IMAGE_TIERS,
  imageTokens,
  type PdfPageCounter,
  pdfPageCount,
} from './media-tokens.ts';
import type { Kind, Message, Role } from './message.ts';
import { estimateTextTokens, MESSAGE_OVERHEAD_TOKENS } from './tokens.ts';

/** One content block: a `type` and whatever fields that type has, all kept. */
export type Block = { type: string } & Record<string, unknown>;

/** An Anthropic message's content as stored: the Messages API's `string | ContentBlockParam[]`, verbatim. */
export type AnthropicContent = string | Block[];

/**
 * A whole message object as stored by the formats that keep the message itself rather than its
 * content: a Chat Completions message (`openai-chat`), a Responses API input item
 * (`openai-responses`). A JSON object; its format's module (shared/formats/) reads it.
 */
export type StoredObject = { readonly [field: string]: unknown };

/**
 * What a message row holds (`content_blocks`), in its session's format: an {@link AnthropicContent}
 * (a string or an array) or a {@link StoredObject} (an object). The two never overlap, so
 * {@link isAnthropicContent} tells them apart.
 */
export type StoredContent = AnthropicContent | StoredObject;

/** Whether stored content is an Anthropic message's (a string or a list of blocks), not a whole message object. */
export function isAnthropicContent(content: StoredContent): content is AnthropicContent {
  return typeof content === 'string' || Array.isArray(content);
}

/**
 * Stored content read as Anthropic content: itself, or, for a whole message object (which an
 * `anthropic` session never holds: its appends refuse one), its JSON as one string, so that a
 * renderer shows what is there rather than failing on it.
 */
export function asAnthropicContent(content: StoredContent): AnthropicContent {
  return isAnthropicContent(content) ? content : JSON.stringify(content);
}

/** What compactor reads off a message's content. */
export interface ContentFacts {
  /** `tool_result` if it answers a tool call, `tool_call` if it makes one, else `message`. */
  kind: Exclude<Kind, 'summary'>;
  /** Ids of its `tool_use` blocks (client tools), in order. */
  toolUseIds: string[];
  /** `tool_use_id`s of its `tool_result` blocks, in order. */
  toolResultIds: string[];
  /** The first `tool_use` block's tool name, if any. */
  toolName: string | null;
  /** Whether it holds a `thinking` or `redacted_thinking` block. */
  thinking: boolean;
  /** The plain-text rendering (see {@link renderText}). */
  text: string;
  /** Estimated input tokens of the message, framing included (see {@link estimateContentTokens}). */
  tokenCount: number;
}

/** Block types whose signature binds them to the conversation before them. */
export const THINKING_TYPES: ReadonlySet<string> = new Set(['thinking', 'redacted_thinking']);

/**
 * The facts of one message's content.
 * @param content a string or a list of blocks, as the Messages API takes it.
 * @param pdfPages counts a PDF's pages for its token estimate and marker; default the pure core's
 *   `pdfPageCount`, which does not see pages packed in compressed object streams (the edges pass
 *   `countPdfPages` of producer/media/pdf-pages.ts, which does).
 */
export function contentFacts(
  content: AnthropicContent,
  pdfPages: PdfPageCounter = pdfPageCount,
): ContentFacts {
  const toolUseIds: string[] = [];
  const toolResultIds: string[] = [];
  let toolName: string | null = null;
  let thinking = false;
  if (typeof content !== 'string') {
    for (const block of content) {
      if (block.type === 'tool_use' && typeof block.id === 'string') {
        toolUseIds.push(block.id);
        if (toolName === null && typeof block.name === 'string') toolName = block.name;
      } else if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
        toolResultIds.push(block.tool_use_id);
      } else if (THINKING_TYPES.has(block.type)) {
        thinking = true;
      }
    }
  }
  const kind = toolResultIds.length > 0 ? 'tool_result' : toolUseIds.length > 0 ? 'tool_call' : 'message';
  return {
    kind,
    toolUseIds,
    toolResultIds,
    toolName,
    thinking,
    text: renderText(content, pdfPages),
    tokenCount: estimateContentTokens(content, pdfPages),
  };
}

/**
 * The plain-text rendering of a message's content, one line group per block: text as is;
 * `[thinking] …`; `[redacted thinking]`; a tool call as `{"name": …, "arguments": …}` (the corpus
 * format's own rendering); a tool result as its text (prefixed `[error] ` when `is_error`); an image
 * or document as a marker such as `[image: image/png, 800x600, 41 KB]`; a server tool call or
 * result, and any block type not known here, as `[type]` and its JSON without long base64 fields.
 * `pdfPages` counts a PDF's pages for its marker (see {@link contentFacts}).
 */
export function renderText(content: AnthropicContent, pdfPages: PdfPageCounter = pdfPageCount): string {
  if (typeof content === 'string') return content;
  return content.map((block) => renderBlock(block, pdfPages)).join('\n');
}

function renderBlock(block: Block, pdfPages: PdfPageCounter): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'thinking':
      return `[thinking] ${typeof block.thinking === 'string' ? block.thinking : ''}`;
    case 'redacted_thinking':
      return '[redacted thinking]';
    case 'tool_use':
      return JSON.stringify({ name: block.name, arguments: block.input ?? {} });
    case 'tool_result': {
      const body = block.content === undefined ? '' : renderNested(block.content, pdfPages);
      return block.is_error === true ? `[error] ${body}` : body;
    }
    case 'image':
    case 'document':
      return describeMedia(block, pdfPages);
    case 'search_result':
      return [block.title, block.source, renderNested(block.content, pdfPages)].filter(Boolean).join('\n');
    case 'server_tool_use':
      return `[server tool ${String(block.name)}] ${compactJson(block.input ?? {})}`;
    default:
      return `[${block.type}] ${compactJson(withoutType(block))}`;
  }
}

/** The content of a tool result or search result: a string, or a list of blocks. */
function renderNested(content: unknown, pdfPages: PdfPageCounter): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .filter(isBlock)
      .map((block) => renderBlock(block, pdfPages))
      .join('\n');
  return compactJson(content);
}

/** Longest string field kept in a JSON rendering; longer ones (base64 data) become a size note. */
const LONG_FIELD_CHARS = 512;

/** JSON of `value` with long string fields replaced by `[N chars]`, so no base64 reaches the text. */
function compactJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v) =>
      typeof v === 'string' && v.length > LONG_FIELD_CHARS && !/\s/.test(v.slice(0, LONG_FIELD_CHARS))
        ? `[${v.length} chars]`
        : v,
    ) ?? ''
  );
}

function withoutType(block: Block): Record<string, unknown> {
  const { type: _type, ...rest } = block;
  return rest;
}

function isBlock(value: unknown): value is Block {
  return typeof value === 'object' && value !== null && typeof (value as Block).type === 'string';
}

/**
 * Estimated input tokens of one message: text by the 4-characters rule of shared/contract/tokens.ts
 * (on the plain-text rendering), images and documents by the Messages API's documented rules
 * (shared/contract/media-tokens.ts: pixels for images, pages for PDFs, counted by `pdfPages` as
 * {@link contentFacts} says), plus the per-message framing.
 */
export function estimateContentTokens(
  content: AnthropicContent,
  pdfPages: PdfPageCounter = pdfPageCount,
): number {
  if (typeof content === 'string') return estimateTextTokens(content) + MESSAGE_OVERHEAD_TOKENS;
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  for (const block of content) tokens += blockTokens(block, pdfPages);
  return tokens;
}

function blockTokens(block: Block, pdfPages: PdfPageCounter): number {
  if (block.type === 'image') return imageTokens(block.source);
  if (block.type === 'document') return documentTokens(block.source, IMAGE_TIERS.standard, pdfPages);
  if (block.type === 'tool_result' && Array.isArray(block.content)) {
    let tokens = block.is_error === true ? 2 : 0;
    for (const inner of block.content) if (isBlock(inner)) tokens += blockTokens(inner, pdfPages);
    return tokens;
  }
  return estimateTextTokens(renderBlock(block, pdfPages));
}

/** A corpus-format row: one text row per block (see the corpus README). */
export interface LegacyRow {
  role: Role;
  kind: Kind;
  content: string;
  toolCallId: string | null;
  toolName: string | null;
}

/**
 * The native content of a corpus-format row, so every stored message has blocks: a tool call
 * becomes a `tool_use` block (`input` from its `arguments`, parsed when they are a JSON string;
 * `{}` when there are none; `{"arguments": …}` when they are not an object; `{"text": content}`
 * when the content is not JSON), a tool result a `tool_result` block with the text as its content,
 * anything else the text itself. The migration that added native content runs the same conversion
 * in SQL (`compactor_legacy_content`), and a test holds the two equal on the corpus.
 */
export function legacyContent(row: LegacyRow): AnthropicContent {
  if (row.kind === 'tool_call' && row.toolCallId !== null) {
    const parsed = parseJson(row.content);
    if (!isRecord(parsed)) {
      return [
        { type: 'tool_use', id: row.toolCallId, name: row.toolName ?? 'tool', input: { text: row.content } },
      ];
    }
    const name = row.toolName ?? (typeof parsed.name === 'string' ? parsed.name : 'tool');
    let args = parsed.arguments;
    if (typeof args === 'string') {
      const inner = parseJson(args);
      if (inner !== undefined) args = inner;
    }
    const input = args === undefined || args === null ? {} : isRecord(args) ? args : { arguments: args };
    return [{ type: 'tool_use', id: row.toolCallId, name, input }];
  }
  if (row.kind === 'tool_result' && row.toolCallId !== null) {
    return [{ type: 'tool_result', tool_use_id: row.toolCallId, content: row.content }];
  }
  return row.content;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A stored row as the summarizers read it: its metadata, its text rendering and its blocks. */
export interface StoredMessage extends Message {
  blocks: AnthropicContent;
}

/**
 * The messages summarizers read for one stored row, one per part: a row holding text and thinking
 * plus two tool calls gives a `message` and two `tool_call`s, a row of tool results one
 * `tool_result` each (role `tool`), all at the row's seq. A row that is a single part (every
 * corpus-format row) comes back as it is, its text untouched. `pdfPages` counts a PDF's pages for
 * the parts' markers and token estimates (see {@link contentFacts}).
 */
export function summaryParts(row: StoredMessage, pdfPages: PdfPageCounter = pdfPageCount): Message[] {
  const { blocks, ...message } = row;
  if (typeof blocks === 'string' || row.kind === 'summary') return [message];
  const parts: Message[] = [];
  let prose: Block[] = [];
  const flush = () => {
    if (prose.length === 0) return;
    const text = renderText(prose, pdfPages);
    const tokenCount = estimateContentTokens(prose, pdfPages);
    parts.push({ ...base(row), kind: 'message', content: text, tokenCount });
    prose = [];
  };
  for (const block of blocks) {
    if (block.type === 'tool_use' && typeof block.id === 'string') {
      flush();
      parts.push({
        ...base(row),
        kind: 'tool_call',
        content: renderBlock(block, pdfPages),
        toolCallId: block.id,
        toolName: typeof block.name === 'string' ? block.name : null,
        tokenCount: estimateContentTokens([block], pdfPages),
      });
    } else if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
      flush();
      parts.push({
        ...base(row),
        role: 'tool',
        kind: 'tool_result',
        content: renderBlock(block, pdfPages),
        toolCallId: block.tool_use_id,
        tokenCount: estimateContentTokens([block], pdfPages),
      });
    } else {
      prose.push(block);
    }
  }
  flush();
  if (parts.length === 1) return [message];
  return parts;
}

function base(row: Message): Message {
  return { ...row, toolCallId: null, toolName: null, toolUseIds: [], toolResultIds: [], thinking: false };
}
