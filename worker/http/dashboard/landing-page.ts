/**
 * The dashboard's landing page (`/`): where to look first.
 * - The admin (no tenant named): every tenant's totals (sessions, messages, tokens, compactions,
 *   failures, cost), the biggest sessions and the sessions whose compactions failed recently, of
 *   all tenants, each linking to its page.
 * - A tenant (its own credential, or the admin naming it): its totals, its biggest and its failing
 *   sessions.
 * Pure: data in, HTML out; ids and errors are untrusted and escaped. No script.
 */
import type { FailingSession, RankedSession, TenantTotals } from '../../postgres/queries/dashboard.ts';
import { escapeHtml, escapeId, href, layout, num, type PageContext, preview, time } from './html.ts';

/** How far back "failing" looks, ms: a week, as long as BullMQ keeps a failed job. */
export const FAILING_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** Rows per list of the landing pages. */
export const LANDING_ROWS = 20;
/** Tenants listed on the admin's landing page at most. */
export const LANDING_TENANTS = 200;

/** What a landing page lists. */
export interface LandingData {
  tenants: TenantTotals[];
  biggest: RankedSession[];
  failing: FailingSession[];
}

/** The admin's landing page: every tenant. `tenants` may hold one more than shown (to say so). */
export function renderAdminLanding(nonce: string, data: LandingData): string {
  const shown = data.tenants.slice(0, LANDING_TENANTS);
  const more =
    data.tenants.length > LANDING_TENANTS
      ? `<p class="muted">the ${num(LANDING_TENANTS)} tenants with the most tokens; more exist</p>`
      : '';
  const rows = shown.map(
    (t) => `<tr class="tenant-row" data-tenant="${escapeHtml(t.tenantId)}">
<td><a class="tenant" href="${href({ admin: true, tenantId: t.tenantId }, '/')}">${escapeId(t.tenantId)}</a></td>
${totalsCells(t)}
<td><a href="${href({ admin: true, tenantId: t.tenantId }, '/sessions')}">sessions</a></td></tr>`,
  );
  const body = `<h1>Overview</h1>
<h2>Tenants</h2>
<table class="tenants"><thead><tr><th>tenant</th>${TOTALS_HEAD}<th></th></tr></thead>
<tbody>${rows.join('\n') || '<tr><td colspan="8" class="muted">no tenants yet</td></tr>'}</tbody></table>${more}
${lists(data, true)}
<form method="get" action="/sessions" class="card">
<label>open a tenant's sessions <input name="tenant" required maxlength="200"></label> <button>open</button></form>`;
  const nav = '<span>all tenants</span> <a href="/queues">Bull Board</a>';
  return layout({ title: 'overview', nonce, nav, body });
}

/** A tenant's landing page. */
export function renderTenantLanding(ctx: PageContext, data: LandingData): string {
  const totals = data.tenants[0];
  const summary = totals
    ? `<table class="tenants"><thead><tr>${TOTALS_HEAD}</tr></thead><tbody><tr class="tenant-row" data-tenant="${escapeHtml(totals.tenantId)}">${totalsCells(totals)}</tr></tbody></table>`
    : '<p class="muted">no sessions yet</p>';
  const body = `<h1>Overview of ${escapeId(ctx.tenantId)}</h1>
${summary}
<p><a href="${href(ctx, '/sessions')}">all sessions →</a></p>
${lists(data, ctx.admin)}`;
  return layout({ title: `overview ${ctx.tenantId}`, nonce: ctx.nonce, ctx, body });
}

const TOTALS_HEAD =
  '<th>sessions</th><th>messages</th><th>tokens</th><th>compactions</th><th>failures</th><th>cost USD</th>';

function totalsCells(t: TenantTotals): string {
  return `<td class="num">${num(t.sessions)}</td><td class="num">${num(t.messages)}</td><td class="num">${num(t.tokens)}</td>
<td class="num">${num(t.compactions)}</td><td class="num${t.failures > 0 ? ' status-failed' : ''}">${num(t.failures)}</td>
<td class="num">$${t.costUsd.toFixed(4)}</td>`;
}

/** The biggest and the failing sessions; `admin` links carry each session's tenant. */
function lists(data: LandingData, admin: boolean): string {
  const link = (tenantId: string, sessionId: string, path = '') =>
    href({ admin, tenantId }, `/sessions/${encodeURIComponent(sessionId)}${path}`);
  const tenantCell = (tenantId: string) => (admin ? `<td>${escapeId(tenantId)}</td>` : '');
  const tenantHead = admin ? '<th>tenant</th>' : '';
  const biggest = data.biggest.map(
    (s) => `<tr class="big-session">${tenantCell(s.tenantId)}
<td><a href="${link(s.tenantId, s.id)}">${escapeId(s.id)}</a></td><td>${escapeId(s.agentId ?? '')}</td>
<td class="num">${num(s.messageCount)}</td><td class="num">${num(s.tokenCount)}</td><td class="num">${num(s.compactionCount)}</td>
<td>${s.lastCompactedAt ? time(s.lastCompactedAt) : '<span class="muted">never</span>'}</td></tr>`,
  );
  const failing = data.failing.map(
    (s) => `<tr class="failing-session">${tenantCell(s.tenantId)}
<td><a href="${link(s.tenantId, s.sessionId)}">${escapeId(s.sessionId)}</a></td>
<td class="num status-failed">${num(s.failures)}</td><td>${time(s.lastFailedAt)}</td>
<td class="preview">${s.lastError ? preview(s.lastError, 200) : '—'}</td>
<td><a href="${link(s.tenantId, s.sessionId, `/compactions/${s.lastFailureId}`)}">details</a></td></tr>`,
  );
  const days = FAILING_WINDOW_MS / (24 * 3600 * 1000);
  return `<h2>Biggest sessions</h2>
<table class="biggest"><thead><tr>${tenantHead}<th>session</th><th>agent</th><th>messages</th><th>tokens</th><th>compactions</th><th>last compacted</th></tr></thead>
<tbody>${biggest.join('\n') || `<tr><td colspan="${admin ? 7 : 6}" class="muted">no sessions</td></tr>`}</tbody></table>
<h2>Failing compactions <span class="muted">(last ${days} days)</span></h2>
<table class="failing"><thead><tr>${tenantHead}<th>session</th><th>failures</th><th>last failed</th><th>last error</th><th></th></tr></thead>
<tbody>${failing.join('\n') || `<tr><td colspan="${admin ? 6 : 5}" class="muted">none</td></tr>`}</tbody></table>`;
}
