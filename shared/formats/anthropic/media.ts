/**
 * The images and documents of a stored Anthropic message (its content blocks): `image` and
 * `document` blocks, also those inside a `tool_result`'s content, as media references
 * (shared/contract/media-refs.ts). A document is captioned by its `title` or `context`, any other
 * item by the text blocks of its list. Pure; never throws on a well-formed list.
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
import {
  decodedByteLength,
  documentTokens,
  IMAGE_TIERS,
  imageTokens,
  type PdfPageCounter,
  safeMediaType,
} from '../../contract/media-tokens.ts';

const READER: PartMediaReader = {
  media(part, pdfPages) {
    if (part.type === 'image') return anthropicImage(recordOf(part.source));
    if (part.type === 'document') return anthropicDocument(part, pdfPages);
    return null;
  },
  text: (part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''),
  nested: (part) => (part.type === 'tool_result' && Array.isArray(part.content) ? part.content : null),
};

/** The base64 images of a message's stored content (a `tool_result`'s too), in order. */
export function anthropicImages(stored: unknown): InlineImage[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((value): InlineImage[] => {
    const block = recordOf(value);
    if (block?.type === 'tool_result') return anthropicImages(block.content);
    const source = block?.type === 'image' ? recordOf(block.source) : null;
    const mediaType = safeMediaType(source?.media_type);
    return source?.type === 'base64' && typeof source.data === 'string' && mediaType
      ? [{ data: source.data, mediaType }]
      : [];
  });
}

/** The media of a message's stored content, in order; none when it is a string (text only). */
export function anthropicMedia(stored: unknown, pdfPages: PdfPageCounter): MediaFound[] {
  return Array.isArray(stored) ? mediaOfParts(stored, READER, pdfPages) : [];
}

function anthropicImage(source: MediaPart | null): MediaFound {
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

function anthropicDocument(block: MediaPart, pdfPages: PdfPageCounter): MediaFound {
  const source = recordOf(block.source);
  const tokens = documentTokens(source, IMAGE_TIERS.standard, pdfPages);
  const caption = captionOf(nonBlank(block.title) ?? nonBlank(block.context) ?? '');
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

/** Where a media source that is not in the message is: a provider file, else a URL. */
function remote(source: MediaPart | null): MediaSource {
  return source?.type === 'file' ? 'file' : 'url';
}
