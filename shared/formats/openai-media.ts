/**
 * The image URLs OpenAI's APIs take in a message (a Chat Completions `image_url` part, a Responses
 * `input_image` part), checked before compactor stores one: OpenAI's images-vision guide
 * (https://developers.openai.com/api/docs/guides/images-vision, "Image input requirements") takes
 * "a fully qualified URL to an image file" or "a Base64-encoded data URL", of the supported file
 * types PNG, JPEG, WEBP and non-animated GIF. A data URL of another media type (`text/html`, a
 * PDF, which goes in a file part) or a URL of another scheme would fail every later request of
 * the session. Also what both OpenAI formats read of an image or a file part as a media reference
 * (shared/contract/media-refs.ts). Pure.
 */
import { z } from 'zod';
import { printable } from '../contract/errors.ts';
import {
  captionOf,
  dataUrlOf,
  type MediaFound,
  type MediaPart,
  nonBlank,
  OPENAI_IMAGE_TOKENS,
} from '../contract/media-refs.ts';
import { documentTokens, IMAGE_TIERS, type PdfPageCounter, pdfPageTokens } from '../contract/media-tokens.ts';

/** Media types of an image data URL (the guide's PNG, JPEG, WEBP and GIF; `image/jpg` as JPEG's alias). */
export const OPENAI_IMAGE_MEDIA_TYPES: readonly string[] = [
  'image/png',
  'image/jpeg',
  'image/jpg',
  'image/webp',
  'image/gif',
];

/**
 * What is wrong with `url` as an image URL of an OpenAI message, or null: a data URL whose media
 * type is not an image type the API takes, or a URL that is neither `http(s)` nor `data`.
 * @returns a sentence for the field that holds the URL.
 */
export function imageUrlProblem(url: string): string | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') return null;
  if (scheme !== 'data') {
    return 'expected a fully qualified http(s) URL of the image or a base64 data URL (data:image/png;base64,…)';
  }
  const mediaType = /^data:([^;,]*)/i.exec(url)?.[1]?.trim().toLowerCase() ?? '';
  if (OPENAI_IMAGE_MEDIA_TYPES.includes(mediaType)) return null;
  return `a data URL of ${mediaType === '' ? 'no media type' : `"${printable(mediaType, 60)}"`} is no image OpenAI takes: expected image/png, image/jpeg, image/webp or image/gif`;
}

/** A message's image URL as a zod string: non-empty, then {@link imageUrlProblem}. */
export const imageUrlSchema = z
  .string()
  .min(1)
  .superRefine((url, ctx) => {
    const problem = imageUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/**
 * An OpenAI image part's media reference (a Chat Completions `image_url`'s URL, a Responses
 * `input_image`'s `image_url` or `file_id`): a data URL's type and bytes, else a URL or a provider
 * file; {@link OPENAI_IMAGE_TOKENS} either way.
 */
export function openaiImageMedia(url: unknown, fileId: unknown): MediaFound {
  const data = typeof url === 'string' ? dataUrlOf(url) : null;
  const base = { kind: 'image' as const, tokens: OPENAI_IMAGE_TOKENS, caption: null };
  if (data) return { ...base, mediaType: data.mediaType, source: 'base64', bytes: data.bytes };
  const source = typeof url === 'string' ? 'url' : typeof fileId === 'string' ? 'file' : 'url';
  return { ...base, mediaType: null, source, bytes: null };
}

/**
 * An OpenAI file's media reference (a Chat Completions `file` part's `file`, a Responses
 * `input_file` part): a document captioned by its `filename`, its bytes and type from a `file_data`
 * data URL (a `.pdf` name says PDF), else at a `file_url` or a provider file; tokens of a PDF by
 * its pages, of any other file one page's worth.
 */
export function openaiFileMedia(file: MediaPart, pdfPages: PdfPageCounter): MediaFound {
  const name = nonBlank(file.filename);
  const caption = name ? captionOf(name) : null;
  const data = typeof file.file_data === 'string' ? dataUrlOf(file.file_data) : null;
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
