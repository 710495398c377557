/**
 * Pure text formatting for the command line: seq ranges, tables that fit a terminal, numbers,
 * and the "did you mean" suggestion; and the escaping every stored string goes through before it
 * reaches a terminal ({@link terminalText}, {@link jsonLine}). No I/O, so every rule is unit-tested.
 */
import { printable } from '../../shared/contract/errors.ts';

/**
 * Text as a terminal must show it, character for character: control characters (ANSI escapes,
 * newlines, C1 controls), invisible formatting characters (bidi overrides, zero-width) and unpaired
 * surrogates written out as `\u001b`, `\u202e`, ... Every id or stored string the CLI prints in
 * prose goes through it: ids are checked when they come in, but rows written by SQL or by older
 * releases may hold anything, and an escape sequence must never reach the terminal.
 */
export function terminalText(text: string): string {
  return printable(text, Number.POSITIVE_INFINITY);
}

/** Characters JSON.stringify leaves as they are but a terminal acts on or hides. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u2028\u2029\p{Cf}\p{Cs}]/gu;

/**
 * `value` as JSON (as `JSON.stringify(value, null, space)`) with the characters a terminal would
 * act on or hide, which JSON leaves raw (DEL, C1 controls, bidi and zero-width characters,
 * unpaired surrogates), escaped as `\uXXXX`: the same JSON to a parser, inert on a screen.
 */
export function jsonLine(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(UNSAFE_IN_JSON, (c) =>
    c
      .split('')
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
}

/**
 * Seqs as ranges: `[1, 2, 3, 5, 7, 8]` → `"1-3, 5, 7-8"`. Input need not be sorted; duplicates
 * count once. An empty list gives `""`.
 */
export function seqRanges(seqs: readonly number[]): string {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    const first = sorted[i] as number;
    let last = first;
    while (i + 1 < sorted.length && sorted[i + 1] === last + 1) last = sorted[++i] as number;
    parts.push(first === last ? String(first) : `${first}-${last}`);
    i++;
  }
  return parts.join(', ');
}

/**
 * Edit distance between two strings, counting an insertion, a deletion, a substitution or a swap
 * of two neighbours as one edit, so the usual typos ("histroy", "compat") are one edit away.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => (d[i] as number[])[j] as number;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(rows - 1, cols - 1);
}

/**
 * The candidate a mistyped `input` most likely meant, or undefined when none is close: one that
 * starts with `input` (at least two characters), or one within a third of its length in edits (at
 * least two). Ties go to the earlier candidate.
 */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  const lower = input.toLowerCase();
  if (lower.length >= 2) {
    const prefixed = candidates.find((c) => c.toLowerCase().startsWith(lower));
    if (prefixed) return prefixed;
  }
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(lower, name.toLowerCase());
    if (distance <= Math.max(2, Math.floor(name.length / 3)) && (!best || distance < best.distance))
      best = { name, distance };
  }
  return best?.name;
}

/** `text` cut to at most `max` characters, ending in `…` when cut. Counts code points. */
export function truncate(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  if (max <= 0) return '';
  return `${chars.slice(0, max - 1).join('')}…`;
}

/** One column of {@link renderTable}. */
export interface Column {
  header: string;
  /** Numbers read best right-aligned. Default left. */
  align?: 'left' | 'right';
  /**
   * The column that gives way when the table is wider than the terminal: cut with `…`, down to
   * `minWidth` (default the header's width). At most one column should flex.
   */
  flex?: boolean;
  minWidth?: number;
}

/** Spaces between two columns. */
const GAP = '  ';

/**
 * Renders rows under a header and a rule, columns padded to their widest cell. When the table is
 * wider than `width` (characters; `Infinity`: no limit), the flex column is cut with `…` to fit;
 * the other columns are never cut, so a very narrow terminal still wraps. Control characters in
 * cells (newlines, tabs, escapes) become spaces, so one row stays one line and a stored string
 * cannot move the cursor, and invisible formatting characters are written out
 * ({@link terminalText}). Trailing spaces are trimmed.
 * @returns the lines, without newlines.
 */
export function renderTable(columns: readonly Column[], rows: readonly string[][], width: number): string[] {
  const clean = rows.map((row) => columns.map((_, i) => terminalText(oneLine(row[i] ?? ''))));
  const widths = columns.map((c, i) =>
    Math.max(length(c.header), ...clean.map((row) => length(row[i] as string))),
  );
  const flex = columns.findIndex((c) => c.flex);
  if (flex >= 0 && Number.isFinite(width)) {
    const total = widths.reduce((sum, w) => sum + w, 0) + GAP.length * (columns.length - 1);
    const over = total - width;
    if (over > 0) {
      const column = columns[flex] as Column;
      const min = column.minWidth ?? length(column.header);
      widths[flex] = Math.max(min, (widths[flex] as number) - over);
    }
  }
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const w = widths[i] as number;
        const text = truncate(cell, w);
        const pad = ' '.repeat(w - length(text));
        return columns[i]?.align === 'right' ? pad + text : text + pad;
      })
      .join(GAP)
      .trimEnd();
  return [
    line(columns.map((c) => c.header)),
    line(widths.map((w) => '─'.repeat(w))),
    ...clean.map((row) => line(row)),
  ];
}

function length(text: string): number {
  return [...text].length;
}

function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
}

/** A whole number with thousands separators (`12,345`); null as `-`. */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en-US');
}

/** `before→after`, each with thousands separators; `-` when both are unknown. */
export function formatChange(before: number | null | undefined, after: number | null | undefined): string {
  if ((before === null || before === undefined) && (after === null || after === undefined)) return '-';
  return `${formatCount(before)}→${formatCount(after)}`;
}

/** US dollars to four decimals (`$0.0123`), enough for one summary's cost; null as `-`. */
export function formatUsd(usd: number | null | undefined): string {
  return usd === null || usd === undefined ? '-' : `$${usd.toFixed(4)}`;
}

/** A time as `YYYY-MM-DD HH:MM` in UTC (the column header says UTC); null as `-`. */
export function formatUtc(time: Date | null | undefined): string {
  if (!time) return '-';
  return time.toISOString().slice(0, 16).replace('T', ' ');
}
