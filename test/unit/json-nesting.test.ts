/**
 * The nesting rule counted on bytes as they arrive (shared/contract/json-nesting.ts): it finds the
 * same first level too many as the rule counted on the whole text, wherever the chunks are cut,
 * inside strings and escapes and multi-byte characters included.
 */
import { describe, expect, it } from 'vitest';
import { jsonDepthProblem, MAX_JSON_DEPTH } from '../../shared/contract/content-checks.ts';
import { JsonNestingScanner } from '../../shared/contract/json-nesting.ts';

const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** The offset `scanner` reports over `bytes` fed in chunks of `size` bytes. */
function scanned(bytes: Uint8Array, size: number, maxDepth = MAX_JSON_DEPTH): number | null {
  const scanner = new JsonNestingScanner(maxDepth);
  for (let at = 0; at < bytes.length; at += size) {
    const found = scanner.push(bytes.subarray(at, at + size));
    if (found !== null) return found;
  }
  return null;
}

describe('JsonNestingScanner', () => {
  it('accepts exactly the limit and refuses one level more at the byte of that level', () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    expect(scanned(encode(arrays(MAX_JSON_DEPTH)), 64 * 1024)).toBeNull();
    expect(scanned(encode(arrays(MAX_JSON_DEPTH + 1)), 64 * 1024)).toBe(MAX_JSON_DEPTH);
    expect(scanned(encode(`{"a":${arrays(1_000_000)}}`), 64 * 1024)).toBe(4 + MAX_JSON_DEPTH); // the object is level 1
  });

  it('counts offsets in bytes: characters of several bytes before the level move it', () => {
    const text = `{"naïve 🙂 ü": ${arrays(MAX_JSON_DEPTH)}}`;
    const bytes = new TextEncoder().encode(text);
    const found = scanned(bytes, 3);
    expect(found).not.toBeNull();
    expect(bytes[found as number]).toBe(0x5b);
    expect(new TextDecoder().decode(bytes.subarray(0, found as number))).toBe(
      `{"naïve 🙂 ü": ${'['.repeat(MAX_JSON_DEPTH - 1)}`,
    );
  });

  it('agrees with the rule on the whole text wherever the chunks are cut', () => {
    const documents = [
      JSON.stringify({ text: `${'['.repeat(300)} \\" ${'{'.repeat(300)} "`, n: [1, [2, [3]]] }),
      `["\\\\", ${arrays(MAX_JSON_DEPTH)}]`,
      `["\\\\\\"[[[[", ${arrays(MAX_JSON_DEPTH - 1)}]`,
      `["é\\u005b", {"k": ${arrays(MAX_JSON_DEPTH - 2)}}]`,
      JSON.stringify({ deep: JSON.parse(arrays(MAX_JSON_DEPTH - 1)), s: '}]]]' }),
    ];
    for (const text of documents) {
      const whole = jsonDepthProblem(text, 'body') !== null;
      const bytes = new TextEncoder().encode(text);
      for (const size of [1, 2, 3, 7, 64, bytes.length]) {
        expect({ text: text.slice(0, 40), size, refused: scanned(bytes, size) !== null }).toEqual({
          text: text.slice(0, 40),
          size,
          refused: whole,
        });
      }
    }
  });
});
