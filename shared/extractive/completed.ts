/**
 * Completed work: tool calls that succeeded and changed something, and finished todos. A call the
 * user rejected or interrupted, or whose output failed in any recognisable way, is never completed;
 * a rejection is recorded as the user's decision.
 */
import { callOutcome, exitCode, type Outcome } from '../text/error-lines.ts';
import { describeCall } from './describe-call.ts';
import type { Item } from './items.ts';
import { stringArgument, type ToolRun } from './tool-runs.ts';

/** How each call with a result ended, by its index in the messages. */
export function outcomes(runs: Map<number, ToolRun>): Map<number, Outcome> {
  const out = new Map<number, Outcome>();
  for (const [index, run] of runs) {
    if (!run.result) continue;
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    out.set(index, callOutcome(run.result.content, describeCall(run).inspect, command));
  }
  return out;
}

/** Successful, non-read-only calls with exit code 0 (when stated) as `edited x` / `ran: cmd`, then finished todos. */
export function completedItems(
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
  todosDone: Item[],
): Item[] {
  const items: Item[] = [];
  for (const [index, run] of runs) {
    if (!run.result || ended.get(index) !== 'ok') continue;
    const summary = describeCall(run);
    // A non-zero exit that is not a failure (grep's "no match") did not complete anything either.
    if (summary.inspect || (exitCode(run.result.content) ?? 0) !== 0) continue;
    items.push({ text: summary.text, seq: run.result.seq });
  }
  return [...items, ...todosDone].sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1));
}

/** Calls the user rejected, as decisions: `the user rejected: edited src/a.py`. */
export function rejectedItems(runs: Map<number, ToolRun>, ended: Map<number, Outcome>): Item[] {
  const items: Item[] = [];
  for (const [index, run] of runs) {
    if (!run.result || ended.get(index) !== 'rejected') continue;
    items.push({ text: `the user rejected: ${describeCall(run).text}`, seq: run.result.seq });
  }
  return items;
}
