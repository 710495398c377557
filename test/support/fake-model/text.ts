/** Small text helpers of the fake model. Pure. */
import { collapse } from '../../../shared/text/text.ts';

/** `text` collapsed and cut to at most `max` characters, at a word when one is near, with `…`. */
export function clip(text: string, max: number): string {
  const flat = collapse(text);
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

/** The first non-blank line, trimmed ('' when none). */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? ''
  );
}

/**
 * The sentences of a prose message: code blocks and indented code left out, list markers and
 * emphasis taken off, split at `.`, `!`, `?` followed by a capital or a quote; each with at least
 * three words.
 */
export function sentences(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?(?:```|$)/g, '\n');
  return prose
    .split('\n')
    .filter((line) => !/^(?: {4}|\t)/.test(line))
    .map((line) =>
      line
        .replace(/^\s*(?:[-*•]|\d+[.)]|#+)\s+/, '')
        .replace(/\*\*/g, '')
        .trim(),
    )
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[A-Z"'`([])/))
    .map((s) => s.trim())
    .filter((s) => s.split(/\s+/).length >= 3);
}
