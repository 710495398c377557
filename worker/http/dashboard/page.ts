/**
 * The dashboard's server-rendered pages: the session list, a session (its size over time with
 * each compaction marked, the current checkpoint, the ledger, the live context), and the admin's
 * tenant prompt.
 * Pure: data in, HTML out. Session content is untrusted: every value is escaped, and the only
 * script is the fixed one below, allowed by the response's CSP nonce.
 */

import type { SessionRow } from '../../../producer/postgres/schema.ts';
import type { LedgerEntry, LiveContext, Page, SessionListItem } from '../../postgres/queries/dashboard.ts';
import { renderChart } from './chart.ts';
import { renderCheckpoint } from './checkpoint-view.ts';
import { renderContextPanel } from './context-panel.ts';
import { fidelityCell } from './fidelity-view.ts';
import { escapeHtml, escapeId, href, layout, num, type PageContext, time } from './html.ts';
import { paybackCell } from './payback-view.ts';

/** The session list, one page of it. */
export function renderSessionList(ctx: PageContext, page: Page<SessionListItem>): string {
  const rows = page.items.map((s) => {
    const last = s.lastCompaction;
    const lastCell = last
      ? `<span class="status-${last.status}">${last.status}</span> ${escapeHtml(last.strategy)} · ${time(last.createdAt)}<br><span class="muted">tokens ${num(last.tokensBefore)} → ${num(last.tokensAfter)}</span>`
      : '<span class="muted">never</span>';
    return `<tr>
<td><a href="${href(ctx, `/sessions/${encodeURIComponent(s.id)}`)}">${escapeId(s.id)}</a></td>
<td>${escapeId(s.agentId ?? '')}</td>
<td class="num">${num(s.messageCount)}</td><td class="num">${num(s.tokenCount)}</td>
<td class="num">${num(s.compactionCount)}</td><td>${lastCell}</td><td>${time(s.updatedAt)}</td></tr>`;
  });
  const next = page.nextCursor
    ? `<p><a href="${href(ctx, '/sessions', { cursor: page.nextCursor })}">next page →</a></p>`
    : '';
  const body = `<h1>Sessions</h1>
<table class="sessions"><thead><tr><th>session</th><th>agent</th><th>messages</th><th>tokens</th>
<th>compactions</th><th>last compaction</th><th>updated</th></tr></thead>
<tbody>${rows.join('\n') || '<tr><td colspan="7" class="muted">no sessions</td></tr>'}</tbody></table>${next}`;
  return layout({ title: 'sessions', nonce: ctx.nonce, ctx, body });
}

/** The admin's page when no tenant is named: a form asking for one. */
export function renderTenantPrompt(nonce: string): string {
  const body = `<h1>Sessions</h1><form method="get" action="/sessions" class="card">
<label>tenant <input name="tenant" required maxlength="200" autofocus></label> <button>open</button>
<p class="muted">The admin credential sees every tenant; name the one to open.</p></form>`;
  return layout({
    title: 'sessions',
    nonce,
    nav: '<a href="/">all tenants</a> <a href="/queues">Bull Board</a>',
    body,
  });
}

/**
 * A session's page.
 * @param ledger the session's ledger rows, newest first (at most the page's window).
 * @param truncated whether older rows were left out.
 * @param context the session's live messages (the last ones) and their totals.
 */
export function renderSessionPage(
  ctx: PageContext,
  session: SessionRow,
  ledger: LedgerEntry[],
  truncated: boolean,
  context: LiveContext,
): string {
  const chart = renderChart({
    rows: [...ledger].reverse(),
    current: { at: session.updatedAt, tokens: session.tokenCount, messages: session.messageCount },
  });
  const api = `/api/sessions/${encodeURIComponent(session.id)}`;
  const actions = ctx.readOnly
    ? ''
    : `<p><button data-post="${href(ctx, `${api}/compact`)}" data-out="action-result" data-busy="compacting… waiting for the worker (up to 30 s)" data-confirm="Compact this session now?">compact now</button> <span id="action-result" class="outcome" role="status"></span></p>`;
  // Sections marked data-refresh are re-read from the server after an action (see SCRIPT).
  const body = `<h1>Session ${escapeId(session.id)}</h1>
<section id="stats" data-refresh>${stats(ctx, session)}</section>
${actions}
<h2>Tokens and messages over time</h2>
<div class="legend muted"><span>▮ <b class="status-applied">applied</b></span><span>▮ <b class="status-restored">restored</b></span><span>▮ <b class="status-skipped">skipped</b></span><span>▮ <b class="status-failed">failed</b></span><span>▮ <b class="status-expired">expired</b> (archive dropped)</span><span>click a marker to find its ledger row</span></div>
<section id="chart" data-refresh>${chart}</section>
<h2>Current checkpoint</h2>
<section id="checkpoint" data-refresh>${renderCheckpoint(session.checkpoint)}</section>
<h2>Ledger</h2>
<p id="ledger-result" class="outcome" role="status"></p>
<section id="ledger" data-refresh>
${truncated ? `<p class="muted">the newest ${ledger.length} rows; the API pages through all of them</p>` : ''}
${ledgerTable(ctx, session, ledger)}</section>
<h2>Live context</h2>
<section id="context" data-refresh>${renderContextPanel(context, session)}</section>`;
  return layout({ title: `session ${session.id}`, nonce: ctx.nonce, ctx, body, script: SCRIPT });
}

function stats(ctx: PageContext, s: SessionRow): string {
  const used =
    s.contextWindow && s.contextWindow > 0
      ? ` <span class="muted">(${((s.tokenCount / s.contextWindow) * 100).toFixed(1)}% of ${num(s.contextWindow)})</span>`
      : '';
  const link = (id: string | null) =>
    id ? `<a href="${href(ctx, `/sessions/${encodeURIComponent(id)}`)}">${escapeHtml(id)}</a>` : '—';
  const rows: Array<[string, string]> = [
    ['messages', num(s.messageCount)],
    ['tokens', `${num(s.tokenCount)}${used}`],
    ['compactions', `${num(s.compactionCount)} <span class="muted">(version ${s.compactionVersion})</span>`],
    ['last compacted', s.lastCompactedAt ? time(s.lastCompactedAt) : 'never'],
    ['agent', escapeId(s.agentId ?? '—')],
    ['created / updated', `${time(s.createdAt)} / ${time(s.updatedAt)}`],
    ['parent / child session', `${link(s.parentSessionId)} / ${link(s.childSessionId)}`],
  ];
  return `<table class="stats">${rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('')}</table>`;
}

function ledgerTable(ctx: PageContext, session: SessionRow, ledger: LedgerEntry[]): string {
  if (ledger.length === 0) return '<p class="muted">no compactions yet</p>';
  const api = `/api/sessions/${encodeURIComponent(session.id)}/compactions`;
  // Compactions whose archived originals a retention pass dropped (its row is newer, so shown too).
  const expired = new Set(
    ledger.flatMap((r) => (r.status === 'expired' ? (r.expiredCompactionIds ?? []) : [])),
  );
  const rows = ledger.map((r) => {
    const saved = (r.tokensBefore ?? 0) - (r.tokensAfter ?? 0);
    const restore =
      !ctx.readOnly && r.status === 'applied' && !expired.has(r.id)
        ? ` <button data-post="${href(ctx, `${api}/${r.id}/restore`)}" data-out="ledger-result" data-busy="restoring…" data-confirm="Restore this compaction? Its archived messages go back.">restore</button>`
        : '';
    const gone = expired.has(r.id)
      ? '<br><span class="status-expired">archive dropped by retention: cannot be restored</span>'
      : '';
    const why = [r.reason, r.error].filter((v): v is string => !!v).map((v) => escapeHtml(v.slice(0, 400)));
    const sizes =
      r.status === 'expired'
        ? `<td class="num">${num(r.expiredMessages)} archived dropped</td><td class="num">${num(r.expiredTokens)} dropped</td>`
        : `<td class="num">${num(r.messagesBefore)} → ${num(r.messagesAfter)}</td>
<td class="num">${num(r.tokensBefore)} → ${num(r.tokensAfter)}${saved > 0 ? `<br><span class="muted">−${num(saved)}</span>` : ''}</td>`;
    return `<tr id="c-${escapeHtml(r.id)}" class="ledger-row">
<td>${time(r.createdAt)}${r.restoredAt ? `<br><span class="status-restored">restored ${time(r.restoredAt)}</span>` : ''}</td><td>${r.trigger}</td><td>${escapeHtml(r.strategy)}${r.mode === 'newSession' ? ' <span class="muted">(new session)</span>' : ''}</td>
<td class="status-${r.status}">${r.status}${gone}</td>
${sizes}
<td class="num">${num(r.messagesArchived)}</td>
<td>${escapeHtml([r.summarizer, r.model].filter(Boolean).join(' / ') || '—')}</td>
<td class="num">${r.inputTokens !== null ? `${num(r.inputTokens)} / ${num(r.outputTokens)}` : '—'}</td>
<td class="num">${r.costUsd !== null ? `$${r.costUsd.toFixed(4)}` : '—'}</td>
<td class="num">${num(r.durationMs)}</td>
<td>${why.join('<br>')}</td>
<td>${fidelityCell(r)}</td>
<td class="num">${paybackCell(r)}</td>
<td><a href="${href(ctx, `/sessions/${encodeURIComponent(session.id)}/compactions/${r.id}`)}">details</a>${restore}</td></tr>`;
  });
  return `<table class="ledger"><thead><tr><th>when</th><th>trigger</th><th>strategy</th><th>status</th>
<th>messages</th><th>tokens</th><th>archived</th><th>summarizer / model</th><th>LLM in / out</th><th>cost</th>
<th>ms</th><th>reason</th><th>fidelity</th><th>payback</th><th></th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`;
}

/**
 * The page's only script. Markers jump to their ledger row. Buttons POST to the JSON API (the
 * browser resends its credentials; `content-type: application/json` keeps other sites out), show
 * the answer's one-line `message` (what happened, not merely that a request was sent), then re-read
 * the page and swap in its data-refresh sections, so the ledger and the chart show the result
 * without losing that line. Clicks are delegated to the document, so swapped-in buttons and markers
 * work too.
 */
const SCRIPT = `
const say = (out, text, kind) => { out.textContent = text; out.className = 'outcome outcome-' + kind; };
async function refresh() {
  const r = await fetch(location.href, { headers: { accept: 'text/html' } });
  if (!r.ok) return;
  const doc = new DOMParser().parseFromString(await r.text(), 'text/html');
  for (const el of document.querySelectorAll('[data-refresh]')) {
    const next = doc.getElementById(el.id);
    if (next) el.replaceWith(document.adoptNode(next));
  }
}
document.addEventListener('click', async (event) => {
  const m = event.target.closest('.marker');
  if (m) {
    for (const r of document.querySelectorAll('tr.hl')) r.classList.remove('hl');
    const row = document.getElementById('c-' + m.dataset.compaction);
    if (row) { row.classList.add('hl'); row.scrollIntoView({ block: 'center' }); }
    return;
  }
  const b = event.target.closest('button[data-post]');
  if (!b || b.disabled || !confirm(b.dataset.confirm)) return;
  const out = document.getElementById(b.dataset.out);
  b.disabled = true;
  say(out, b.dataset.busy, 'running');
  try {
    const r = await fetch(b.dataset.post, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const j = await r.json().catch(() => ({}));
    if (r.ok) say(out, j.message || j.status || 'done', j.outcome || j.status || 'done');
    else say(out, 'error ' + r.status + ': ' + ((j.error && j.error.message) || r.statusText), 'error');
    await refresh();
  } catch (e) { say(out, String(e), 'error'); } finally { b.disabled = false; }
});`;
