/**
 * What compactor reads off a stored AI SDK prompt message (./message.ts): the row's role and kind,
 * the tool calls it opens and the results it gives, whether it holds reasoning, a plain-text
 * rendering (for summaries, search and token estimates; a file is a short marker, never its base64)
 * and its estimated tokens. Pure: no I/O.
 *
 * The tool pairs are the client's: a `tool-call` part without `providerExecuted: true` opens its
 * `toolCallId`, which a `tool-result` part of a later `tool` message answers. A provider-executed
 * call (a provider's hosted tool: web search, code execution) is answered by the provider, its
 * result a `tool-result` part of the same assistant message: it pairs with nothing here, so no
 * strategy clears it and no window waits for it.
 */
import type { Block } from '../../contract/blocks.ts';
import {
  decodedByteLength,
  describeMedia,
  documentTokens,
  formatBytes,
  IMAGE_TIERS,
  imageTokens,
  type PdfPageCounter,
  pdfPageCount,
  safeMediaType,
} from '../../contract/media-tokens.ts';
import { estimateTextTokens, MESSAGE_OVERHEAD_TOKENS } from '../../contract/tokens.ts';
import { isEncodedBytes, isEncodedUrl } from './encoding.ts';
import { type AiSdkMessage, type AiSdkPart, partsOf, REASONING_PART_TYPES } from './message.ts';

/** What compactor reads off an AI SDK message (the row's columns). */
export interface AiSdkFacts {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** `tool_result` for a tool message answering calls, `tool_call` for one making client calls, else `message`. */
  kind: 'message' | 'tool_call' | 'tool_result';
  /** Ids of its client `tool-call` parts, in order. */
  toolUseIds: string[];
  /** `toolCallId`s of the `tool-result` parts of a tool message, in order. */
  toolResultIds: string[];
  /** The first client call's tool name, else the first result's; null when it has neither. */
  toolName: string | null;
  /** Whether it holds a `reasoning` or `reasoning-file` part. */
  thinking: boolean;
  text: string;
  /** Estimated input tokens: its text, its files (./facts.ts, {@link fileTokens}) and the framing. */
  tokenCount: number;
}

/** Whether a part is a call the client runs (not `providerExecuted`). */
export function isClientCall(part: AiSdkPart): boolean {
  return part.type === 'tool-call' && part.providerExecuted !== true && typeof part.toolCallId === 'string';
}

/**
 * The facts of one (valid) stored AI SDK message.
 * @param pdfPages counts a base64 PDF's pages for its tokens and marker.
 */
export function aiSdkFacts(m: AiSdkMessage, pdfPages: PdfPageCounter = pdfPageCount): AiSdkFacts {
  const parts = partsOf(m);
  const calls = m.role === 'assistant' ? parts.filter(isClientCall) : [];
  const results = m.role === 'tool' ? parts.filter((p) => p.type === 'tool-result') : [];
  const text = aiSdkText(m, pdfPages);
  const media = parts.reduce((sum, p) => sum + partMediaTokens(p, pdfPages), 0);
  const first = calls[0] ?? results[0];
  return {
    role: m.role,
    kind: results.length > 0 ? 'tool_result' : calls.length > 0 ? 'tool_call' : 'message',
    toolUseIds: calls.map((c) => String(c.toolCallId)),
    toolResultIds: results.map((r) => String(r.toolCallId)),
    toolName: first && typeof first.toolName === 'string' ? first.toolName : null,
    thinking: m.role === 'assistant' && parts.some((p) => REASONING_PART_TYPES.has(p.type)),
    text,
    tokenCount: estimateTextTokens(text) + media + MESSAGE_OVERHEAD_TOKENS,
  };
}

/**
 * The plain-text rendering of a message, a line group per part: text as it is; reasoning as
 * `[reasoning] …` (`[reasoning]` when its text is empty: redacted or encrypted); a file as a marker
 * (`[image: image/png, 800x600, 41 KB]`, `[document: application/pdf, 3 pages, 120 KB]`,
 * `[file: audio/wav, 12 KB]`); a call as `{"name": …, "arguments": …}` (as compactor renders every
 * format's calls, so summaries read them alike); a result as its output (`[error] ` before an
 * error's); an approval as `[tool approval: approved|denied <id>]`.
 */
export function aiSdkText(m: AiSdkMessage, pdfPages: PdfPageCounter = pdfPageCount): string {
  return partsOf(m)
    .map((p) => partText(p, pdfPages))
    .join('\n');
}

function partText(part: AiSdkPart, pdfPages: PdfPageCounter): string {
  switch (part.type) {
    case 'text':
      return String(part.text);
    case 'reasoning':
      return part.text === '' ? '[reasoning]' : `[reasoning] ${String(part.text)}`;
    case 'file':
    case 'reasoning-file':
      return fileMarker(part, pdfPages, part.type === 'reasoning-file' ? 'reasoning file' : 'file');
    case 'custom':
      return `[custom: ${String(part.kind)}]`;
    case 'tool-call':
      return JSON.stringify({ name: part.toolName, arguments: part.input });
    case 'tool-result':
      return outputText(part.output, pdfPages);
    case 'tool-approval-response':
      return (
        `[tool approval: ${part.approved === true ? 'approved' : 'denied'} ${String(part.approvalId)}]` +
        (typeof part.reason === 'string' && part.reason !== '' ? ` ${part.reason}` : '')
      );
    default:
      return `[${part.type}]`;
  }
}

/** A tool result's output as text (see {@link aiSdkText}). */
export function outputText(output: unknown, pdfPages: PdfPageCounter = pdfPageCount): string {
  const o = (output ?? {}) as Record<string, unknown>;
  switch (o.type) {
    case 'text':
      return String(o.value);
    case 'error-text':
      return `[error] ${String(o.value)}`;
    case 'json':
      return JSON.stringify(o.value) ?? 'null';
    case 'error-json':
      return `[error] ${JSON.stringify(o.value) ?? 'null'}`;
    case 'execution-denied':
      return `[execution denied]${typeof o.reason === 'string' && o.reason !== '' ? ` ${o.reason}` : ''}`;
    case 'content':
      return (Array.isArray(o.value) ? (o.value as AiSdkPart[]) : [])
        .map((item) => itemText(item, pdfPages))
        .join('\n');
    default:
      return '';
  }
}

function itemText(item: AiSdkPart, pdfPages: PdfPageCounter): string {
  switch (item.type) {
    case 'text':
      return String(item.text);
    case 'file':
      return fileMarker(item, pdfPages, 'file');
    case 'media':
    case 'image-data':
    case 'file-data':
      return describeMedia(mediaBlock(String(item.mediaType), { base64: String(item.data) }), pdfPages);
    case 'file-url':
    case 'image-url':
      return `[${item.type === 'image-url' ? 'image' : 'file'}: url ${String(item.url).slice(0, 80)}]`;
    case 'file-id':
    case 'image-file-id':
      return `[${item.type === 'image-file-id' ? 'image' : 'file'}: file ${typeof item.fileId === 'string' ? item.fileId.slice(0, 80) : 'by provider'}]`;
    default:
      return `[${item.type}]`;
  }
}

/** A tool result's output's estimated file tokens (its text is counted with the message's). */
export function outputMediaTokens(output: unknown, pdfPages: PdfPageCounter = pdfPageCount): number {
  const o = (output ?? {}) as Record<string, unknown>;
  if (o.type !== 'content' || !Array.isArray(o.value)) return 0;
  return (o.value as AiSdkPart[]).reduce((sum, item) => {
    if (item.type === 'file') return sum + fileTokens(item, pdfPages);
    if (item.type === 'media' || item.type === 'image-data' || item.type === 'file-data') {
      return sum + blockTokens(mediaBlock(String(item.mediaType), { base64: String(item.data) }), pdfPages);
    }
    if (item.type === 'image-url' || item.type === 'image-file-id')
      return sum + IMAGE_TIERS.standard.maxTokens;
    if (item.type === 'file-url' || item.type === 'file-id') return sum + documentTokens(null);
    return sum;
  }, 0);
}

function partMediaTokens(part: AiSdkPart, pdfPages: PdfPageCounter): number {
  if (part.type === 'file' || part.type === 'reasoning-file') return fileTokens(part, pdfPages);
  if (part.type === 'tool-result') return outputMediaTokens(part.output, pdfPages);
  return 0;
}

/** Where a file's bytes are, read off its `data` (V2/V3 bare, V4 tagged; ./encoding.ts). */
export type FileSource =
  | { base64: string }
  | { url: string }
  | { text: string }
  | { reference: string }
  | { unknown: true };

/** Where a file's bytes are (see {@link FileSource}), from its `data`; `unknown` for data of no known shape. */
export function sourceOf(data: unknown): FileSource {
  if (typeof data === 'string') return { base64: data };
  if (isEncodedBytes(data)) return { base64: data.$bytes };
  if (isEncodedUrl(data)) return { url: data.$url };
  const d = (data ?? {}) as Record<string, unknown>;
  if (d.type === 'data') return sourceOf(d.data);
  if (d.type === 'url') return isEncodedUrl(d.url) ? { url: d.url.$url } : { unknown: true };
  if (d.type === 'text' && typeof d.text === 'string') return { text: d.text };
  if (d.type === 'reference') return { reference: Object.keys((d.reference ?? {}) as object).join(', ') };
  return { unknown: true };
}

/**
 * The Messages API block a file reads as, for the markers and estimates of
 * shared/contract/media-tokens.ts: an image (`image/*`, or the bare `image`) or a document (a PDF,
 * or text); null for any other media type.
 */
function mediaBlock(mediaType: string, source: FileSource): Block | null {
  const type = mediaType.toLowerCase();
  const image = type === 'image' || type.startsWith('image/');
  const pdf = type === 'application/pdf';
  const text = type === 'text' || type.startsWith('text/');
  if (!image && !pdf && !(text && 'text' in source)) return null;
  const mediaSource =
    'base64' in source
      ? { type: 'base64', media_type: mediaType, data: source.base64 }
      : 'url' in source
        ? { type: 'url', url: source.url }
        : 'text' in source
          ? { type: 'text', media_type: 'text/plain', data: source.text }
          : { type: 'file', file_id: 'reference' in source ? source.reference : 'unknown' };
  return { type: image ? 'image' : 'document', source: mediaSource };
}

function blockTokens(block: Block | null, pdfPages: PdfPageCounter): number {
  if (block === null) return IMAGE_TIERS.standard.maxTokens;
  return block.type === 'image'
    ? imageTokens(block.source)
    : documentTokens(block.source, IMAGE_TIERS.standard, pdfPages);
}

/**
 * A file's estimated input tokens: an image's by its size (its header, when its bytes are here; else
 * the most an image costs), a PDF's by its pages, a text file's by its characters, any other file
 * (audio, video, a file of a type only some providers take) as much as the largest image, since
 * no provider documents a cheaper rule for it.
 */
export function fileTokens(part: AiSdkPart, pdfPages: PdfPageCounter = pdfPageCount): number {
  const source = sourceOf(part.data);
  const type = String(part.mediaType);
  if ('text' in source) return estimateTextTokens(source.text);
  if ((type === 'text' || type.startsWith('text/')) && 'base64' in source) {
    return Math.ceil(decodedByteLength(source.base64) / 4);
  }
  return blockTokens(mediaBlock(type, source), pdfPages);
}

/** A file's marker (see {@link aiSdkText}); never its base64. */
function fileMarker(part: AiSdkPart, pdfPages: PdfPageCounter, label: string): string {
  const source = sourceOf(part.data);
  const mediaType = String(part.mediaType);
  const block = label === 'file' ? mediaBlock(mediaType, source) : null;
  const named = typeof part.filename === 'string' && part.filename.trim() !== '' ? part.filename : null;
  if (block !== null) {
    const marker = describeMedia(block, pdfPages);
    return named ? `${marker.slice(0, -1)}, ${clip(named)}]` : marker;
  }
  const parts = [safeMediaType(mediaType) ?? clip(mediaType)];
  if (named) parts.push(clip(named));
  if ('base64' in source) parts.push(formatBytes(decodedByteLength(source.base64)));
  else if ('url' in source) parts.push(`url ${clip(source.url)}`);
  else if ('text' in source) parts.push(`${source.text.length} chars`);
  else if ('reference' in source) parts.push(`reference ${clip(source.reference)}`);
  return `[${label}: ${parts.join(', ')}]`;
}

/** One line of at most 80 characters, no brackets that would end a marker. */
function clip(text: string): string {
  const line = text.replace(/[\s[\]]+/g, ' ').trim();
  return line.length <= 80 ? line : `${line.slice(0, 79)}…`;
}
