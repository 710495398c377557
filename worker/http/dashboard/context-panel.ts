/**
 * The session page's live context: the messages the session holds now, as stored (seq, role,
 * kind, pinned, tokens, a clipped preview; the summary message highlighted), with their total
 * tokens and count. Long sessions show their last messages and say how many there are in all.
 * Pure; message content is untrusted and escaped.
 */
import type { SessionRow } from '../../../producer/postgres/schema.ts';
import type { LiveContext } from '../../postgres/queries/dashboard.ts';
import { escapeHtml, num, preview } from './html.ts';

/** Messages the panel lists at most (the last ones). */
export const CONTEXT_ROWS = 200;
/** Characters of a message shown in its row. */
export const CONTEXT_PREVIEW_CHARS = 200;

/**
 * The panel. When the session's counters (what the triggers read) disagree with the rows, it says
 * so: the rows are what an agent would be sent.
 */
export function renderContextPanel(
  context: LiveContext,
  counters: Pick<SessionRow, 'messageCount' | 'tokenCount'>,
): string {
  const { totalMessages, totalTokens } = context;
  const shown = context.messages.length;
  const capped =
    shown < totalMessages
      ? ` <span class="muted context-shown">showing the last ${num(shown)} of ${num(totalMessages)} messages</span>`
      : '';
  const drift =
    counters.messageCount !== totalMessages || counters.tokenCount !== totalTokens
      ? `<p class="status-failed context-drift">the session's counters say ${num(counters.messageCount)} messages and ${num(counters.tokenCount)} tokens</p>`
      : '';
  const total = `<p class="context-total"><b>${num(totalTokens)} tokens</b> in <b>${num(totalMessages)} messages</b>${capped}</p>${drift}`;
  if (totalMessages === 0) return `${total}<p class="muted">no live messages</p>`;
  const rows = context.messages.map((m) => {
    const summary = m.kind === 'summary';
    return `<tr class="context-message${summary ? ' summary' : ''}">
<td class="num">${num(m.seq)}</td><td>${escapeHtml(m.role)}</td><td>${summary ? '<b>summary</b>' : escapeHtml(m.kind)}${m.toolName ? ` <span class="muted">${escapeHtml(m.toolName)}</span>` : ''}</td>
<td>${m.pinned ? 'pinned' : ''}</td><td class="num">${num(m.tokenCount)}</td>
<td class="preview">${preview(m.preview, CONTEXT_PREVIEW_CHARS, m.chars)}</td></tr>`;
  });
  return `${total}
<table class="context"><thead><tr><th>seq</th><th>role</th><th>kind</th><th>pinned</th><th>tokens</th><th>content (first ${CONTEXT_PREVIEW_CHARS} characters)</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`;
}
