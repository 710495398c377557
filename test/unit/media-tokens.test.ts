/**
 * Tokens of image and document blocks by Anthropic's documented rules ("Images and vision",
 * "Coordinates and bounding boxes", "PDF support"), read from the bytes the block carries and never
 * from the length of its base64. The images and PDFs are built here byte by byte; the WebP headers
 * are the first bytes of files cwebp wrote, and the expected token counts are the docs' own table.
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { countPdfPages } from '../../producer/media/pdf-pages.ts';
import {
  decodedByteLength,
  describeMedia,
  documentTokens,
  IMAGE_TIERS,
  imageDimensions,
  imageTokens,
  imageTokensForSize,
  MEDIA_MARKER_MAX,
  pdfPageCount,
  pdfPageTokens,
  resizedSize,
} from '../../shared/contract/media-tokens.ts';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import { packedPdf } from '../support/pdfs.ts';

// --- building files -----------------------------------------------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer) => {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const chunk = (type: string, data: Buffer) => {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), body, u32(crc32(body))]);
};

/**
 * A PNG of `width` × `height` (8-bit greyscale). Its pixel data is real for small images; for
 * large ones only the header tells the size (the IDAT holds one row), which is all a header reader
 * may look at. `trailing` bytes of a private chunk make the file as large as a test needs.
 */
function png(width: number, height: number, trailing = 0): Buffer {
  const ihdr = Buffer.concat([u32(width), u32(height), Buffer.from([8, 0, 0, 0, 0])]);
  const rows = width * height <= 4096 ? height : 1;
  const raw = Buffer.alloc(rows * (width + 1)); // filter byte 0 and black pixels per row
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr)];
  if (trailing > 0) parts.push(chunk('prIv', randomBytes(trailing)));
  parts.push(chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

const segment = (marker: number, body: Buffer) =>
  Buffer.concat([Buffer.from([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff]), body]);

/** A JPEG's headers: SOI, JFIF, an optional Exif segment of `exif` bytes, DQT, SOFn, SOS, EOI. */
function jpeg(width: number, height: number, options: { sof?: number; exif?: number } = {}): Buffer {
  const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const dqt = Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)]);
  const sof = Buffer.from([8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]);
  const sos = Buffer.from([1, 1, 0, 0, 63, 0]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, jfif),
    ...(options.exif
      ? [segment(0xe1, Buffer.concat([Buffer.from('Exif\0\0'), randomBytes(options.exif)]))]
      : []),
    segment(0xdb, dqt),
    segment(options.sof ?? 0xc0, sof),
    segment(0xda, sos),
    randomBytes(64).map((b) => (b === 0xff ? 0 : b)),
    Buffer.from([0xff, 0xd9]),
  ]);
}

function gif(width: number, height: number): Buffer {
  const b = Buffer.alloc(13 + 1);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  b[13] = 0x3b; // trailer
  return b;
}

/** The first 30 bytes of three files cwebp wrote from a 1023×767 PNG: lossy, lossless, with alpha. */
const CWEBP_1023x767 = {
  vp8: [
    0x52, 0x49, 0x46, 0x46, 0xc8, 0x05, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x20, 0xbc,
    0x05, 0x00, 0x00, 0xf0, 0xa8, 0x00, 0x9d, 0x01, 0x2a, 0xff, 0x03, 0xff, 0x02,
  ],
  vp8l: [
    0x52, 0x49, 0x46, 0x46, 0x42, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c, 0x35,
    0x00, 0x00, 0x00, 0x2f, 0xfe, 0x83, 0xbf, 0x00, 0x07, 0x10, 0xfd, 0x8f, 0xfe,
  ],
  vp8x: [
    0x52, 0x49, 0x46, 0x46, 0x7a, 0x0b, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x58, 0x0a,
    0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0xfe, 0x03, 0x00, 0xfe, 0x02, 0x00,
  ],
};

/** A WebP lossless (VP8L) header of `width` × `height`: 14 bits each of width - 1 and height - 1. */
function webpLossless(width: number, height: number): Buffer {
  const w = width - 1;
  const h = height - 1;
  const bits = [w & 0xff, ((w >> 8) & 0x3f) | ((h & 0x03) << 6), (h >> 2) & 0xff, (h >> 10) & 0x0f];
  const data = Buffer.from([0x2f, ...bits, 0, 0, 0]);
  return Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBPVP8L', 'latin1'), u32le(data.length), data]);
}

function u32le(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/** A PDF of the given objects (each `N 0 obj … endobj`), with a header and a trailer. */
function pdf(objects: string[], trailer = 'trailer\n<< /Root 1 0 R >>\n%%EOF\n'): Buffer {
  return Buffer.from(`%PDF-1.4\n%\xe2\xe3\xcf\xd3\n${objects.join('\n')}\n${trailer}`, 'latin1');
}

const TWO_PAGES = pdf([
  '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj',
  '2 0 obj\n<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>\nendobj',
  '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj',
  '4 0 obj\n<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>\nendobj',
]);

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const imageSource = (bytes: Uint8Array, mediaType = 'image/png') => ({
  type: 'base64',
  media_type: mediaType,
  data: b64(bytes),
});
const pdfSource = (bytes: Uint8Array) => ({
  type: 'base64',
  media_type: 'application/pdf',
  data: b64(bytes),
});

const STANDARD_PAGE = 2_250 + 1_568;

// --- tests --------------------------------------------------------------------------------------

describe('imageDimensions reads the size from the header', () => {
  it('PNG: a real 1×1 image and an IHDR claiming 1000×1000', () => {
    expect(imageDimensions(png(1, 1))).toEqual({ width: 1, height: 1 });
    expect(imageDimensions(png(1000, 1000))).toEqual({ width: 1000, height: 1000 });
  });

  it('JPEG: the first SOFn, baseline or progressive, behind any other segments', () => {
    expect(imageDimensions(jpeg(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageDimensions(jpeg(1023, 767, { sof: 0xc2, exif: 60_000 }))).toEqual({
      width: 1023,
      height: 767,
    });
  });

  it('GIF: the logical screen', () => {
    expect(imageDimensions(gif(301, 7))).toEqual({ width: 301, height: 7 });
  });

  it('WebP: lossy (VP8), lossless (VP8L) and extended (VP8X) files from cwebp', () => {
    for (const header of Object.values(CWEBP_1023x767)) {
      expect(imageDimensions(Uint8Array.from(header))).toEqual({ width: 1023, height: 767 });
    }
    expect(imageDimensions(webpLossless(16_384, 3))).toEqual({ width: 16_384, height: 3 });
  });

  it('anything else, or a header cut short, is null and never throws', () => {
    expect(imageDimensions(new Uint8Array())).toBeNull();
    expect(imageDimensions(Buffer.from('%PDF-1.4 not an image'))).toBeNull();
    expect(imageDimensions(png(1000, 1000).subarray(0, 20))).toBeNull();
    expect(imageDimensions(jpeg(640, 480).subarray(0, 30))).toBeNull();
    expect(imageDimensions(Uint8Array.from(CWEBP_1023x767.vp8.slice(0, 27)))).toBeNull();
    const files = [png(5, 5), jpeg(9, 9), gif(3, 3), Buffer.from(CWEBP_1023x767.vp8x)];
    for (let round = 0; round < 300; round++) {
      const file = files[round % files.length] as Buffer;
      const mangled = Buffer.from(file.subarray(0, 1 + (round % file.length)));
      const at = round % mangled.length;
      mangled[at] = (mangled[at] as number) ^ 0xff;
      expect(() => imageDimensions(mangled)).not.toThrow();
      expect(() => imageDimensions(randomBytes(round))).not.toThrow();
    }
  });
});

describe('image tokens follow "Images and vision": ⌈w/28⌉ × ⌈h/28⌉ after the tier downscale', () => {
  // The docs' table: size, standard-tier tokens, high-resolution-tier tokens.
  it.each([
    [200, 200, 64, 64],
    [1000, 1000, 1296, 1296],
    [1092, 1092, 1521, 1521],
    [1920, 1080, 1560, 2691],
    [2000, 1500, 1564, 3888],
    [3840, 2160, 1560, 4784],
  ])('%i×%i costs %i (standard) and %i (high resolution)', (w, h, standard, high) => {
    expect(imageTokensForSize(w, h)).toBe(standard);
    expect(imageTokensForSize(w, h, IMAGE_TIERS.high)).toBe(high);
    expect(imageTokensForSize(h, w)).toBe(standard);
  });

  it('downscales to the sizes the docs give', () => {
    expect(resizedSize(1920, 1080)).toEqual({ width: 1456, height: 819 });
    // The table prints 1269×952; the page's reference implementation gives 1270×952; both cost 1564.
    expect(resizedSize(2000, 1500)).toEqual({ width: 1270, height: 952 });
    expect(resizedSize(1075, 1520)).toEqual({ width: 924, height: 1307 }); // the A4 scan example
    expect(resizedSize(3840, 2160, IMAGE_TIERS.high)).toEqual({ width: 2576, height: 1449 });
    expect(resizedSize(1000, 1000)).toEqual({ width: 1000, height: 1000 });
  });

  it("rounds the short edge half to even, as the reference implementation's Python round does", () => {
    // 1345 / (2690 / 1793) = 896.5: rounded to 896 it fits (49 × 32 = 1568 patches); rounded up
    // to 897 it would not (49 × 33), and the search would stop at 1344×896, 1536 tokens.
    expect(resizedSize(2690, 1793)).toEqual({ width: 1345, height: 896 });
    expect(imageTokensForSize(2690, 1793)).toBe(1568);
  });

  it('a base64 PNG costs by its size: 1×1 is 1 token, 1000×1000 is 1296', () => {
    expect(imageTokens(imageSource(png(1, 1)))).toBe(1);
    expect(imageTokens(imageSource(png(1000, 1000)))).toBe(1296);
  });

  it('a 4000×3000 image is scaled down first, to what a 2000×1500 one costs', () => {
    const tokens = imageTokens(imageSource(png(4000, 3000)));
    expect(tokens).toBe(1564);
    expect(tokens).toBeLessThan(Math.ceil(4000 / 28) * Math.ceil(3000 / 28));
    // High resolution: 2212×1659 by the reference implementation, 79 × 60 patches.
    expect(imageTokens(imageSource(png(4000, 3000)), IMAGE_TIERS.high)).toBe(4740);
  });

  it("does not depend on the base64's length", () => {
    const small = imageSource(png(1000, 1000));
    const large = imageSource(png(1000, 1000, 3_000_000));
    expect(large.data.length).toBeGreaterThan(4_000_000);
    expect(imageTokens(large)).toBe(imageTokens(small));
    expect(imageTokens(large)).toBeLessThan(estimateTextTokens(large.data) / 500);
  });

  it('finds a JPEG frame header far into the file (after 80 000 base64 characters of Exif)', () => {
    const file = jpeg(1023, 767, { exif: 60_000 });
    const frameHeader = file.lastIndexOf(Buffer.from([0xff, 0xc0])); // the scan data has no 0xFF
    expect((frameHeader * 4) / 3).toBeGreaterThan(80_000);
    expect(imageTokens(imageSource(file, 'image/jpeg'))).toBe(37 * 28);
  });

  it('reads base64 with line breaks or a data: header', () => {
    const data = b64(gif(56, 56)).replace(/(.{4})/g, '$1\n');
    expect(imageTokens({ type: 'base64', media_type: 'image/gif', data })).toBe(4);
    expect(imageTokens({ type: 'base64', data: `data:image/gif;base64,${b64(gif(56, 56))}` })).toBe(4);
  });

  it('an image it cannot size costs the documented maximum of its tier', () => {
    const unknown = [
      { type: 'url', url: 'https://example.com/a.png' },
      { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' },
      { type: 'base64', media_type: 'image/png', data: b64(randomBytes(200)) },
      { type: 'base64', media_type: 'image/png', data: '!!!' },
      { type: 'base64' },
      null,
      'iVBORw0KGgo',
      42,
    ];
    for (const source of unknown) {
      expect(imageTokens(source)).toBe(1568);
      expect(imageTokens(source, IMAGE_TIERS.high)).toBe(4784);
    }
  });
});

describe('document tokens follow "PDF support": text plus an image per page', () => {
  it('plain text costs ⌈characters / 4⌉', () => {
    expect(documentTokens({ type: 'text', media_type: 'text/plain', data: 'x'.repeat(10) })).toBe(3);
  });

  it('content costs its texts and its images', () => {
    expect(documentTokens({ type: 'content', content: 'x'.repeat(8) })).toBe(2);
    const content = [
      { type: 'text', text: 'x'.repeat(40) },
      { type: 'image', source: imageSource(png(1000, 1000)) },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    ];
    expect(documentTokens({ type: 'content', content })).toBe(10 + 1296 + 1568);
  });

  it('a two-page PDF counts 2 pages, `/Type/Page` without a space included, `/Pages` not', () => {
    expect(pdfPageCount(TWO_PAGES)).toBe(2);
    expect(documentTokens(pdfSource(TWO_PAGES))).toBe(2 * STANDARD_PAGE);
    expect(documentTokens(pdfSource(TWO_PAGES), IMAGE_TIERS.high)).toBe(2 * (2_250 + 4_784));
    expect(pdfPageTokens()).toBe(STANDARD_PAGE);
  });

  it('a page an incremental update rewrote is one page', () => {
    const updated = Buffer.concat([
      TWO_PAGES,
      Buffer.from('4 0 obj\n<< /Type /Page /Parent 2 0 R /Rotate 90 >>\nendobj\ntrailer\n<< /Prev 9 >>\n'),
    ]);
    expect(pdfPageCount(updated)).toBe(2);
  });

  it('counts pages packed in a compressed object stream with the edge counter (node:zlib)', () => {
    const file = packedPdf();
    expect(file.includes('/Type /Page ')).toBe(false);
    expect(countPdfPages(file)).toBe(3);
    expect(documentTokens(pdfSource(file), IMAGE_TIERS.standard, countPdfPages)).toBe(3 * STANDARD_PAGE);
    expect(countPdfPages(packedPdf({ length: () => '7 0 R' }))).toBe(3); // the length in another object
  });

  it('without a decompressor the core does not see packed pages: one page, no page count shown', () => {
    const file = packedPdf();
    expect(pdfPageCount(file)).toBe(0);
    expect(documentTokens(pdfSource(file))).toBe(STANDARD_PAGE);
    expect(describeMedia({ type: 'document', source: pdfSource(file) })).toBe(
      `[document: application/pdf, ${file.length} B]`,
    );
    expect(describeMedia({ type: 'document', source: pdfSource(file) }, countPdfPages)).toBe(
      `[document: application/pdf, 3 pages, ${file.length} B]`,
    );
  });

  it('a counter that throws after all counts as one page', () => {
    const broken = () => {
      throw new Error('boom');
    };
    expect(documentTokens(pdfSource(TWO_PAGES), IMAGE_TIERS.standard, broken)).toBe(STANDARD_PAGE);
  });

  // The bound tells a linear scan (seconds on a loaded machine) from a quadratic one (hours on
  // these inputs); it is not a speed target, which lives in `npm run bench:regex`.
  it('finishes on pathological input', { timeout: 120_000 }, () => {
    const inputs = [
      '7'.repeat(2_000_000),
      '1 0 obj <<'.repeat(200_000),
      '<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >> stream\n'.repeat(50_000),
      `${'<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >> stream\n'.repeat(50_000)}endstream`,
      '<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length 3000000 >> stream\n'.repeat(40_000),
      `1 0 obj <</Type /Page${' '.repeat(1_000_000)}`,
    ];
    for (const input of inputs) expect(countPdfPages(Buffer.from(input))).toBeGreaterThanOrEqual(0);
  });

  it("falls back to a linearized file's page count", () => {
    const file = pdf(['1 0 obj\n<< /Linearized 1 /L 4000 /N 7 /T 3000 >>\nendobj']);
    expect(pdfPageCount(file)).toBe(7);
  });

  it('a PDF it cannot count, a url or a file costs one page', () => {
    for (const source of [
      pdfSource(Buffer.from('%PDF-1.7 nothing readable')),
      { type: 'base64', media_type: 'application/pdf', data: '@@@' },
      { type: 'url', url: 'https://example.com/report.pdf' },
      { type: 'file', file_id: 'file_abc' },
      { type: 'content', content: 7 },
      undefined,
    ]) {
      expect(documentTokens(source)).toBe(STANDARD_PAGE);
    }
  });
});

describe('describeMedia stands for a block in plain text', () => {
  it('an image: media type, pixel size and decoded size', () => {
    const file = png(1024, 768);
    const padded = png(1024, 768, 84 * 1024 - file.length - 12);
    expect(padded.length).toBe(84 * 1024);
    expect(describeMedia({ type: 'image', source: imageSource(padded) })).toBe(
      '[image: image/png, 1024x768, 84 KB]',
    );
  });

  it('a PDF: pages and decoded size; text and content documents', () => {
    expect(describeMedia({ type: 'document', source: pdfSource(TWO_PAGES) })).toBe(
      `[document: application/pdf, 2 pages, ${TWO_PAGES.length} B]`,
    );
    expect(
      describeMedia({ type: 'document', title: 'Q3 report', source: { type: 'text', data: 'x'.repeat(12) } }),
    ).toBe('[document: "Q3 report", text/plain, 12 chars]');
    expect(describeMedia({ type: 'document', source: { type: 'content', content: [{}, {}] } })).toBe(
      '[document: content, 2 blocks]',
    );
  });

  it('urls and file ids, long ones cut', () => {
    expect(describeMedia({ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } })).toBe(
      '[image: url https://example.com/a.png]',
    );
    const long = `https://example.com/${'a'.repeat(5_000)}.png`;
    const marker = describeMedia({ type: 'image', source: { type: 'url', url: long } });
    expect(marker.startsWith('[image: url https://example.com/aaa')).toBe(true);
    expect(marker.length).toBeLessThan(120);
    expect(describeMedia({ type: 'document', source: { type: 'file', file_id: 'file_abc' } })).toBe(
      '[document: file file_abc]',
    );
  });

  it('never contains base64, and stays under 200 characters', () => {
    const big = b64(png(1000, 1000, 200_000));
    const pdfData = b64(TWO_PAGES);
    const noise = b64(randomBytes(5_000));
    // Each block, and the base64 it carries.
    const blocks: Array<[unknown, string]> = [
      [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: big } }, big],
      [{ type: 'image', source: { type: 'url', url: `data:image/png;base64,${big}` } }, big],
      [{ type: 'image', source: { type: 'base64', media_type: big, data: big } }, big],
      [{ type: 'document', title: 'x'.repeat(500), source: { type: 'base64', data: pdfData } }, pdfData],
      [{ type: 'document', source: { type: 'base64', data: noise } }, noise],
    ];
    for (const [block, payload] of blocks) {
      const marker = describeMedia(block);
      expect(marker.length).toBeLessThanOrEqual(MEDIA_MARKER_MAX);
      for (let i = 0; i + 12 <= Math.min(payload.length, 4_000); i += 5) {
        expect(marker).not.toContain(payload.slice(i, i + 12));
      }
    }
    expect(
      describeMedia({ type: 'image', source: { type: 'url', url: `data:image/png;base64,${big}` } }),
    ).toBe('[image: url data:image/png;base64,…]');
  });

  it('anything else is [media] or the bare kind', () => {
    expect(describeMedia({ type: 'text', text: 'hi' })).toBe('[media]');
    expect(describeMedia(null)).toBe('[media]');
    expect(describeMedia({ type: 'image' })).toBe('[image]');
  });

  it('decoded sizes drop the padding', () => {
    expect(decodedByteLength('aGk=')).toBe(2);
    expect(decodedByteLength('aGk')).toBe(2);
    expect(decodedByteLength('aGVsbG8=')).toBe(5);
    expect(decodedByteLength('aGVs\nbG8=')).toBe(5);
  });
});
