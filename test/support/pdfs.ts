/** PDFs built byte by byte for the tests of page counting. */
import { deflateSync } from 'node:zlib';

/** Options of {@link packedPdf}. */
export interface PackedPdfOptions {
  /** zlib's compression level for the object stream (0–9); default zlib's own (6). */
  level?: number;
  /** The object stream's `/Length` value; default its byte length. `7 0 R` puts it in another object. */
  length?: (packed: Buffer) => string;
  /** Rewrites the compressed bytes before they are written (to damage them). */
  damage?: (packed: Buffer) => Buffer;
  /** Spaces after the last packed object, so the stream decompresses to this many more bytes. */
  padding?: number;
}

/**
 * A PDF 1.5 file of three pages whose page tree (`/Pages` and three `/Type /Page` objects, one
 * written `/Type/Page`) is packed in one Flate-compressed object stream, as pdfTeX and qpdf write
 * them: no page object is readable without decompressing.
 */
export function packedPdf(options: PackedPdfOptions = {}): Buffer {
  const objects = [
    '<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 >>',
    '<< /Type /Page /Parent 2 0 R >>',
    '<</Type/Page/Parent 2 0 R>>',
    '<< /Type /Page /Parent 2 0 R >>',
  ];
  const offsets = objects.map((_, k) => objects.slice(0, k).join('\n').length + (k > 0 ? 1 : 0));
  const head = `${offsets.map((offset, k) => `${k + 2} ${offset}`).join(' ')}\n`;
  const body = head + objects.join('\n') + ' '.repeat(options.padding ?? 0);
  const deflated = deflateSync(Buffer.from(body, 'latin1'), {
    ...(options.level === undefined ? {} : { level: options.level }),
  });
  const packed = options.damage ? options.damage(deflated) : deflated;
  const length = options.length ? options.length(packed) : String(packed.length);
  const dict = `<< /Type /ObjStm /N 4 /First ${head.length} /Filter /FlateDecode /Length ${length} >>`;
  return Buffer.concat([
    Buffer.from('%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n'),
    Buffer.from(`6 0 obj\n${dict}\nstream\n`),
    packed,
    Buffer.from('\nendstream\nendobj\n7 0 obj\n99\nendobj\n%%EOF\n'),
  ]);
}
