/**
 * Input tokens of Messages API `image` and `document` content blocks, estimated by the rules
 * Anthropic documents, never by the length of their base64 (a 3 MB screenshot is about 4 million
 * base64 characters, a million "tokens" by the 4-characters rule, but costs at most a few thousand).
 * Pure byte parsing with no dependencies (but the platform's `atob`); nothing here throws: input it
 * cannot read is priced at the documented maximum (images) or one page (documents), as each
 * function says. The pure core has no decompressor, so the pages a PDF packs in compressed object
 * streams are counted only by a {@link PdfPageCounter} that brings one: the edges pass
 * producer/media/pdf-pages.ts (`countPdfPages`, node:zlib) to the functions that take a counter.
 *
 * Sources, as read on 2026-11-23 (platform.claude.com/docs/en/build-with-claude/...):
 * - "Images and vision" (`vision`), section "Resolution and token cost": Claude sees an image as
 *   28×28-pixel patches, one visual token each, so an image costs `⌈width / 28⌉ × ⌈height / 28⌉`
 *   tokens; each model has a resolution tier, a maximum long edge and a maximum of visual tokens
 *   (standard: 1568 px and 1568 tokens, "all other models"; high-resolution: 2576 px and 4784 tokens,
 *   for the models the page lists, such as Claude Opus 4.7 and 4.8), and larger images are
 *   downscaled first. The page's examples: 200×200 → 64, 1000×1000 → 1296, 1920×1080 → 1560
 *   (standard) or 2691 (high-resolution). The older rule of that page, `width × height / 750` with a
 *   1568 px / ~1.15 megapixel limit (~1,600 tokens at most), is no longer documented there.
 * - "Coordinates and bounding boxes" (`vision-coordinates`), section "How Claude resizes and pads
 *   images": the exact downscaling rule and its reference implementation, ported in {@link resizedSize}.
 * - "PDF support" (`pdf-support`), section "Estimate your costs": each page costs its extracted
 *   text, "typically 1,500 to 3,000 tokens per page depending on content density", plus an image of
 *   the page priced by the vision rules; pages are rasterized server-side at dimensions the caller
 *   does not control.
 */
import { estimateTextTokens } from './tokens.ts';

/** A model's image limits: its longest allowed edge (px) and its visual-token budget (tokens). */
export interface ImageTier {
  maxEdge: number;
  maxTokens: number;
}

/**
 * The two resolution tiers of "Images and vision" (read 2026-11-23): `standard` for "all other
 * models", `high` for the models the page lists as high-resolution (then Claude Opus 4.7 and 4.8,
 * Sonnet 5, Fable 5 and Mythos 5). Callers that know their model pick its tier.
 */
export const IMAGE_TIERS = {
  standard: { maxEdge: 1568, maxTokens: 1568 },
  high: { maxEdge: 2576, maxTokens: 4784 },
} as const satisfies Record<string, ImageTier>;

/** Pixels per side of one visual token ("Images and vision": a 28×28-pixel patch). */
export const PATCH_PX = 28;

/**
 * Tokens of a PDF page's extracted text: 2,250, the middle of the 1,500–3,000 tokens per page that
 * "PDF support" (section "Estimate your costs", read 2026-11-23) gives as typical.
 */
export const PDF_TEXT_TOKENS_PER_PAGE = 2_250;

/** Width and height in pixels. */
export interface ImageSize {
  width: number;
  height: number;
}

/**
 * Visual tokens of an image of `width` × `height` pixels as sent, before any downscaling:
 * `⌈width / 28⌉ × ⌈height / 28⌉` ("Images and vision", "Resolution and token cost", read
 * 2026-11-23). Not a size in pixels: 0 for a non-positive side.
 */
export function visualTokens(width: number, height: number): number {
  if (!(width > 0 && height > 0)) return 0;
  return Math.ceil(width / PATCH_PX) * Math.ceil(height / PATCH_PX);
}

/**
 * The size (px) Claude downscales a `width` × `height` image to before counting its tokens: the
 * largest aspect-preserving size whose edges, padded to a multiple of 28, fit the tier's maximum edge
 * and whose visual tokens fit its budget; an image within both is unchanged. A port of the reference
 * implementation in "Coordinates and bounding boxes", "How Claude resizes and pads images" (read
 * 2026-11-23), down to its round-half-to-even of the short edge. Dimensions must be positive integers.
 */
export function resizedSize(
  width: number,
  height: number,
  tier: ImageTier = IMAGE_TIERS.standard,
): ImageSize {
  const fits = (w: number, h: number) =>
    Math.ceil(w / PATCH_PX) * PATCH_PX <= tier.maxEdge &&
    Math.ceil(h / PATCH_PX) * PATCH_PX <= tier.maxEdge &&
    visualTokens(w, h) <= tier.maxTokens;
  if (fits(width, height)) return { width, height };
  if (height > width) {
    const turned = resizedSize(height, width, tier);
    return { width: turned.height, height: turned.width };
  }
  // Binary search along the long edge for the largest aspect-preserving size that fits.
  const aspect = width / height;
  const shortEdge = (long: number) => Math.max(roundHalfEven(long / aspect), 1);
  let lo = 1; // always fits
  let hi = width; // never fits
  while (lo + 1 < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid, shortEdge(mid))) lo = mid;
    else hi = mid;
  }
  return { width: lo, height: shortEdge(lo) };
}

/**
 * Input tokens of an image of `width` × `height` pixels on `tier`: downscaled by {@link resizedSize}
 * if it is over the tier's limits, then `⌈w / 28⌉ × ⌈h / 28⌉` ("Images and vision" and
 * "Coordinates and bounding boxes", read 2026-11-23). At most `tier.maxTokens`; a size that is not
 * two positive numbers costs `tier.maxTokens`, the documented maximum.
 */
export function imageTokensForSize(
  width: number,
  height: number,
  tier: ImageTier = IMAGE_TIERS.standard,
): number {
  if (!(Number.isFinite(width) && Number.isFinite(height) && width >= 1 && height >= 1))
    return tier.maxTokens;
  const size = resizedSize(Math.floor(width), Math.floor(height), tier);
  return Math.min(visualTokens(size.width, size.height), tier.maxTokens);
}

/**
 * The pixel size an image file declares in its header, or null when the bytes are not a PNG, JPEG,
 * GIF or WebP header this can read (the four formats "Images and vision" lists). Reads only the
 * header: PNG's IHDR, JPEG's first SOFn frame header (walking the segments before it), GIF's logical
 * screen, WebP's VP8, VP8L or VP8X chunk. `bytes` may be just a prefix of the file. Never throws.
 */
export function imageDimensions(bytes: Uint8Array): ImageSize | null {
  return readDimensions((i) => (i >= 0 && i < bytes.length ? (bytes[i] as number) : -1));
}

/**
 * Input tokens of an image block's `source` (`{ type: 'base64', media_type, data }`,
 * `{ type: 'url', url }` or `{ type: 'file', file_id }`), on `tier` (default standard).
 * A base64 image costs {@link imageTokensForSize} of the size its header declares; only the header
 * bytes are decoded, so the cost does not depend on the length of `data`. A url or file image, or
 * one whose header this cannot read, costs `tier.maxTokens` (1568 on the standard tier), the most
 * any image costs by "Images and vision" (read 2026-11-23). Never throws.
 */
export function imageTokens(source: unknown, tier: ImageTier = IMAGE_TIERS.standard): number {
  const size = base64ImageSize(source);
  return size ? imageTokensForSize(size.width, size.height, tier) : tier.maxTokens;
}

/**
 * Input tokens of one PDF page on `tier`: {@link PDF_TEXT_TOKENS_PER_PAGE} (2,250) for its text plus
 * `tier.maxTokens` for its image ("PDF support", "Estimate your costs", read 2026-11-23: text, plus
 * the page as an image priced by the vision rules). The page image is counted at the tier's
 * maximum because the API rasterizes pages at dimensions the caller does not control, and a
 * full page at reading resolution is over the limits. 3,818 tokens on the standard tier.
 */
export function pdfPageTokens(tier: ImageTier = IMAGE_TIERS.standard): number {
  return PDF_TEXT_TOKENS_PER_PAGE + tier.maxTokens;
}

/** Pages of a PDF given its bytes; 0 when it cannot tell. Must never throw. */
export type PdfPageCounter = (pdf: Uint8Array) => number;

/**
 * A zlib stream (RFC 1950) decompressed, or null when it is damaged or would decompress to more
 * than `maxBytes` bytes. The pure core has none: the edges bring node:zlib's.
 */
export type Inflate = (data: Uint8Array, maxBytes: number) => Uint8Array | null;

/**
 * Pages of a PDF (its bytes): its page objects (`/Type /Page`, or `/Type/Page`, never `/Pages`),
 * each object number counted once so a page an incremental update rewrote is not counted twice,
 * whether written out or, when `inflate` is given, packed in a Flate-compressed object stream
 * (`/Type /ObjStm`, as PDF 1.5 writers such as pdfTeX do; at most 10,000 streams, 16 MB
 * decompressed each and 64 MB read and decompressed in all); when no page object is readable, the
 * page count of a linearized file's first dictionary (`/Linearized … /N n`); else 0. Without
 * `inflate` (the default {@link PdfPageCounter} of this module) the pages packed in object
 * streams are unseen. Never throws.
 */
export function pdfPageCount(bytes: Uint8Array, inflate?: Inflate): number {
  return pageCount(latin1(bytes), inflate);
}

/**
 * Input tokens of a document block's `source`, on `tier` (default standard), by "PDF support"
 * (read 2026-11-23) and the 4-characters rule of `tokens.ts`:
 * - `{ type: 'text', data }` (plain text): `⌈characters / 4⌉`;
 * - `{ type: 'content', content }` (a string, or text and image blocks): the sum of its texts'
 *   `⌈characters / 4⌉` and its images' {@link imageTokens};
 * - `{ type: 'base64', data }` (a PDF): its pages by `pdfPages` (default {@link pdfPageCount}
 *   without a decompressor) × {@link pdfPageTokens} (3,818 per page on the standard tier); a PDF
 *   whose pages cannot be counted costs one page;
 * - `{ type: 'url' }`, `{ type: 'file' }` or anything unreadable: one page, {@link pdfPageTokens}:
 *   the page count is unknown without fetching the file, and the docs price documents per page.
 * Never throws.
 */
export function documentTokens(
  source: unknown,
  tier: ImageTier = IMAGE_TIERS.standard,
  pdfPages: PdfPageCounter = pdfPageCount,
): number {
  const s = asRecord(source);
  if (s?.type === 'text' && typeof s.data === 'string') return estimateTextTokens(s.data);
  if (s?.type === 'content') return contentTokens(s.content, tier);
  if (s?.type === 'base64' && typeof s.data === 'string') {
    return Math.max(base64PdfPages(s.data, pdfPages), 1) * pdfPageTokens(tier);
  }
  return pdfPageTokens(tier);
}

/** The longest marker {@link describeMedia} returns, in characters. */
export const MEDIA_MARKER_MAX = 200;

/**
 * A short marker (at most {@link MEDIA_MARKER_MAX} characters) standing for an image or document
 * block in a plain-text rendering, e.g. `[image: image/png, 1024x768, 84 KB]`,
 * `[document: application/pdf, 3 pages, 120 KB]`, `[image: url https://…]`,
 * `[document: text/plain, 1200 chars]`. Sizes are the decoded bytes (base64 length × 3/4 less the
 * padding), never the base64; base64 and long URLs never appear (a data URL shows its header only).
 * A block that is neither gives `[media]`; one whose source is unreadable, its bare kind
 * (`[image]`, `[document]`). A PDF's pages are counted by `pdfPages` (default
 * {@link pdfPageCount} without a decompressor). Never throws.
 */
export function describeMedia(block: unknown, pdfPages: PdfPageCounter = pdfPageCount): string {
  const b = asRecord(block);
  const kind = b?.type === 'image' || b?.type === 'document' ? b.type : null;
  if (!kind || !b) return '[media]';
  const s = asRecord(b.source);
  const parts: string[] = [];
  if (kind === 'document' && typeof b.title === 'string' && b.title.trim() !== '') {
    parts.push(`"${clip(clean(b.title), 60)}"`);
  }
  if (s?.type === 'base64' && typeof s.data === 'string') {
    const mediaType = safeMediaType(s.media_type) ?? (kind === 'document' ? 'application/pdf' : null);
    if (mediaType) parts.push(mediaType);
    if (kind === 'image') {
      const size = base64ImageSize(s);
      if (size) parts.push(`${size.width}x${size.height}`);
    } else {
      const pages = base64PdfPages(s.data, pdfPages);
      if (pages > 0) parts.push(`${pages} page${pages === 1 ? '' : 's'}`);
    }
    parts.push(formatBytes(decodedByteLength(s.data)));
  } else if (s?.type === 'url' && typeof s.url === 'string') {
    parts.push(`url ${describeUrl(s.url)}`);
  } else if (s?.type === 'file' && typeof s.file_id === 'string') {
    parts.push(`file ${clip(clean(s.file_id), 80)}`);
  } else if (s?.type === 'text' && typeof s.data === 'string') {
    parts.push(safeMediaType(s.media_type) ?? 'text/plain', `${s.data.length} chars`);
  } else if (s?.type === 'content') {
    const count = Array.isArray(s.content) ? s.content.length : typeof s.content === 'string' ? 1 : 0;
    parts.push(`content, ${count} block${count === 1 ? '' : 's'}`);
  }
  const marker = parts.length > 0 ? `[${kind}: ${parts.join(', ')}]` : `[${kind}]`;
  return marker.length <= MEDIA_MARKER_MAX ? marker : `${marker.slice(0, MEDIA_MARKER_MAX - 2)}…]`;
}

/**
 * Decoded bytes of a base64 string: its base64 characters × 3/4, rounded down (which drops the
 * padding). Characters outside the alphabet (line breaks, a stray `data:` header) are not counted.
 */
export function decodedByteLength(base64: string): number {
  return Math.floor((cleanBase64(base64).length * 3) / 4);
}

// --- images: header parsing ------------------------------------------------------------------

/** Byte `i` of a file, or -1 past its end. */
type ByteAt = (i: number) => number;

function readDimensions(at: ByteAt): ImageSize | null {
  try {
    const size = png(at) ?? jpeg(at) ?? gif(at) ?? webp(at);
    return size && size.width > 0 && size.height > 0 ? size : null;
  } catch {
    return null;
  }
}

const matches = (at: ByteAt, offset: number, expected: readonly number[]) =>
  expected.every((byte, k) => at(offset + k) === byte);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
const u16be = (at: ByteAt, i: number) => (at(i) < 0 || at(i + 1) < 0 ? -1 : (at(i) << 8) | at(i + 1));
const u16le = (at: ByteAt, i: number) => (at(i) < 0 || at(i + 1) < 0 ? -1 : at(i) | (at(i + 1) << 8));
const u24le = (at: ByteAt, i: number) =>
  at(i) < 0 || at(i + 1) < 0 || at(i + 2) < 0 ? -1 : at(i) | (at(i + 1) << 8) | (at(i + 2) << 16);
const u32be = (at: ByteAt, i: number) => {
  const hi = u16be(at, i);
  const lo = u16be(at, i + 2);
  return hi < 0 || lo < 0 ? -1 : hi * 65_536 + lo;
};
const sized = (width: number, height: number): ImageSize | null =>
  width > 0 && height > 0 ? { width, height } : null;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** PNG: the signature, then the IHDR chunk (length, "IHDR", width, height; big-endian). */
function png(at: ByteAt): ImageSize | null {
  if (!matches(at, 0, PNG_SIGNATURE) || !matches(at, 12, ascii('IHDR'))) return null;
  return sized(u32be(at, 16), u32be(at, 20));
}

/** JPEG markers that start a frame header (SOF0–SOF15 but DHT, JPG and DAC). */
const JPEG_SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/** JPEG: SOI, then segments (FF marker, big-endian length) up to the first SOFn: P, Y, X. */
function jpeg(at: ByteAt): ImageSize | null {
  if (at(0) !== 0xff || at(1) !== 0xd8) return null;
  let i = 2;
  for (let segments = 0; segments < 1_000; segments++) {
    if (at(i) !== 0xff) return null;
    while (at(i) === 0xff) i++; // fill bytes
    const marker = at(i);
    i++;
    if (marker < 0 || marker === 0xd9 || marker === 0xda) return null; // end, or scan data before any frame
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue; // no length
    const length = u16be(at, i);
    if (length < 2) return null;
    if (JPEG_SOF.has(marker)) return sized(u16be(at, i + 5), u16be(at, i + 3));
    i += length;
  }
  return null;
}

/** GIF: "GIF87a" or "GIF89a", then the logical screen's width and height (little-endian). */
function gif(at: ByteAt): ImageSize | null {
  if (!matches(at, 0, ascii('GIF87a')) && !matches(at, 0, ascii('GIF89a'))) return null;
  return sized(u16le(at, 6), u16le(at, 8));
}

/** WebP: "RIFF", size, "WEBP", then a VP8 (lossy), VP8L (lossless) or VP8X (extended) chunk. */
function webp(at: ByteAt): ImageSize | null {
  if (!matches(at, 0, ascii('RIFF')) || !matches(at, 8, ascii('WEBP'))) return null;
  if (matches(at, 12, ascii('VP8 '))) {
    // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height.
    if (!matches(at, 23, [0x9d, 0x01, 0x2a])) return null;
    const w = u16le(at, 26);
    const h = u16le(at, 28);
    return w < 0 || h < 0 ? null : sized(w & 0x3fff, h & 0x3fff);
  }
  if (matches(at, 12, ascii('VP8L'))) {
    // Signature 0x2F, then width - 1 and height - 1 in 14 bits each, least significant bits first.
    if (at(20) !== 0x2f) return null;
    const [b1, b2, b3, b4] = [at(21), at(22), at(23), at(24)];
    if (b1 < 0 || b2 < 0 || b3 < 0 || b4 < 0) return null;
    const w = 1 + (((b2 & 0x3f) << 8) | b1);
    const h = 1 + (((b4 & 0x0f) << 10) | (b3 << 2) | ((b2 & 0xc0) >> 6));
    return sized(w, h);
  }
  if (matches(at, 12, ascii('VP8X'))) {
    // Flags (1 byte), reserved (3), then canvas width - 1 and height - 1 in 24 bits each.
    const w = u24le(at, 24);
    const h = u24le(at, 27);
    return w < 0 || h < 0 ? null : sized(w + 1, h + 1);
  }
  return null;
}

/** The size a base64 image source's header declares, decoding only the bytes the header needs. */
function base64ImageSize(source: unknown): ImageSize | null {
  const s = asRecord(source);
  if (s?.type !== 'base64' || typeof s.data !== 'string') return null;
  return readDimensions(base64Reader(s.data));
}

// --- base64 ----------------------------------------------------------------------------------

/** Sextet of each base64 character (standard and URL-safe alphabets); -1 for any other. */
const SEXTET = (() => {
  const table = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let k = 0; k < 64; k++) table[alphabet.charCodeAt(k)] = k;
  table['-'.charCodeAt(0)] = 62;
  table['_'.charCodeAt(0)] = 63;
  return table;
})();

const CLEAN_BASE64 = /^[A-Za-z0-9+/_-]*$/;

/** The base64 characters of `text`, without padding, line breaks or a `data:…,` header. */
function cleanBase64(text: string): string {
  let body = text.startsWith('data:') ? text.slice(text.indexOf(',') + 1) : text;
  while (body.endsWith('=')) body = body.slice(0, -1);
  return CLEAN_BASE64.test(body) ? body : body.replace(/[^A-Za-z0-9+/_-]/g, '');
}

/** A reader of the decoded bytes that decodes only the 4-character group holding each byte read. */
function base64Reader(text: string): ByteAt {
  const chars = cleanBase64(text);
  const length = Math.floor((chars.length * 3) / 4);
  return (i) => {
    if (!(i >= 0 && i < length)) return -1;
    const group = Math.floor(i / 3) * 4;
    let bits = 0;
    for (let k = 0; k < 4; k++) bits = (bits << 6) | Math.max(SEXTET[chars.charCodeAt(group + k)] ?? 0, 0);
    return (bits >> (16 - 8 * (i % 3))) & 0xff;
  };
}

/**
 * The decoded bytes of a base64 string (lenient: characters outside the alphabet are skipped;
 * URL-safe characters are read as their standard twins); empty if it cannot be decoded. Uses the
 * platform's `atob`, which is native and fast.
 */
function base64Bytes(text: string): Uint8Array {
  let chars = cleanBase64(text);
  if (/[-_]/.test(chars)) chars = chars.replace(/-/g, '+').replace(/_/g, '/');
  if (chars.length % 4 === 1) chars = chars.slice(0, -1);
  let binary: string;
  try {
    binary = atob(chars.padEnd(Math.ceil(chars.length / 4) * 4, '='));
  } catch {
    return new Uint8Array(0);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Pages of a base64 PDF by `pdfPages`; 0 when it cannot tell, or when the counter throws after all. */
function base64PdfPages(data: string, pdfPages: PdfPageCounter): number {
  try {
    const pages = pdfPages(base64Bytes(data));
    return Number.isInteger(pages) && pages > 0 ? pages : 0;
  } catch {
    return 0;
  }
}

// --- PDF -------------------------------------------------------------------------------------

/**
 * An object header (`12 0 obj`, capturing its numbers) or a page dictionary's type (`/Type /Page`,
 * spaces optional, not followed by a name character, so never `/Pages`). Bounded digit runs keep
 * the scan linear on any input.
 */
const PDF_PAGE_SCAN = /(?<!\d)(\d{1,10})\s+(\d{1,5})\s+obj\b|\/Type\s*\/Page(?=[\s\0()<>[\]{}/%]|$)/g;
const PDF_PAGE_TYPE = /\/Type\s*\/Page(?=[\s\0()<>[\]{}/%]|$)/;
/**
 * Limits on reading object streams: how many, how many bytes one may decompress to, and how many
 * bytes all may read and decompress to together.
 */
const OBJSTM_MAX_STREAMS = 10_000;
const OBJSTM_MAX_BYTES = 16 * 1024 * 1024;
const OBJSTM_TOTAL_MAX_BYTES = 64 * 1024 * 1024;
/** How far (characters) around `/ObjStm` its dictionary is looked for. */
const DICT_WINDOW = 1_024;

/**
 * The ids (`number 0`) of the page objects packed in the file's Flate-compressed object streams
 * (`<< /Type /ObjStm /N n /First f /Filter /FlateDecode … >> stream`): each stream starts with `n`
 * pairs of object number and offset, the objects from byte `f` on. Bounded work on any input.
 */
function compressedPageObjects(text: string, inflate: Inflate): string[] {
  const ids: string[] = [];
  let budget = OBJSTM_TOTAL_MAX_BYTES;
  let from = 0;
  let endstream = -1;
  for (let streams = 0; streams < OBJSTM_MAX_STREAMS && budget > 0; streams++) {
    const at = text.indexOf('/ObjStm', from);
    if (at < 0) break;
    from = at + 7;
    const before = text.slice(Math.max(0, at - DICT_WINDOW), at);
    const open = before.lastIndexOf('<<');
    if (open < 0 || before.includes('>>', open) || !/\/Type\s*$/.test(before.slice(-64))) continue;
    const close = /^\/ObjStm(?![^\s/<>[\]()%])[^<>]*>>\s*stream\r?\n/.exec(text.slice(at, at + DICT_WINDOW));
    if (!close) continue;
    const dict = before.slice(open) + close[0];
    if (!/\/Filter\s*\[?\s*\/FlateDecode\s*\]?/.test(dict) || /\/DecodeParms/.test(dict)) continue;
    const count = Number(/\/N\s+(\d+)/.exec(dict)?.[1] ?? Number.NaN);
    const first = Number(/\/First\s+(\d+)/.exec(dict)?.[1] ?? Number.NaN);
    if (!(count > 0 && first > 0)) continue;
    const start = at + close[0].length;
    const direct = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
    if (!direct && endstream < start) {
      const found = text.indexOf('endstream', start); // searched again only past the last one found
      endstream = found < 0 ? Number.POSITIVE_INFINITY : found;
    }
    const end = direct ? start + Number(direct[1]) : endstream;
    if (end <= start || end > text.length) continue;
    budget -= end - start; // what is read counts as well as what is written
    if (budget <= 0) break;
    const data = inflate(bytesOf(text, start, end), Math.min(OBJSTM_MAX_BYTES, budget));
    if (!data) continue;
    budget -= data.length;
    const body = latin1(data);
    const header = body.slice(0, first).trim().split(/\s+/).map(Number);
    for (let k = 0; k < count; k++) {
      const number = header[2 * k];
      const offset = header[2 * k + 1];
      if (number === undefined || offset === undefined || !Number.isInteger(number)) break;
      const next = header[2 * k + 3];
      const object = body.slice(first + offset, next === undefined ? undefined : first + next);
      if (PDF_PAGE_TYPE.test(object)) ids.push(`${number} 0`);
    }
  }
  return ids;
}

/** The page count of a PDF given as one character per byte; see {@link pdfPageCount}. */
function pageCount(text: string, inflate: Inflate | undefined): number {
  try {
    const pages = new Set<string>();
    let object = '';
    for (const match of text.matchAll(PDF_PAGE_SCAN)) {
      if (match[1] !== undefined) object = `${match[1]} ${match[2]}`;
      else pages.add(object === '' ? `@${match.index}` : object);
    }
    if (inflate) for (const id of compressedPageObjects(text, inflate)) pages.add(id);
    if (pages.size > 0) return pages.size;
    const linearized = /\/Linearized[^>]*?\/N\s+(\d+)/.exec(text.slice(0, 4096));
    return linearized ? Number(linearized[1]) : 0;
  } catch {
    return 0;
  }
}

/** The bytes of `text[start, end)`, a string of one character per byte. */
function bytesOf(text: string, start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start);
  for (let i = start; i < end; i++) out[i - start] = text.charCodeAt(i) & 0xff;
  return out;
}

/** Bytes as a string of the same length, one character per byte. */
function latin1(bytes: Uint8Array): string {
  const chunks: string[] = [];
  for (let i = 0; i < bytes.length; i += 8_192) {
    chunks.push(String.fromCharCode(...bytes.subarray(i, i + 8_192)));
  }
  return chunks.join('');
}

// --- small helpers ---------------------------------------------------------------------------

/** Tokens of a `content` document source: its texts by the 4-characters rule, its images. */
function contentTokens(content: unknown, tier: ImageTier): number {
  if (typeof content === 'string') return estimateTextTokens(content);
  if (!Array.isArray(content)) return pdfPageTokens(tier);
  let total = 0;
  for (const item of content) {
    const block = asRecord(item);
    if (block?.type === 'text' && typeof block.text === 'string') total += estimateTextTokens(block.text);
    else if (block?.type === 'image') total += imageTokens(block.source, tier);
  }
  return total;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Python's `round`: halves go to the even neighbour. */
function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff < 0.5) return floor;
  if (diff > 0.5) return floor + 1;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** Bytes for people: `512 B`, `48 KB`, `1.5 MB` (1 KB = 1,024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A media type if it looks like one (`type/subtype`), else null: never free text in a marker. */
export function safeMediaType(value: unknown): string | null {
  return typeof value === 'string' && /^[\w.+-]{1,40}\/[\w.+-]{1,60}$/.test(value) ? value : null;
}

/** A URL for a marker: a data URL shows only its header, any other is cut to 80 characters. */
function describeUrl(url: string): string {
  const text = clean(url);
  if (text.startsWith('data:')) {
    const comma = text.indexOf(',');
    return `${clip(comma < 0 ? text : text.slice(0, comma), 60)},…`;
  }
  return clip(text, 80);
}

/** One line, no brackets that would end the marker. */
function clean(text: string): string {
  return text.replace(/[\s[\]]+/g, ' ').trim();
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
