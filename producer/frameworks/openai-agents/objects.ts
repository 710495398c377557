/**
 * Small helpers on plain JSON objects, shared by the two directions of the Agents SDK item mapping
 * (to-responses.ts, from-responses.ts). Pure.
 */

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** Whether a value is a plain object (not an array, not null). */
export const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` without `keys` (and without undefined values). */
export function without(value: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const [key, entry] of Object.entries(value)) {
    if (entry !== undefined && !keys.includes(key)) out[key] = entry;
  }
  return out;
}

/** `{ [key]: value }` when the value is defined, else nothing (so no key holds `undefined`). */
export const field = (key: string, value: unknown): Obj => (value === undefined ? {} : { [key]: value });
