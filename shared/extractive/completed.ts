/** Completed work: tool calls that succeeded and changed something, and finished todos. */
import { describeCall } from './describe-call.ts';
import { detectError } from './error-lines.ts';
import type { Item } from './items.ts';
import { stringArgument, type ToolRun } from './tool-runs.ts';

/** Successful, non-read-only calls as `edited x` / `ran: cmd`, then finished todos. */
export function completedItems(runs: Map<number, ToolRun>, todosDone: Item[]): Item[] {
  const items: Item[] = [];
  for (const run of runs.values()) {
    if (!run.result) continue;
    const summary = describeCall(run);
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (summary.inspect || detectError(run.result.content, false, command) !== null) continue;
    items.push({ text: summary.text, seq: run.result.seq });
  }
  return [...items, ...todosDone].sort((a, b) => a.seq - b.seq);
}
