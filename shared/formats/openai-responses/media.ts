/**
 * The images and documents of a stored Responses item: the `input_image` and `input_file` parts of
 * a message's `content` or of a call output's `output`, as media references
 * (shared/contract/media-refs.ts), captioned by a file's name, else by the list's `input_text` and
 * `output_text` parts. Pure.
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

/** Part types whose `text` captions the media of their list. */
const TEXT_PARTS: ReadonlySet<unknown> = new Set(['input_text', 'output_text']);

const READER: PartMediaReader = {
  media(part, pdfPages) {
    if (part.type === 'input_image') return openaiImageMedia(part.image_url, part.file_id);
    if (part.type === 'input_file') return openaiFileMedia(part, pdfPages);
    return null;
  },
  text: (part) => (TEXT_PARTS.has(part.type) && typeof part.text === 'string' ? part.text : ''),
};

/** The base64 images of a stored item's `input_image` parts (data URLs), in order. */
export function responsesImages(stored: unknown): InlineImage[] {
  return partsOf(stored).flatMap((value) => {
    const part = recordOf(value);
    const image = part?.type === 'input_image' ? inlineImageOfDataUrl(part.image_url) : null;
    return image ? [image] : [];
  });
}

/** A message's `content` or a call output's `output`, when a list of parts. */
function partsOf(stored: unknown): readonly unknown[] {
  const item = recordOf(stored);
  return Array.isArray(item?.content) ? item.content : Array.isArray(item?.output) ? item.output : [];
}

/** The media of a stored item, in order; none when it holds no list of parts. */
export function responsesMedia(stored: unknown, pdfPages: PdfPageCounter): MediaFound[] {
  return mediaOfParts(partsOf(stored), READER, pdfPages);
}
