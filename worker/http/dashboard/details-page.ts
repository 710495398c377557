/**
 * One compaction's page (the ledger's "details"): the ledger row in a readable table, the summary
 * it wrote, the checkpoint it replaced, and the messages it archived with a clipped preview each.
 * Pure: data in, HTML out; every value from the session or the ledger is escaped. No script.
 */
import type { CompactionRow, SessionRow } from '../../../producer/postgres/schema.ts';
import type { ArchivedMessage, Page } from '../../postgres/queries/dashboard.ts';
import { renderCheckpoint } from './checkpoint-view.ts';
import { fidelityText, lostSection } from './fidelity-view.ts';
import { escapeHtml, escapeId, href, layout, num, type PageContext, preview, time } from './html.ts';
import { paybackFields } from './payback-view.ts';

/** Characters of an archived message shown in its row. */
export const PREVIEW_CHARS = 240;

/** The archived messages shown: one page of them, with the totals. */
export type ArchivedPage = Page<ArchivedMessage> & { totalMessages: number; totalTokens: number };

/** The page of compaction `row` of `session`, with one page of what it archived. */
export function renderDetailsPage(
  ctx: PageContext,
  session: Pick<SessionRow, 'id'>,
  row: CompactionRow,
  archived: ArchivedPage,
  options: { firstPage: boolean },
): string {
  const sessionPath = `/sessions/${encodeURIComponent(session.id)}`;
  const back = `<p><a class="back" href="${href(ctx, sessionPath)}#c-${escapeHtml(row.id)}">← session ${escapeId(session.id)}</a></p>`;
  const body = `${back}
<h1>Compaction <span class="status-${escapeHtml(row.status)}">${escapeHtml(row.status)}</span> of session ${escapeId(session.id)}</h1>
<p class="muted">${escapeHtml(row.id)} · ${time(row.createdAt)}</p>
${fields(ctx, row)}
<h2>Summary</h2>
${row.summary ? `<pre class="summary">${escapeHtml(row.summary)}</pre>` : '<p class="muted">none (this compaction wrote no summary)</p>'}
<h2>What the summary lost</h2>
${lostSection(row)}
<h2>Checkpoint before</h2>
${renderCheckpoint(row.checkpointBefore, 'none (the session had no checkpoint before this compaction)')}
<h2>Archived messages</h2>
${archivedTable(ctx, row, archived, options.firstPage)}
${back}`;
  return layout({ title: `compaction ${row.id}`, nonce: ctx.nonce, ctx, body });
}

function fields(ctx: PageContext, r: CompactionRow): string {
  const saved = r.tokensBefore !== null && r.tokensAfter !== null ? r.tokensBefore - r.tokensAfter : null;
  const child = r.childSessionId
    ? `<a href="${href(ctx, `/sessions/${encodeURIComponent(r.childSessionId)}`)}">${escapeId(r.childSessionId)}</a>`
    : '—';
  const text = (v: string | null) => (v ? escapeHtml(v) : '—');
  const rows: Array<[string, string]> = [
    // Enums in the schema, but plain text columns in Postgres: escaped like everything else.
    ['status', `<span class="status-${escapeHtml(r.status)}">${escapeHtml(r.status)}</span>`],
    ['reason', text(r.reason)],
    ['error', r.error ? `<pre>${escapeHtml(r.error)}</pre>` : '—'],
    ['trigger', escapeHtml(r.trigger)],
    [
      'strategy',
      `${escapeHtml(r.strategy)}${r.mode ? ` <span class="muted">(${escapeHtml(r.mode)})</span>` : ''}`,
    ],
    ['summarizer', text(r.summarizer)],
    ['fidelity', fidelityText(r)],
    ['summary instructions', r.instructions ? `<pre>${escapeHtml(r.instructions)}</pre>` : '—'],
    ['model', text(r.model)],
    ['created', time(r.createdAt)],
    ['restored', r.restoredAt ? `<span class="status-restored">${time(r.restoredAt)}</span>` : '—'],
    ['messages before → after', `${num(r.messagesBefore)} → ${num(r.messagesAfter)}`],
    ['messages archived', num(r.messagesArchived)],
    ['blocks cleared', num(r.blocksCleared)],
    [
      'earlier thinking',
      `${r.thinkingPreserved ? 'stays valid' : 'left out from here on'}${r.thinkingNote ? ` <span class="muted">(${escapeHtml(r.thinkingNote)})</span>` : ''}`,
    ],
    [
      'tokens before → after',
      `${num(r.tokensBefore)} → ${num(r.tokensAfter)}${saved !== null && saved > 0 ? ` <span class="muted">(−${num(saved)})</span>` : ''}`,
    ],
    ['LLM input / output tokens', `${num(r.inputTokens)} / ${num(r.outputTokens)}`],
    ['LLM cache read / write tokens', `${num(r.cacheReadTokens)} / ${num(r.cacheWriteTokens)}`],
    ['cost USD', r.costUsd !== null ? `$${r.costUsd.toFixed(6)}` : '—'],
    ...paybackFields(r),
    ['LLM time', r.llmMs !== null ? `${num(r.llmMs)} ms` : '—'],
    ['total time', r.durationMs !== null ? `${num(r.durationMs)} ms` : '—'],
    ['cutoff seq / summary seq', `${num(r.cutoffSeq)} / ${num(r.summarySeq)}`],
    ['compaction version', num(r.compactionVersion)],
    ['child session', child],
    ...(r.status === 'expired' ? expiredFields(ctx, r) : []),
    ['event id', text(r.eventId)],
    ['idempotency key', r.idempotencyKey ? `<code>${escapeId(r.idempotencyKey)}</code>` : '—'],
  ];
  return `<table class="stats fields">${rows.map(([k, v]) => `<tr><th scope="row">${k}</th><td>${v}</td></tr>`).join('')}</table>`;
}

/** An `expired` row's fields: what the retention pass dropped, and from which compactions. */
function expiredFields(ctx: PageContext, r: CompactionRow): Array<[string, string]> {
  const links = (r.expiredCompactionIds ?? []).map(
    (id) =>
      `<a href="${href(ctx, `/sessions/${encodeURIComponent(r.sessionId)}/compactions/${id}`)}">${escapeHtml(id)}</a>`,
  );
  return [
    ['archived messages dropped', num(r.expiredMessages)],
    ['archived tokens dropped', num(r.expiredTokens)],
    ['archived before', r.expiredBefore ? time(r.expiredBefore) : '—'],
    ['of compactions', links.length > 0 ? links.join('<br>') : '—'],
  ];
}

function archivedTable(
  ctx: PageContext,
  r: CompactionRow,
  archived: ArchivedPage,
  firstPage: boolean,
): string {
  if (r.status === 'expired') return '<p class="muted">none (a retention pass archives nothing)</p>';
  // Fewer archived rows than the ledger counts, not restored: a retention pass dropped them.
  const dropped =
    !r.restoredAt && r.messagesArchived !== null && archived.totalMessages < r.messagesArchived
      ? `<p class="status-expired">${num(r.messagesArchived - archived.totalMessages)} of the ${num(r.messagesArchived)} messages it archived were dropped by a retention pass (its <code>expired</code> ledger row says when); this compaction cannot be restored</p>`
      : '';
  if (archived.totalMessages === 0)
    return dropped || '<p class="muted">none (this compaction archived no message)</p>';
  const restored = r.restoredAt
    ? `<p class="muted">restored ${time(r.restoredAt)}: these messages went back to the session; the archive keeps its copy</p>`
    : '';
  const rows = archived.items.map(
    (m) => `<tr class="archived-message${m.kind === 'summary' ? ' summary' : ''}">
<td class="num">${num(m.seq)}</td><td>${escapeHtml(m.role)}</td><td>${escapeHtml(m.kind)}${m.toolName ? ` <span class="muted">${escapeHtml(m.toolName)}</span>` : ''}</td>
<td class="num">${num(m.tokenCount)}</td><td>${m.pinned ? 'pinned' : ''}</td>
<td class="preview">${preview(m.preview ?? '', PREVIEW_CHARS, m.chars ?? 0)}</td></tr>`,
  );
  const path = `/sessions/${encodeURIComponent(r.sessionId)}/compactions/${r.id}`;
  const pages = [
    firstPage ? '' : `<a href="${href(ctx, path)}">first page</a>`,
    archived.nextCursor
      ? `<a href="${href(ctx, path, { cursor: archived.nextCursor })}">next page →</a>`
      : '',
  ].filter(Boolean);
  return `${dropped}${restored}<p class="archived-total">${num(archived.totalMessages)} messages, ${num(archived.totalTokens)} tokens</p>
<table class="archived"><thead><tr><th>seq</th><th>role</th><th>kind</th><th>tokens</th><th>pinned</th><th>content (first ${PREVIEW_CHARS} characters)</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>${pages.length ? `<p>${pages.join(' · ')}</p>` : ''}`;
}
