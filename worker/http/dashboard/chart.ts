/**
 * The session chart: tokens (top) and messages (bottom) over time, drawn as inline SVG from the
 * ledger, with each compaction marked. Pure: rows in, markup out; every text is escaped.
 *
 * Each ledger row samples the session's size when it was written: an applied compaction gives two
 * points at its time (before → after, the drop), a skipped or failed one a single point; the
 * session's current size closes the line. Between rows the line rises as the agent appended.
 *
 * An `expired` row (a retention pass dropped archived originals) is marked at its time and adds no
 * point: the live session it samples did not change.
 *
 * A restored compaction is two events: the compaction, marked at its `created_at` as applied, and
 * the restore, marked at its `restored_at`. The restore adds no point to the line: the ledger does
 * not record the session's size at that moment, and a guessed point would be a false one.
 *
 * The svg carries its time scale (`data-t0`/`data-t1`, ms, onto `data-x0`/`data-x1`) and each
 * marker its time (`data-at`, ms), so a reader (or a test) can check where a marker stands.
 */
import { escapeHtml, formatTime } from './html.ts';

/** A ledger row as the chart reads it. */
export interface ChartRow {
  id: string;
  createdAt: Date;
  status: 'applied' | 'skipped' | 'failed' | 'restored' | 'expired';
  strategy: string;
  tokensBefore: number | null;
  tokensAfter: number | null;
  messagesBefore: number | null;
  messagesAfter: number | null;
  /** When a restored compaction was restored (null or absent otherwise). */
  restoredAt?: Date | null;
  /** An `expired` row's dropped archived messages (null or absent otherwise). */
  expiredMessages?: number | null;
}

export interface ChartInput {
  /** Oldest first. */
  rows: ChartRow[];
  /** The session's size now, as of its last change (`sessions.updated_at`). */
  current: { at: Date; tokens: number; messages: number };
}

const WIDTH = 960;
const LEFT = 64;
const RIGHT = 16;
/** Room between the axes and the first and last points, so a marker never sits on the axis. */
const PAD = 12;
const PANELS = [
  { key: 'tokens', title: 'tokens', top: 24, height: 150 },
  { key: 'messages', title: 'messages', top: 214, height: 80 },
] as const;
const HEIGHT = 330;

const COLORS: Record<ChartRow['status'], string> = {
  applied: '#2563eb',
  restored: '#d97706',
  skipped: '#9ca3af',
  failed: '#dc2626',
  expired: '#7c3aed',
};

interface Point {
  t: number;
  v: number;
}

/** One mark on the chart: a compaction at its time, or a restore at the time of the restore. */
interface Mark {
  row: ChartRow;
  kind: 'compaction' | 'restore';
  at: number;
  /** The colour and class: a restored compaction's own mark shows it as it was, applied. */
  status: ChartRow['status'];
}

/** The marks of the rows: one per row, plus one per restore whose time is known. */
function marks(rows: ChartRow[]): Mark[] {
  const out: Mark[] = [];
  for (const row of rows) {
    const restored = row.status === 'restored';
    out.push({
      row,
      kind: 'compaction',
      at: row.createdAt.getTime(),
      status: restored ? 'applied' : row.status,
    });
    if (restored && row.restoredAt) {
      out.push({ row, kind: 'restore', at: row.restoredAt.getTime(), status: 'restored' });
    }
  }
  return out;
}

/**
 * The chart as an `<svg>` element (`class="chart"`, `data-compactions` = rows marked), with its
 * time scale in `data-t0`, `data-t1`, `data-x0`, `data-x1`.
 */
export function renderChart(input: ChartInput): string {
  const rows = [...input.rows].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const all = marks(rows);
  const times = all.map((m) => m.at);
  // The line ends at the current size, drawn no earlier than the last mark.
  const endT = Math.max(input.current.at.getTime(), ...times);
  const t0 = Math.min(endT, ...times);
  const span = Math.max(endT - t0, 1_000);
  const x0 = LEFT + PAD;
  const x1 = WIDTH - RIGHT - PAD;
  const x = (t: number) => x0 + ((t - t0) / span) * (x1 - x0);
  const out: string[] = [
    `<svg class="chart" data-compactions="${rows.length}" data-t0="${t0}" data-t1="${t0 + span}" data-x0="${x0}" data-x1="${x1}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="tokens and messages over time, compactions and restores marked" xmlns="http://www.w3.org/2000/svg">`,
  ];
  for (const panel of PANELS) {
    const points = series(rows, panel.key, input.current[panel.key], endT);
    const max = niceMax(Math.max(1, ...points.map((p) => p.v)));
    const y = (v: number) => panel.top + panel.height - (v / max) * panel.height;
    out.push(axes(panel, max, y));
    const d = points
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`)
      .join(' ');
    out.push(
      `<path class="series series-${panel.key}" d="${d}" fill="none" stroke="#111827" stroke-width="1.8"/>`,
    );
    for (const p of points) {
      out.push(`<circle cx="${x(p.t).toFixed(1)}" cy="${y(p.v).toFixed(1)}" r="2.5" fill="#111827"/>`);
    }
    // Markers last, on top: their heads are what a user clicks.
    for (const mark of all) out.push(marker(mark, x(mark.at), panel));
  }
  out.push(
    `<text x="${LEFT}" y="${HEIGHT - 6}" font-size="11" fill="#4b5563">${escapeHtml(formatTime(t0))}</text>`,
    `<text x="${WIDTH - RIGHT}" y="${HEIGHT - 6}" font-size="11" fill="#4b5563" text-anchor="end">${escapeHtml(formatTime(endT))} (current)</text>`,
    '</svg>',
  );
  return out.join('\n');
}

/** The size samples of one measure: before/after of each row, then the current size. */
function series(rows: ChartRow[], key: 'tokens' | 'messages', current: number, endT: number): Point[] {
  const points: Point[] = [];
  for (const row of rows) {
    const t = row.createdAt.getTime();
    const before = key === 'tokens' ? row.tokensBefore : row.messagesBefore;
    const after = key === 'tokens' ? row.tokensAfter : row.messagesAfter;
    if (before !== null) points.push({ t, v: before });
    if (after !== null && after !== before) points.push({ t, v: after });
  }
  points.push({ t: endT, v: current });
  return points;
}

function axes(panel: (typeof PANELS)[number], max: number, y: (v: number) => number): string {
  const parts = [
    `<text x="${LEFT}" y="${panel.top - 8}" font-size="12" font-weight="600" fill="#111827">${panel.title}</text>`,
  ];
  for (const v of [0, max / 2, max]) {
    const yy = y(v).toFixed(1);
    parts.push(
      `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${yy}" y2="${yy}" stroke="#e5e7eb"/>`,
      `<text x="${LEFT - 6}" y="${yy}" dy="4" font-size="11" fill="#4b5563" text-anchor="end">${compact(v)}</text>`,
    );
  }
  return parts.join('\n');
}

function marker(mark: Mark, xx: number, panel: (typeof PANELS)[number]): string {
  const { row, status } = mark;
  const color = COLORS[status];
  const x1 = xx.toFixed(1);
  const compacted = `${row.strategy} at ${formatTime(row.createdAt.getTime())}: tokens ${fmt(row.tokensBefore)} → ${fmt(row.tokensAfter)}, messages ${fmt(row.messagesBefore)} → ${fmt(row.messagesAfter)}`;
  let tip: string;
  if (mark.kind === 'restore') {
    tip = `restored at ${formatTime(mark.at)}: the compaction ${compacted}`;
  } else if (row.status === 'expired') {
    tip = `${row.strategy} at ${formatTime(row.createdAt.getTime())}: ${fmt(row.expiredMessages ?? null)} archived messages dropped (the live session is untouched)`;
  } else if (row.status === 'restored') {
    const when = row.restoredAt ? formatTime(row.restoredAt.getTime()) : 'an unrecorded time';
    tip = `applied ${compacted} (restored at ${when})`;
  } else {
    tip = `${row.status} ${compacted}`;
  }
  const dash = status === 'applied' ? '' : ' stroke-dasharray="4 3"';
  return (
    `<g class="marker marker-${status}" data-compaction="${escapeHtml(row.id)}" data-kind="${mark.kind}" data-at="${mark.at}">` +
    `<title>${escapeHtml(tip)}</title>` +
    `<line x1="${x1}" x2="${x1}" y1="${panel.top}" y2="${panel.top + panel.height}" stroke="${color}" stroke-width="1.5"${dash}/>` +
    `<rect x="${(xx - 4).toFixed(1)}" y="${panel.top - 4}" width="8" height="8" fill="${color}"/>` +
    '</g>'
  );
}

/** 1, 2, 2.5 or 5 times a power of ten, at least `v`. */
export function niceMax(v: number): number {
  const power = 10 ** Math.floor(Math.log10(v));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= v) return step * power;
  return 10 * power;
}

/** 950, 1.2k, 3.4M. */
function compact(v: number): string {
  if (v >= 1e6) return `${(v / 1e6).toFixed(v % 1e6 === 0 ? 0 : 1)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(v % 1e3 === 0 ? 0 : 1)}k`;
  return String(Math.round(v));
}

function fmt(v: number | null): string {
  return v === null ? '?' : v.toLocaleString('en-US');
}
