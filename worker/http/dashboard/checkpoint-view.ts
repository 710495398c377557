/**
 * A checkpoint (the structured summary of what left a session) rendered for a page: the session's
 * current one, or the one a compaction replaced. Pure; checkpoint text is untrusted and escaped.
 */
import {
  CHECKPOINT_SECTIONS,
  checkpointSchema,
  renderEntry,
  renderErrorFix,
  renderFile,
} from '../../../shared/summary/checkpoint.ts';
import { escapeHtml, num } from './html.ts';

/**
 * A checkpoint as a card: goal, the last user request (folded), each non-empty section, the
 * working set. A value that is not a valid checkpoint is shown as JSON; every text is escaped.
 */
export function renderCheckpoint(value: unknown, empty = 'none yet (no summary has been written)'): string {
  if (value === null || value === undefined) return `<p class="muted">${escapeHtml(empty)}</p>`;
  const parsed = checkpointSchema.safeParse(value);
  if (!parsed.success) return `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
  const c = parsed.data;
  const parts: string[] = [];
  if (c.goal) parts.push(`<p><b>Goal</b>: ${escapeHtml(c.goal)}</p>`);
  if (c.lastUserRequest) {
    const size = `${num(c.lastUserRequest.length)} characters`;
    parts.push(
      `<details><summary><b>Last user request</b> <span class="muted">(verbatim, ${size})</span></summary><pre>${escapeHtml(c.lastUserRequest)}</pre></details>`,
    );
  }
  const section = (title: string, lines: string[]) => {
    if (lines.length === 0) return;
    parts.push(`<p><b>${title}</b></p><ul>${lines.map((v) => `<li>${escapeHtml(v)}</li>`).join('')}</ul>`);
  };
  section('User instructions', c.userInstructions.map(renderEntry));
  section('Current work', c.currentWork ? [renderEntry(c.currentWork)] : []);
  section('Next step', c.nextStep ? [renderEntry(c.nextStep)] : []);
  for (const [key, title] of CHECKPOINT_SECTIONS) section(title, c[key].map(renderEntry));
  section('Errors and fixes', c.errorsAndFixes.map(renderErrorFix));
  section('Files', c.files.map(renderFile));
  if (c.workingSet.length > 0) {
    const item = (p: string) => `<li><code>${escapeHtml(p)}</code></li>`;
    const rest = c.workingSet.slice(12, 1_000);
    const more =
      rest.length > 0
        ? `<details><summary class="muted">… and ${num(c.workingSet.length - 12)} more</summary><ul>${rest.map(item).join('')}</ul></details>`
        : '';
    parts.push(
      `<p><b>Working set</b> <span class="muted">(most recent first)</span></p><ul>${c.workingSet.slice(0, 12).map(item).join('')}</ul>${more}`,
    );
  }
  return `<div class="card checkpoint">${parts.join('\n') || '<p class="muted">empty</p>'}</div>`;
}
