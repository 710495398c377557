/**
 * The image URLs OpenAI's APIs take in a message (a Chat Completions `image_url` part, a Responses
 * `input_image` part), checked before compactor stores one: OpenAI's images-vision guide
 * (https://developers.openai.com/api/docs/guides/images-vision, "Image input requirements") takes
 * "a fully qualified URL to an image file" or "a Base64-encoded data URL", of the supported file
 * types PNG, JPEG, WEBP and non-animated GIF. A data URL of another media type (`text/html`, a
 * PDF, which goes in a file part) or a URL of another scheme would fail every later request of
 * the session. Pure.
 */
import { z } from 'zod';
import { printable } from '../contract/errors.ts';

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
