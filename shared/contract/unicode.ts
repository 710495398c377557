/** UTF-16 helpers shared by the code that clips or sanitizes text. Pure. */

/** Whether a UTF-16 code unit is the first half of a surrogate pair (U+D800–U+DBFF). */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Whether a UTF-16 code unit is the second half of a surrogate pair (U+DC00–U+DFFF). */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
