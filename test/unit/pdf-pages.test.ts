/**
 * The PDF page counter the edges hand to the token estimate (producer/media/pdf-pages.ts): the
 * core's page scan with node:zlib reading the compressed object streams. Whatever zlib writes, at
 * any level, is read; a damaged stream or one that decompresses past the limit adds no page and
 * never throws; and the estimate the producer stores counts the pages it reads.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { countPdfPages } from '../../producer/media/pdf-pages.ts';
import { contentFacts } from '../../shared/contract/blocks.ts';
import { pdfPageTokens } from '../../shared/contract/media-tokens.ts';
import { MESSAGE_OVERHEAD_TOKENS } from '../../shared/contract/tokens.ts';
import { packedPdf } from '../support/pdfs.ts';

describe('countPdfPages reads the pages packed in object streams', () => {
  // Level 0 stores the objects uncompressed, where the plain scan reads them too: not a packed file.
  it.each([1, 6, 9])('at zlib level %i', (level) => {
    expect(countPdfPages(packedPdf({ level }))).toBe(3);
  });

  it('a damaged stream adds no page, and never throws', () => {
    const halved = packedPdf({ damage: (packed) => packed.subarray(0, packed.length / 2) });
    expect(countPdfPages(halved)).toBe(0);
    for (let round = 0; round < 200; round++) {
      const noise = packedPdf({
        damage: () => Buffer.concat([Buffer.from([0x78, 0x9c]), randomBytes(round)]),
      });
      expect(() => countPdfPages(noise)).not.toThrow();
      expect(countPdfPages(noise)).toBe(0);
    }
  });

  it('a stream that decompresses past 16 MB is not read; one under it is', () => {
    expect(countPdfPages(packedPdf({ padding: 15 * 1024 * 1024 }))).toBe(3);
    expect(countPdfPages(packedPdf({ padding: 17 * 1024 * 1024 }))).toBe(0);
  });

  it("gives a message's facts the pages the core alone does not see", () => {
    const data = packedPdf().toString('base64');
    const content = [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data } }];
    expect(contentFacts(content, countPdfPages).tokenCount).toBe(
      3 * pdfPageTokens() + MESSAGE_OVERHEAD_TOKENS,
    );
    expect(contentFacts(content).tokenCount).toBe(pdfPageTokens() + MESSAGE_OVERHEAD_TOKENS);
    expect(contentFacts(content, countPdfPages).text).toContain('3 pages');
  });
});
