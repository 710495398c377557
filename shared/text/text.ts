/** Text helpers of the extractive summarizer: sentences, clipping, cleaning list items. Pure. */
import { isHighSurrogate, isLowSurrogate } from '../contract/unicode.ts';

/** Sentences of a message's prose: code blocks, indented code and the `[thinking]` tag left out. */
export function sentences(text: string): string[] {
  const prose = text
    .replace(/^\[thinking\]\s*/, '')
    .replace(/```[\s\S]*?(?:```|$)/g, '\n')
    .split('\n')
    .filter((line) => !/^(?: {4}|\t)/.test(line))
    .map((line) => line.replace(/^\s*(?:[-*+>#]+|\d+[.)])\s+/, '').trim())
    .filter((line) => line.length > 0);
  return (
    prose
      // Chinese and Japanese end a sentence with 。！？ and no space after it.
      .flatMap((line) => line.split(/(?<=[.!?])\s+|(?<=[。！？])/))
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
  );
}

/** Whether a message is the agent's reasoning (`[thinking] ...`) rather than words to the user. */
export function isThinking(text: string): boolean {
  return text.startsWith('[thinking]');
}

/** The first line of `text`, whitespace collapsed. */
export function firstLine(text: string): string {
  return collapse(text.trim().split('\n')[0] ?? '');
}

/** `text` with runs of whitespace as one space, trimmed. */
export function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The key two items are duplicates under: whitespace collapsed, lower case. */
export function normalizeKey(text: string): string {
  return collapse(text).toLowerCase();
}

/**
 * A list item: one line, ANSI colours removed, control characters, bidirectional overrides and unpaired
 * surrogates as `?` (as in working-set paths), at most `max` characters.
 */
export function cleanItem(text: string, max: number): string {
  let out = '';
  const flat = collapse(stripAnsi(text));
  for (let i = 0; i < flat.length; i++) {
    const code = flat.charCodeAt(i);
    if (isHighSurrogate(code) && isLowSurrogate(flat.charCodeAt(i + 1))) {
      out += flat.slice(i, i + 2);
      i++;
    } else {
      out += isUnsafe(code) ? '?' : flat.charAt(i);
    }
  }
  return clipWords(out, max);
}

/** `text` if at most `max` characters, else cut at a word boundary (when one is near) and ended by `…`. */
export function clipWords(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  if (space > max * 0.6) cut = cut.slice(0, space);
  if (isHighSurrogate(cut.charCodeAt(cut.length - 1))) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** `text` without ANSI escape sequences (terminal colours). */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** `text` with regular-expression metacharacters escaped, to match it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The JSON object or array `text` holds, or undefined when it holds none. */
export function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether `value` is a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The index of the last item matching `predicate`, or -1. */
export function findLastIndex<T>(items: T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i] as T)) return i;
  return -1;
}

function isUnsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    isHighSurrogate(code) ||
    isLowSurrogate(code)
  );
}
