/**
 * The images and documents of a stored AI SDK message (./message.ts, its file data encoded as in
 * ./encoding.ts): its `file` parts and the files of a `tool-result`'s `content` output (V4 `file`,
 * V2 `media`, V3 `image-data`, `file-data`, `image-url`, `file-url`, `image-file-id`, `file-id`), as
 * media references (shared/contract/media-refs.ts). A file's kind is its media type's (`image/*` or
 * the bare `image` an image, any other a document); where it is comes from its `data`: base64 text
 * or `{ "$bytes" }` in the message, `{ "$url" }` at a URL, a V4 `reference` a provider's file, a V4
 * `text` the text itself. Its tokens are the row's estimate of it (./facts.ts). Captioned by its
 * `filename`, else by the text parts of its list. Pure.
 */
import {
  captionOf,
  type InlineImage,
  type MediaFound,
  type MediaPart,
  type MediaSource,
  mediaOfParts,
  nonBlank,
  type PartMediaReader,
  recordOf,
} from '../../contract/media-refs.ts';
import { decodedByteLength, type PdfPageCounter, safeMediaType } from '../../contract/media-tokens.ts';
import { type FileSource, fileTokens, outputMediaTokens, sourceOf } from './facts.ts';

/** A tool result's `content` items that hold a file's base64 text in `data` (V2, V3). */
const DATA_ITEMS: ReadonlySet<unknown> = new Set(['media', 'image-data', 'file-data']);
/** A tool result's `content` items of a file at a URL (V3). */
const URL_ITEMS: ReadonlySet<unknown> = new Set(['image-url', 'file-url']);
/** A tool result's `content` items of a provider's file (V3). */
const FILE_ID_ITEMS: ReadonlySet<unknown> = new Set(['image-file-id', 'file-id']);

const READER: PartMediaReader = {
  media(part, pdfPages) {
    if (part.type === 'file')
      return fileMedia(part, sourceOf(part.data), fileTokens({ ...part, type: 'file' }, pdfPages));
    const tokens = () => outputMediaTokens({ type: 'content', value: [part] }, pdfPages);
    if (DATA_ITEMS.has(part.type)) return fileMedia(part, { base64: String(part.data) }, tokens());
    if (URL_ITEMS.has(part.type)) return fileMedia(part, { url: String(part.url) }, tokens());
    if (FILE_ID_ITEMS.has(part.type)) return fileMedia(part, { reference: '' }, tokens());
    return null;
  },
  text: (part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''),
  nested(part) {
    const output = part.type === 'tool-result' ? recordOf(part.output) : null;
    return output?.type === 'content' && Array.isArray(output.value) ? output.value : null;
  },
};

/**
 * The base64 images of a stored message, in order: its `file` parts of an image type whose data is
 * in the message (base64 text, `{ $bytes }`, V4 `{ type: 'data' }`), and such files of a tool
 * result's `content` (V4 `file`, V2 `media`, V3 `image-data`).
 */
export function aiSdkImages(stored: unknown): InlineImage[] {
  const content = recordOf(stored)?.content;
  if (!Array.isArray(content)) return [];
  return content.flatMap((value): InlineImage[] => {
    const part = recordOf(value);
    const nested = part ? READER.nested?.(part) : null;
    const items = nested ?? [value];
    return items.flatMap((item) => {
      const image = inlineImage(recordOf(item));
      return image ? [image] : [];
    });
  });
}

/** A file part or item as an inline image, or null when it is none (or not in the message). */
function inlineImage(part: MediaPart | null): InlineImage | null {
  const mediaType = safeMediaType(part?.mediaType);
  if (!part || !mediaType?.toLowerCase().startsWith('image/')) return null;
  const source: FileSource | null =
    part.type === 'file'
      ? sourceOf(part.data)
      : DATA_ITEMS.has(part.type)
        ? { base64: String(part.data) }
        : null;
  return source && 'base64' in source ? { data: source.base64, mediaType } : null;
}

/** The media of a stored message, in order; none when its content is a string (a system message). */
export function aiSdkMedia(stored: unknown, pdfPages: PdfPageCounter): MediaFound[] {
  const content = recordOf(stored)?.content;
  return Array.isArray(content) ? mediaOfParts(content, READER, pdfPages) : [];
}

/** A file part or item as a media reference, from where its bytes are and its estimated tokens. */
function fileMedia(part: MediaPart, source: FileSource, tokens: number): MediaFound {
  const type = typeof part.mediaType === 'string' ? part.mediaType.toLowerCase() : '';
  const image = type === 'image' || type.startsWith('image/') || String(part.type).startsWith('image-');
  const name = nonBlank(part.filename);
  return {
    kind: image ? 'image' : 'document',
    mediaType: safeMediaType(part.mediaType),
    source: sourceKind(source),
    bytes:
      'base64' in source
        ? decodedByteLength(source.base64)
        : 'text' in source
          ? new TextEncoder().encode(source.text).length
          : null,
    tokens,
    caption: name ? captionOf(name) : null,
  };
}

function sourceKind(source: FileSource): MediaSource {
  if ('base64' in source) return 'base64';
  if ('text' in source) return 'text';
  if ('reference' in source) return 'file';
  return 'url';
}
