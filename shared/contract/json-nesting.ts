/**
 * The nesting rule of content-checks.ts (at most `MAX_JSON_DEPTH` levels of objects and arrays),
 * counted on a JSON document's UTF-8 bytes as they arrive, so that a body nested too deep is refused
 * at its first level too many, before the rest of it is received, buffered or decoded. Pure: no I/O.
 *
 * Bytes, not characters: JSON's structural characters (`{ } [ ] " \`) are ASCII, and in UTF-8 every
 * byte of a multi-byte character is 0x80 or above, so a byte below 0x80 is always the character it
 * reads as (RFC 3629 §3), even in input that is not valid UTF-8 (which is refused later, by offset).
 * Malformed JSON is left to the parser, as {@link jsonDepthProblem} leaves it.
 */
import { MAX_JSON_DEPTH } from './content-checks.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Counts the nesting of a JSON document fed in chunks of bytes; one scanner per document.
 * A chunk may end anywhere: inside a string, after a backslash, between a character's bytes.
 */
export class JsonNestingScanner {
  readonly #maxDepth: number;
  #depth = 0;
  #inString = false;
  /** The previous byte, inside a string, was an unescaped backslash. */
  #escaped = false;
  /** Bytes fed before the current chunk. */
  #offset = 0;

  /** @param maxDepth the deepest nesting allowed (levels of objects and arrays). */
  constructor(maxDepth = MAX_JSON_DEPTH) {
    this.#maxDepth = maxDepth;
  }

  /**
   * Feeds the document's next bytes.
   * @returns the byte offset, counted from the document's first byte, of the first `{` or `[` that
   *   opens a level past `maxDepth`; null while the document nests no deeper.
   */
  push(chunk: Uint8Array): number | null {
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === BACKSLASH) escaped = true;
        else if (byte === QUOTE) inString = false;
      } else if (byte === QUOTE) inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        if (++depth > this.#maxDepth) return this.#offset + i;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#offset += chunk.length;
    return null;
  }
}

/** The sentence of a document refused at byte `offset` for its nesting (field named by the caller). */
export function nestingProblemAt(offset: number, maxDepth = MAX_JSON_DEPTH): string {
  return `nests deeper than ${maxDepth} levels of objects and arrays (the limit) at byte offset ${offset}`;
}
