/**
 * The images and documents a stored message holds, as references: where they are (the message's
 * seq and their place in it), what they are (media type, bytes, estimated tokens) and what the
 * message says about them (a caption). A `summarize` compaction lists them in the checkpoint, so an
 * agent still knows what media left and can read it back (recall) by seq.
 *
 * Reads the three stored shapes (the session formats of session-format.ts): Anthropic content blocks (`image`,
 * `document`, also inside a `tool_result`), a Chat Completions message object (`image_url` and
 * `file` parts) and a Responses item (`input_image`, `input_file` parts of a message's `content` or
 * a call output's `output`). Session text is data: a URL is counted, never fetched. Pure; never
 * throws.
 */
import {
  decodedByteLength,
  documentTokens,
  IMAGE_TIERS,
  imageTokens,
  type PdfPageCounter,
  pdfPageCount,
  pdfPageTokens,
  safeMediaType,
} from './media-tokens.ts';
import { isHighSurrogate } from './unicode.ts';

/** Where a media item's data is: in the message (base64 or text), at a URL, or a provider file. */
export const MEDIA_SOURCES = ['base64', 'text', 'content', 'url', 'file'] as const;
export type MediaSource = (typeof MEDIA_SOURCES)[number];

/** One image or document of a stored message. */
export interface MediaRef {
  /** seq of the message holding it. */
  seq: number;
  /** Its place among the message's media, from 0; with `seq`, its identity. */
  index: number;
  kind: 'image' | 'document';
  /** `image/png`, `application/pdf`, ...; null when the message does not say (a URL, a file id). */
  mediaType: string | null;
  source: MediaSource;
  /**
   * Bytes of its data as stored in the message: base64 decoded (a data URL's too), UTF-8 bytes of a
   * text document; null for a URL, a provider file or nested content, whose bytes are not stored.
   */
  bytes: number | null;
  /** Estimated input tokens (shared/contract/media-tokens.ts; OpenAI images: {@link OPENAI_IMAGE_TOKENS}). */
  tokens: number;
  /** What the message says of it, one line of at most {@link CAPTION_CHARS}; null when nothing. */
  caption: string | null;
}

/** Longest caption, in characters, `…` included. */
export const CAPTION_CHARS = 200;

/**
 * Estimated tokens of an OpenAI image part: a high-detail 1024×1024 image on the tile-based models
 * (85 + 170 per 512-px tile, OpenAI's images-vision guide), as the chat and responses formats
 * count it (shared/formats/*: `CHAT_IMAGE_TOKENS`, `RESPONSES_IMAGE_TOKENS`).
 */
export const OPENAI_IMAGE_TOKENS = 765;

type Found = Omit<MediaRef, 'seq' | 'index' | 'caption'> & { caption: string | null };
type Rec = Record<string, unknown>;

/**
 * The media of one stored message (`stored`: its content blocks, or its Chat Completions message,
 * or its Responses item), in the order they appear. A caption is a document's `title` or `context`,
 * else a file's name, else the text parts of the same message (or tool result) joined, clipped to
 * {@link CAPTION_CHARS}. `pdfPages` counts a base64 PDF's pages for its tokens.
 */
export function mediaRefsOf(
  seq: number,
  stored: unknown,
  pdfPages: PdfPageCounter = pdfPageCount,
): MediaRef[] {
  try {
    const found = Array.isArray(stored) ? fromParts(stored, pdfPages) : fromItem(asRecord(stored), pdfPages);
    return found.map((f, index) => ({ ...f, seq, index }));
  } catch {
    return [];
  }
}

function fromItem(item: Rec | null, pdfPages: PdfPageCounter): Found[] {
  if (!item) return [];
  const parts = Array.isArray(item.content) ? item.content : Array.isArray(item.output) ? item.output : [];
  return fromParts(parts, pdfPages);
}

/** The media of a list of blocks or parts, captioned with the list's text. */
function fromParts(parts: unknown[], pdfPages: PdfPageCounter): Found[] {
  const records = parts.map(asRecord).filter((p): p is Rec => p !== null);
  const text = captionOf(
    records
      .map(textOf)
      .filter((t) => t !== '')
      .join(' '),
  );
  const out: Found[] = [];
  for (const part of records) {
    if (part.type === 'tool_result' && Array.isArray(part.content)) {
      out.push(...fromParts(part.content, pdfPages));
      continue;
    }
    const found = mediaOfPart(part, pdfPages);
    if (found) out.push({ ...found, caption: found.caption ?? text });
  }
  return out;
}

function textOf(part: Rec): string {
  const isText = part.type === 'text' || part.type === 'input_text' || part.type === 'output_text';
  return isText && typeof part.text === 'string' ? part.text : '';
}

function mediaOfPart(part: Rec, pdfPages: PdfPageCounter): Found | null {
  switch (part.type) {
    case 'image':
      return anthropicImage(asRecord(part.source));
    case 'document':
      return anthropicDocument(part, pdfPages);
    case 'image_url':
      return openaiImage(asRecord(part.image_url)?.url, null);
    case 'input_image':
      return openaiImage(part.image_url, part.file_id);
    case 'file':
      return openaiFile(asRecord(part.file) ?? {}, pdfPages);
    case 'input_file':
      return openaiFile(part, pdfPages);
    default:
      return null;
  }
}

function anthropicImage(source: Rec | null): Found {
  const tokens = imageTokens(source);
  if (source?.type === 'base64' && typeof source.data === 'string') {
    const mediaType = safeMediaType(source.media_type);
    return {
      kind: 'image',
      mediaType,
      source: 'base64',
      bytes: decodedByteLength(source.data),
      tokens,
      caption: null,
    };
  }
  return { kind: 'image', mediaType: null, source: remote(source), bytes: null, tokens, caption: null };
}

function anthropicDocument(block: Rec, pdfPages: PdfPageCounter): Found {
  const source = asRecord(block.source);
  const tokens = documentTokens(source, IMAGE_TIERS.standard, pdfPages);
  const caption = captionOf(stringOr(block.title) ?? stringOr(block.context) ?? '');
  const base = { kind: 'document' as const, tokens, caption };
  if (source?.type === 'base64' && typeof source.data === 'string') {
    const mediaType = safeMediaType(source.media_type) ?? 'application/pdf';
    return { ...base, mediaType, source: 'base64', bytes: decodedByteLength(source.data) };
  }
  if (source?.type === 'text' && typeof source.data === 'string') {
    const mediaType = safeMediaType(source.media_type) ?? 'text/plain';
    return { ...base, mediaType, source: 'text', bytes: new TextEncoder().encode(source.data).length };
  }
  if (source?.type === 'content') return { ...base, mediaType: null, source: 'content', bytes: null };
  return { ...base, mediaType: null, source: remote(source), bytes: null };
}

function openaiImage(url: unknown, fileId: unknown): Found {
  const data = typeof url === 'string' ? dataUrl(url) : null;
  const base = { kind: 'image' as const, tokens: OPENAI_IMAGE_TOKENS, caption: null };
  if (data) return { ...base, mediaType: data.mediaType, source: 'base64', bytes: data.bytes };
  const source = typeof url === 'string' ? 'url' : typeof fileId === 'string' ? 'file' : 'url';
  return { ...base, mediaType: null, source, bytes: null };
}

function openaiFile(file: Rec, pdfPages: PdfPageCounter): Found {
  const name = stringOr(file.filename);
  const caption = name ? captionOf(name) : null;
  const data = typeof file.file_data === 'string' ? dataUrl(file.file_data) : null;
  const pdfByName = name?.toLowerCase().endsWith('.pdf') ? 'application/pdf' : null;
  if (data) {
    const mediaType = data.mediaType ?? pdfByName;
    const payload = String(file.file_data).slice(String(file.file_data).indexOf(',') + 1);
    const tokens =
      mediaType === 'application/pdf'
        ? documentTokens({ type: 'base64', data: payload }, IMAGE_TIERS.standard, pdfPages)
        : pdfPageTokens();
    return { kind: 'document', mediaType, source: 'base64', bytes: data.bytes, tokens, caption };
  }
  const source = typeof file.file_url === 'string' ? 'url' : 'file';
  return { kind: 'document', mediaType: pdfByName, source, bytes: null, tokens: pdfPageTokens(), caption };
}

/**
 * A data URL's media type and decoded bytes; raw base64 (OpenAI's `file_data` may be bare) reads as
 * base64 of unknown type; null for any other string (a URL).
 */
function dataUrl(url: string): { mediaType: string | null; bytes: number } | null {
  const header = /^data:([^;,]*)((?:;[^;,]*)*),/.exec(url);
  if (header) {
    const payload = url.slice(header[0].length);
    const base64 = /;base64/i.test(header[2] ?? '');
    const bytes = base64 ? decodedByteLength(payload) : new TextEncoder().encode(payload).length;
    return { mediaType: safeMediaType(header[1]), bytes };
  }
  if (/^[A-Za-z0-9+/=\s]+$/.test(url) && !/^\w+:/.test(url))
    return { mediaType: null, bytes: decodedByteLength(url) };
  return null;
}

function remote(source: Rec | null): MediaSource {
  return source?.type === 'file' ? 'file' : 'url';
}

/** Text as one clipped line, or null when blank. */
function captionOf(text: string): string | null {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return null;
  if (line.length <= CAPTION_CHARS) return line;
  // Never half a surrogate pair: the checkpoint is stored as JSON text.
  const end = isHighSurrogate(line.charCodeAt(CAPTION_CHARS - 2)) ? CAPTION_CHARS - 2 : CAPTION_CHARS - 1;
  return `${line.slice(0, end)}…`;
}

function stringOr(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function asRecord(value: unknown): Rec | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Rec) : null;
}
