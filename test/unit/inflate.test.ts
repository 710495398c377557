/**
 * The zlib decoder the pure core reads PDF object streams with: whatever node:zlib encodes, at any
 * level, decodes to the same bytes; damaged input and output over the limit give null.
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { inflateZlib } from '../../shared/contract/inflate.ts';

describe('inflateZlib decodes what zlib encodes', () => {
  it.each([0, 1, 6, 9])('at level %i, text, random and repetitive data', (level) => {
    const inputs = [
      Buffer.from('<< /Type /Page /Parent 2 0 R >> '.repeat(500)),
      randomBytes(70_000),
      Buffer.concat([Buffer.alloc(40_000, 7), randomBytes(3), Buffer.alloc(300, 1)]),
      Buffer.alloc(0),
    ];
    for (const input of inputs) {
      const output = inflateZlib(deflateSync(input, { level }), 1 << 20);
      expect(output && Buffer.from(output).equals(input)).toBe(true);
    }
  });

  it('damaged or over-long output is null, never a throw', () => {
    const packed = deflateSync(Buffer.alloc(100_000, 65));
    expect(inflateZlib(packed, 1_000)).toBeNull();
    expect(inflateZlib(packed.subarray(0, packed.length / 2), 1 << 20)).toBeNull();
    for (let round = 0; round < 200; round++) {
      expect(() =>
        inflateZlib(Buffer.concat([Buffer.from([0x78, 0x9c]), randomBytes(round)]), 1 << 16),
      ).not.toThrow();
    }
  });
});
