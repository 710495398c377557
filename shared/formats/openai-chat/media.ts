/**
 * The images and documents of a stored Chat Completions message (the message object): its
 * `image_url` and `file` content parts, as media references (shared/contract/media-refs.ts),
 * captioned by a file's name, else by the message's `text` parts. Pure.
 */
import {
  type InlineImage,
  inlineImageOfDataUrl,
  type MediaFound,
  mediaOfParts,
  type PartMediaReader,
  recordOf,
} from '../../contract/media-refs.ts';
import type { PdfPageCounter } from '../../contract/media-tokens.ts';
import { openaiFileMedia, openaiImageMedia } from '../openai-media.ts';

const READER: PartMediaReader = {
  media(part, pdfPages) {
    if (part.type === 'image_url') return openaiImageMedia(recordOf(part.image_url)?.url, null);
    if (part.type === 'file') return openaiFileMedia(recordOf(part.file) ?? {}, pdfPages);
    return null;
  },
  text: (part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''),
};

/** The base64 images of a stored message's `image_url` parts (data URLs), in order. */
export function chatImages(stored: unknown): InlineImage[] {
  const content = recordOf(stored)?.content;
  if (!Array.isArray(content)) return [];
  return content.flatMap((value) => {
    const part = recordOf(value);
    const image = part?.type === 'image_url' ? inlineImageOfDataUrl(recordOf(part.image_url)?.url) : null;
    return image ? [image] : [];
  });
}

/** The media of a stored message, in order; none when its content is a string or it is no object. */
export function chatMedia(stored: unknown, pdfPages: PdfPageCounter): MediaFound[] {
  const content = recordOf(stored)?.content;
  return Array.isArray(content) ? mediaOfParts(content, READER, pdfPages) : [];
}
