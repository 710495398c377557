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
