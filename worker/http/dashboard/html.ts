/**
 * HTML helpers of the dashboard's pages: escaping (session content is untrusted: every text and
 * attribute goes through {@link escapeHtml}) and the shared page layout. Pure.
 */
import { createHash } from 'node:crypto';
import { printable } from '../../../shared/contract/errors.ts';

/** Text made safe inside an element or a double- or single-quoted attribute. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/**
 * An id (tenant, session, agent, idempotency key) made safe to show: its control characters,
 * invisible formatting characters (bidi overrides, zero-width) and unpaired surrogates written out
 * as `\u202e`, then escaped for HTML. Ids are checked when they come in, but rows written by SQL
 * or older releases may hold anything, and a bidi override would show another id than the real one.
 */
export function escapeId(text: string): string {
  return escapeHtml(printable(text, Number.POSITIVE_INFINITY));
}

/** `2025-01-31 12:34:56Z`. */
export function formatTime(t: number): string {
  return new Date(t)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

/** `12,345`, or `—` for no value. */
export function num(v: number | null | undefined): string {
  return v === null || v === undefined ? '—' : v.toLocaleString('en-US');
}

/** A time as `2025-01-31 12:34:56Z`, escaped. */
export function time(d: Date | string): string {
  return escapeHtml(formatTime(new Date(d).getTime()));
}

/**
 * Untrusted text cut to `max` characters (code points, as Postgres counts them), escaped; when cut,
 * says how long it was. `total` is the full text's length when `text` is already a prefix of it.
 */
export function preview(text: string, max: number, total?: number): string {
  const chars = Array.from(text);
  const length = Math.max(total ?? 0, chars.length);
  if (length <= max) return escapeHtml(text);
  return `${escapeHtml(chars.slice(0, max).join(''))}<span class="muted">… (${num(length)} characters)</span>`;
}

/** Who the page is for, and how its links carry the tenant. */
export interface PageContext {
  /** Nonce of this response's Content-Security-Policy, for the inline style and script. */
  nonce: string;
  tenantId: string;
  /** The admin names the tenant in `?tenant=`; a tenant's own credentials imply it. */
  admin: boolean;
  readOnly: boolean;
}

/** `path` with `?tenant=` (and `query`) appended as the context needs, escaped for an attribute. */
export function href(
  ctx: Pick<PageContext, 'admin' | 'tenantId'>,
  path: string,
  query: Record<string, string> = {},
) {
  const params = new URLSearchParams(ctx.admin ? { tenant: ctx.tenantId, ...query } : query);
  const qs = params.toString();
  return escapeHtml(qs ? `${path}?${qs}` : path);
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#111827;background:#f9fafb}
header{background:#111827;color:#f9fafb;padding:10px 20px;display:flex;gap:18px;align-items:baseline}
header a{color:#93c5fd;text-decoration:none}header strong{font-size:16px}
main{padding:16px 20px;max-width:1280px}
h1{font-size:20px;margin:4px 0 12px;word-break:break-all}h2{font-size:16px;margin:22px 0 8px}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f4f6;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
.stats td:first-child{color:#4b5563}
.status-applied{color:#1d4ed8}.status-restored{color:#b45309}.status-skipped{color:#6b7280}.status-failed{color:#b91c1c}.status-expired{color:#6d28d9}
.card{background:#fff;border:1px solid #e5e7eb;padding:10px 14px;margin:8px 0}
.chart{background:#fff;border:1px solid #e5e7eb;width:100%;max-width:960px;height:auto}
details{margin:6px 0}summary{cursor:pointer}
.marker{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font-size:12px;background:#f3f4f6;padding:6px}
tr.hl td{background:#fef9c3}tr.summary td{background:#ecfdf5}td.preview{max-width:640px;word-break:break-word}
.fields th{text-align:left;color:#4b5563;font-weight:500;background:#f9fafb}.muted{color:#6b7280}.legend span{margin-right:14px}
button{font:inherit;padding:3px 10px;cursor:pointer}
.outcome{font-weight:600}.outcome-applied,.outcome-restored{color:#1d4ed8}.outcome-skipped,.outcome-duplicate{color:#4b5563}
.outcome-failed,.outcome-error{color:#b91c1c}.outcome-running,.outcome-batched,.outcome-dry-run{color:#b45309}
`;

/**
 * The CSP source that allows the pages' one stylesheet: its hash. A hash rather than the response's
 * nonce because the session page re-reads itself to refresh its sections, and the browser checks
 * the `<style>` of that parsed copy against the page's policy: a nonce of another response fails.
 */
export const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * A complete page: header with navigation (the tenant's, from `ctx`, or `nav` as given), the body,
 * an optional inline script (nonce'd), the stylesheet (hashed).
 */
export function layout(options: {
  title: string;
  nonce: string;
  ctx?: PageContext | undefined;
  /** Navigation markup for a page outside any tenant (trusted: never built from input). */
  nav?: string;
  body: string;
  script?: string;
}): string {
  const { ctx } = options;
  const nav = ctx
    ? [
        `<span>tenant <b>${escapeId(ctx.tenantId)}</b></span>`,
        `<a href="${href(ctx, '/')}">overview</a>`,
        `<a href="${href(ctx, '/sessions')}">sessions</a>`,
        ctx.admin ? '<a href="/">all tenants</a> <a href="/queues">Bull Board</a>' : '',
        ctx.readOnly ? '<span class="muted">read-only</span>' : '',
      ].join(' ')
    : (options.nav ?? '');
  const script = options.script ? `<script nonce="${options.nonce}">${options.script}</script>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(options.title)} · compactor</title>
<style>${STYLE}</style></head>
<body><header><strong>compactor</strong>${nav}</header>
<main>${options.body}</main>${script}</body></html>`;
}

/** A small error page (the API answers JSON instead). */
export function renderErrorPage(status: number, message: string, nonce: string): string {
  return layout({
    title: `${status}`,
    nonce,
    body: `<h1>${status}</h1><p>${escapeHtml(message)}</p>`,
  });
}
