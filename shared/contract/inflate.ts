/**
 * A small synchronous decoder of zlib streams (RFC 1950 around RFC 1951 deflate), for reading the
 * compressed object streams of PDFs in the pure core, which imports no I/O module (so no
 * `node:zlib`). Stored, fixed-Huffman and dynamic-Huffman blocks; the Adler-32 trailer is not checked.
 * Bounded: output past `maxBytes` stops the decoding. Never throws: damaged input gives null.
 */

/** The decoded bytes of a zlib stream, or null when it is damaged or decodes to over `maxBytes`. */
export function inflateZlib(data: Uint8Array, maxBytes: number): Uint8Array | null {
  // CMF: method 8 (deflate); FLG: no preset dictionary; the two as a big-endian multiple of 31.
  const cmf = data[0] ?? 0;
  const flg = data[1] ?? 0;
  if ((cmf & 0x0f) !== 8 || (flg & 0x20) !== 0 || ((cmf << 8) | flg) % 31 !== 0) return null;
  try {
    return inflateRaw(data, 2, maxBytes);
  } catch {
    return null;
  }
}

/** Bases and extra bits of the length codes 257–285 and the distance codes 0–29 (RFC 1951 3.2.5). */
const LENGTH_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
  227, 258,
];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
  6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA = [
  0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
];
/** The order code-length code lengths are sent in. */
const CLEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** A canonical Huffman code: how many codes of each length, and the symbols in code order. */
interface Huffman {
  counts: Uint16Array;
  symbols: Uint16Array;
}

function huffman(lengths: ArrayLike<number>): Huffman {
  const counts = new Uint16Array(16);
  for (let i = 0; i < lengths.length; i++)
    counts[lengths[i] as number] = (counts[lengths[i] as number] as number) + 1;
  counts[0] = 0;
  const offsets = new Uint16Array(16);
  for (let len = 1; len < 16; len++)
    offsets[len] = (offsets[len - 1] as number) + (counts[len - 1] as number);
  const symbols = new Uint16Array(lengths.length);
  for (let i = 0; i < lengths.length; i++) {
    const len = lengths[i] as number;
    if (len === 0) continue;
    const at = offsets[len] as number;
    symbols[at] = i;
    offsets[len] = at + 1;
  }
  return { counts, symbols };
}

const FIXED_LITERALS = huffman([
  ...Array<number>(144).fill(8),
  ...Array<number>(112).fill(9),
  ...Array<number>(24).fill(7),
  ...Array<number>(8).fill(8),
]);
const FIXED_DISTANCES = huffman(Array<number>(30).fill(5));

class DeflateError extends Error {}

function inflateRaw(data: Uint8Array, start: number, maxBytes: number): Uint8Array {
  let pos = start;
  let bitBuf = 0;
  let bitCount = 0;
  let out = new Uint8Array(Math.min(Math.max(data.length * 4, 1024), maxBytes));
  let outLen = 0;

  const bits = (n: number): number => {
    while (bitCount < n) {
      if (pos >= data.length) throw new DeflateError('unexpected end of data');
      bitBuf |= (data[pos++] as number) << bitCount;
      bitCount += 8;
    }
    const value = bitBuf & ((1 << n) - 1);
    bitBuf >>>= n;
    bitCount -= n;
    return value;
  };
  const decode = (h: Huffman): number => {
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len < 16; len++) {
      code |= bits(1);
      const count = h.counts[len] as number;
      if (code - first < count) return h.symbols[index + code - first] as number;
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw new DeflateError('bad Huffman code');
  };
  const ensure = (extra: number) => {
    if (outLen + extra > maxBytes) throw new DeflateError('output over the limit');
    if (outLen + extra <= out.length) return;
    const grown = new Uint8Array(Math.min(Math.max(out.length * 2, outLen + extra), maxBytes));
    grown.set(out.subarray(0, outLen));
    out = grown;
  };

  let last = 0;
  while (!last) {
    last = bits(1);
    const type = bits(2);
    if (type === 0) {
      bitBuf = 0;
      bitCount = 0;
      const len = (data[pos] ?? 0) | ((data[pos + 1] ?? 0) << 8);
      const nlen = (data[pos + 2] ?? 0) | ((data[pos + 3] ?? 0) << 8);
      if (pos + 4 + len > data.length || (len ^ 0xffff) !== nlen) throw new DeflateError('bad stored block');
      ensure(len);
      out.set(data.subarray(pos + 4, pos + 4 + len), outLen);
      outLen += len;
      pos += 4 + len;
      continue;
    }
    let literals = FIXED_LITERALS;
    let distances = FIXED_DISTANCES;
    if (type === 2) {
      const hlit = bits(5) + 257;
      const hdist = bits(5) + 1;
      const hclen = bits(4) + 4;
      const clens = new Uint8Array(19);
      for (let i = 0; i < hclen; i++) clens[CLEN_ORDER[i] as number] = bits(3);
      const clenCode = huffman(clens);
      const lengths = new Uint8Array(hlit + hdist);
      for (let i = 0; i < hlit + hdist; ) {
        const sym = decode(clenCode);
        if (sym < 16) lengths[i++] = sym;
        else {
          const [value, repeat] =
            sym === 16
              ? [i > 0 ? (lengths[i - 1] as number) : -1, 3 + bits(2)]
              : [0, sym === 17 ? 3 + bits(3) : 11 + bits(7)];
          if (value < 0 || i + repeat > hlit + hdist) throw new DeflateError('bad code lengths');
          lengths.fill(value, i, i + repeat);
          i += repeat;
        }
      }
      literals = huffman(lengths.subarray(0, hlit));
      distances = huffman(lengths.subarray(hlit));
    } else if (type !== 1) {
      throw new DeflateError('bad block type');
    }
    for (;;) {
      const sym = decode(literals);
      if (sym < 256) {
        ensure(1);
        out[outLen++] = sym;
      } else if (sym === 256) {
        break;
      } else {
        const l = sym - 257;
        if (l >= 29) throw new DeflateError('bad length code');
        const length = (LENGTH_BASE[l] as number) + bits(LENGTH_EXTRA[l] as number);
        const d = decode(distances);
        if (d >= 30) throw new DeflateError('bad distance code');
        const distance = (DIST_BASE[d] as number) + bits(DIST_EXTRA[d] as number);
        if (distance > outLen) throw new DeflateError('distance before the start');
        ensure(length);
        for (let k = 0; k < length; k++, outLen++) out[outLen] = out[outLen - distance] as number;
      }
    }
  }
  return out.subarray(0, outLen);
}
