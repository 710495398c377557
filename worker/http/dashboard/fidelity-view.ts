/**
 * A compaction's fidelity as the dashboard shows it: the score with its parts, and what the summary
 * lost (ledger `fidelity`, `fidelity_parts`, `lost`; shared/fidelity/score.ts). Pure; every item
 * is escaped (the ledger stores them sanitized, not HTML-safe).
 */
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import { escapeHtml, num } from './html.ts';

/** The kinds of lost items, in the order shown, with their titles. */
const LOST_KINDS = [
  ['instructions', 'user instructions'],
  ['errors', 'errors'],
  ['paths', 'paths'],
  ['commands', 'commands'],
] as const;

type Row = Pick<CompactionRow, 'fidelity' | 'fidelityParts' | 'lost'>;

/** The lost items of a row by kind, read defensively from its jsonb. */
function lostOf(row: Row): { lists: Array<[string, string[]]>; omitted: number } {
  const lost = (row.lost ?? {}) as Record<string, unknown>;
  const lists = LOST_KINDS.map(([kind, title]): [string, string[]] => {
    const items = lost[kind];
    return [title, Array.isArray(items) ? items.filter((i): i is string => typeof i === 'string') : []];
  });
  const omitted = typeof lost.omitted === 'number' ? lost.omitted : 0;
  return { lists, omitted };
}

/** `0.82 (paths 9/10, lastRequest 1/1)`, or `—` for a row without a scored summary. */
export function fidelityText(row: Row): string {
  if (row.fidelity === null || row.fidelity === undefined) return '—';
  const parts = (row.fidelityParts ?? {}) as Record<string, { total?: unknown; kept?: unknown }>;
  const shown = Object.entries(parts)
    .filter(([, p]) => typeof p?.total === 'number' && p.total > 0)
    .map(([name, p]) => `${escapeHtml(name)} ${num(Number(p.kept))}/${num(Number(p.total))}`);
  return `${Number(row.fidelity).toFixed(3)}${shown.length ? ` <span class="muted">(${shown.join(', ')})</span>` : ''}`;
}

/** The session page's cell: the score, and the lost items folded in a `<details>`. */
export function fidelityCell(row: Row): string {
  if (row.fidelity === null || row.fidelity === undefined) return '—';
  const { lists, omitted } = lostOf(row);
  const count = lists.reduce((n, [, items]) => n + items.length, 0) + omitted;
  const score = Number(row.fidelity).toFixed(2);
  if (count === 0) return `<span class="fidelity">${score}</span>`;
  return `<span class="fidelity">${score}</span><details class="lost"><summary>lost ${num(count)}</summary>${lostLists(lists, omitted)}</details>`;
}

/** The details page's section: every lost item, by kind. */
export function lostSection(row: Row): string {
  if (row.fidelity === null || row.fidelity === undefined)
    return '<p class="muted">none recorded (no summary was scored for this compaction)</p>';
  const { lists, omitted } = lostOf(row);
  if (lists.every(([, items]) => items.length === 0) && omitted === 0)
    return '<p class="muted">nothing: the summary kept every path, command, error and instruction found</p>';
  return `<div class="lost">${lostLists(lists, omitted)}</div>`;
}

function lostLists(lists: Array<[string, string[]]>, omitted: number): string {
  const shown = lists
    .filter(([, items]) => items.length > 0)
    .map(
      ([title, items]) =>
        `<p>${escapeHtml(title)} (${num(items.length)})</p><ul>${items.map((i) => `<li><code>${escapeHtml(i)}</code></li>`).join('')}</ul>`,
    );
  if (omitted > 0) shown.push(`<p class="muted">and ${num(omitted)} more not recorded</p>`);
  return shown.join('');
}
