/**
 * Where a request body stops being UTF-8. The API decodes bodies with a fatal decoder (a malformed
 * byte is refused, never replaced by U+FFFD and stored); when it fails, this scan finds the first
 * malformed sequence, so the answer can name its offset. Pure: it runs on the event loop and in the
 * API's worker threads.
 */

/** A malformed sequence: the offset of its first byte, and that byte. */
export interface Utf8Error {
  offset: number;
  byte: number;
}

/**
 * The first malformed UTF-8 sequence of `bytes`, or null when they are well-formed. The rules are
 * the WHATWG Encoding Standard's UTF-8 decoder, which `TextDecoder` follows: no overlong form, no
 * encoded surrogate (U+D800..U+DFFF), nothing past U+10FFFF, no sequence cut short.
 */
export function firstInvalidUtf8(bytes: Uint8Array): Utf8Error | null {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const length = sequenceLength(bytes, i);
    if (length === 0) return { offset: i, byte: lead };
    i += length;
  }
  return null;
}

/** The length of the well-formed multi-byte sequence at `at`, 0 when it is malformed. */
function sequenceLength(bytes: Uint8Array, at: number): number {
  const lead = bytes[at] as number;
  // The allowed range of the second byte depends on the lead (Unicode Table 3-7); the others are 80..BF.
  let count: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) count = 1;
  else if (lead >= 0xe0 && lead <= 0xef) {
    count = 2;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    count = 3;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  for (let k = 1; k <= count; k++) {
    const next = bytes[at + k];
    if (next === undefined || next < low || next > high) return 0;
    low = 0x80;
    high = 0xbf;
  }
  return count + 1;
}
