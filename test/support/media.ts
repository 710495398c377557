/**
 * Small media files for tests of media by reference: a PNG whose header declares its size (the
 * token estimate reads only the header) and a PDF of a given number of page objects.
 */
import { randomBytes } from 'node:crypto';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

/**
 * A PNG's signature and IHDR declaring `width` × `height`, then `trailing` random bytes: enough for
 * a header reader; its bytes are exactly 33 + `trailing`.
 */
export function pngOf(width: number, height: number, trailing = 0): Buffer {
  const ihdr = Buffer.concat([u32(width), u32(height), Buffer.from([8, 0, 0, 0, 0])]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    u32(13),
    Buffer.from('IHDR', 'latin1'),
    ihdr,
    u32(0),
    randomBytes(trailing),
  ]);
}

/** A PDF of `pages` page objects (uncompressed), as a page counter reads it. */
export function pdfOf(pages: number): Buffer {
  const objects = Array.from(
    { length: pages },
    (_, i) => `${i + 3} 0 obj\n<< /Type /Page /Parent 2 0 R >>\nendobj\n`,
  );
  return Buffer.from(
    `%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Count ${pages} >>\nendobj\n${objects.join('')}%%EOF\n`,
    'latin1',
  );
}
