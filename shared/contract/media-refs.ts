/**
 * The images and documents a stored message holds, as references: where they are (the message's
 * seq and their place in it), what they are (media type, bytes, estimated tokens) and what the
 * message says about them (a caption). A `summarize` compaction lists them in the checkpoint, so an
 * agent still knows what media left and can read it back (recall) by seq.
 *
 * This module holds what every format shares: the reference's shape, the caption rule, the
 * reading of a data URL, and the shape of an image held inline (`InlineImage`, what recall's MCP
 * server also returns as image content). Which parts of a stored message are media is each format's
 * (`SessionFormat.mediaOf` in `shared/formats/<format>/media.ts`), and callers ask the session's
 * format through the registry (`mediaRefsOf` in shared/formats/registry.ts). Session text is data:
 * a URL is counted, never fetched. Pure; never throws.
 */
import { decodedByteLength, type PdfPageCounter, safeMediaType } from './media-tokens.ts';
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

/** A media item as a format finds it in a stored message: a {@link MediaRef} but for where it is. */
export type MediaFound = Omit<MediaRef, 'seq' | 'index'>;

/** A JSON object of a stored message. */
export type MediaPart = Record<string, unknown>;

/**
 * How a format reads the parts (blocks) of a list for media: a part's media item (its `caption`
 * null when the part says nothing of it), a part's text (empty when it is no text part), and the
 * parts nested in a part, read as a list of their own (an Anthropic `tool_result`'s content).
 */
export interface PartMediaReader {
  media(part: MediaPart, pdfPages: PdfPageCounter): MediaFound | null;
  text(part: MediaPart): string;
  nested?(part: MediaPart): readonly unknown[] | null;
}

/**
 * The media of a list of parts, in order, each captioned by what its part says (a title, a file
 * name), else by the list's text parts joined and clipped ({@link captionOf}). Parts that are no
 * JSON object are skipped.
 */
export function mediaOfParts(
  parts: readonly unknown[],
  reader: PartMediaReader,
  pdfPages: PdfPageCounter,
): MediaFound[] {
  const records = parts.map(recordOf).filter((p): p is MediaPart => p !== null);
  const text = captionOf(
    records
      .map((p) => reader.text(p))
      .filter((t) => t !== '')
      .join(' '),
  );
  const out: MediaFound[] = [];
  for (const part of records) {
    const nested = reader.nested?.(part);
    if (nested) {
      out.push(...mediaOfParts(nested, reader, pdfPages));
      continue;
    }
    const found = reader.media(part, pdfPages);
    if (found) out.push({ ...found, caption: found.caption ?? text });
  }
  return out;
}

/**
 * A data URL's media type and decoded bytes; raw base64 (OpenAI's `file_data` may be bare) reads as
 * base64 of unknown type; null for any other string (a URL).
 */
export function dataUrlOf(url: string): { mediaType: string | null; bytes: number } | null {
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

/** An image's bytes as a message holds them: base64 (RFC 4648) and its media type. */
export interface InlineImage {
  data: string;
  mediaType: string;
}

/**
 * The image of a base64 data URL (`data:image/png;base64,…`), or null for any other string (a
 * URL, a data URL of another type or not in base64).
 */
export function inlineImageOfDataUrl(url: unknown): InlineImage | null {
  if (typeof url !== 'string') return null;
  const header = /^data:(image\/[^;,]+)((?:;[^;,]*)*),/i.exec(url);
  if (!header || !/;base64/i.test(header[2] ?? '')) return null;
  const mediaType = safeMediaType(header[1]);
  return mediaType ? { data: url.slice(header[0].length), mediaType } : null;
}

/** Text as one line of at most {@link CAPTION_CHARS} characters (`…` when clipped), or null when blank. */
export function captionOf(text: string): string | null {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return null;
  if (line.length <= CAPTION_CHARS) return line;
  // Never half a surrogate pair: the checkpoint is stored as JSON text.
  const end = isHighSurrogate(line.charCodeAt(CAPTION_CHARS - 2)) ? CAPTION_CHARS - 2 : CAPTION_CHARS - 1;
  return `${line.slice(0, end)}…`;
}

/** `value` when it is a string with something but white space in it, else null. */
export function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** `value` when it is a JSON object (no array), else null. */
export function recordOf(value: unknown): MediaPart | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as MediaPart) : null;
}
