/** UTF-16 helpers shared by the code that clips or sanitizes text. Pure. */

/** Whether a UTF-16 code unit is the first half of a surrogate pair (U+D800–U+DBFF). */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Whether a UTF-16 code unit is the second half of a surrogate pair (U+DC00–U+DFFF). */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** `String.prototype.isWellFormed` (ES2024, in Node 20): no unpaired surrogate. */
type MaybeWellFormed = { isWellFormed(): boolean };

/**
 * `text` as Postgres `text` can store it: NUL characters and unpaired surrogates become U+FFFD
 * (the replacement character); everything else is unchanged.
 */
export function storableText(text: string): string {
  // Native checks first: most texts hold neither, and a 10 MB one then costs a millisecond, not a loop.
  if (text.indexOf('\u0000') === -1 && (text as unknown as MaybeWellFormed).isWellFormed()) return text;
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let bad = code === 0;
    if (isHighSurrogate(code)) {
      if (i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
        i++;
        continue;
      }
      bad = true;
    } else if (isLowSurrogate(code)) {
      bad = true;
    }
    if (bad) {
      out += `${text.slice(from, i)}\ufffd`;
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A character Postgres cannot store (see {@link unstorableAt}). */
export interface UnstorableCharacter {
  /** Where it is, in UTF-16 code units from the start. */
  index: number;
  /** `U+0000` or the surrogate's code, e.g. `U+D83D`. */
  code: string;
  /** What it is, in words. */
  what: 'a NUL character' | 'an unpaired surrogate';
}

/**
 * The first character of `text` that neither Postgres `text` nor `jsonb` can store: NUL (U+0000)
 * or a surrogate half without its partner (which is no Unicode character and has no UTF-8 form).
 * @returns null when every character can be stored.
 */
export function unstorableAt(text: string): UnstorableCharacter | null {
  // Native checks first, as in storableText: a 10 MB text without either costs no loop.
  if (text.indexOf('\u0000') === -1 && (text as unknown as MaybeWellFormed).isWellFormed()) return null;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0) return { index: i, code: 'U+0000', what: 'a NUL character' };
    if (code < 0xd800 || code > 0xdfff) continue;
    if (isHighSurrogate(code) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      i++;
      continue;
    }
    return { index: i, code: `U+${code.toString(16).toUpperCase()}`, what: 'an unpaired surrogate' };
  }
  return null;
}
