/**
 * The PDF page counter the edges (the producer's append and context read, the summarizers) hand to
 * the token estimate: the pure core's page scan (shared/contract/media-tokens.ts, `pdfPageCount`)
 * given node:zlib to read the pages packed in Flate-compressed object streams, as PDF 1.5 writers
 * such as pdfTeX and qpdf write them. The pure core has no decompressor of its own, so without this
 * counter those pages are unseen and such a PDF is priced as one page.
 */
import { inflateSync } from 'node:zlib';
import { type PdfPageCounter, pdfPageCount } from '../../shared/contract/media-tokens.ts';

/**
 * Pages of a PDF (its bytes), object streams included; 0 when none can be read. Never throws.
 * See `pdfPageCount` for what is counted and the limits on what it decompresses.
 */
export const countPdfPages: PdfPageCounter = (pdf) => pdfPageCount(pdf, inflateZlib);

/**
 * A zlib stream (RFC 1950) decompressed by node:zlib, or null when it is damaged or would
 * decompress to more than `maxBytes` bytes (zlib stops there: `maxOutputLength`).
 */
function inflateZlib(data: Uint8Array, maxBytes: number): Uint8Array | null {
  try {
    return inflateSync(data, { maxOutputLength: maxBytes });
  } catch {
    return null;
  }
}
