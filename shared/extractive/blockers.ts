/** Blockers: errors of failed tool results, cleared when the same call later succeeds. */
import type { Message } from '../contract/message.ts';
import { callSource, describeCall } from './describe-call.ts';
import { detectError } from './error-lines.ts';
import { type Item, PREVIOUS } from './items.ts';
import { ITEM_CHARS, LIST_CAPS } from './limits.ts';
import { cleanItem, clipWords, collapse, normalizeKey } from './text.ts';
import { stringArgument, type ToolRun } from './tool-runs.ts';

/** Blockers: the previous ones, then each failed result's error; a later success of the call clears it. */
export function mergeBlockers(previous: string[], messages: Message[], runs: Map<number, ToolRun>): Item[] {
  let items: Item[] = previous.map((text) => ({ text, seq: PREVIOUS, source: sourceOfPrevious(text) }));
  const byResult = new Map<number, ToolRun>();
  for (const run of runs.values()) if (run.result) byResult.set(run.resultIndex, run);
  messages.forEach((m, index) => {
    if (m.kind !== 'tool_result') return;
    const run = byResult.get(index);
    const summary = run ? describeCall(run) : null;
    const command = run ? stringArgument(run.args, ['command', 'cmd', 'script']) : null;
    const error = detectError(m.content, summary?.inspect ?? false, command);
    const source = run ? callSource(run) : undefined;
    if (error === null) {
      if (source !== undefined) items = items.filter((b) => b.source !== source);
      return;
    }
    const line = clipWords(collapse(error), 220);
    const text = source ? `${line} (from: ${source})` : line;
    items = items.filter((b) => blockerKey(b.text) !== blockerKey(text));
    items.push({ text: cleanItem(text, ITEM_CHARS), seq: m.seq, source });
  });
  return items.filter((b) => b.text.length > 0).slice(-LIST_CAPS.blockers);
}

function sourceOfPrevious(text: string): string | undefined {
  return / \(from: (.+)\)$/.exec(text)?.[1];
}

function blockerKey(text: string): string {
  return normalizeKey(text.replace(/ \(from: .+\)$/, ''));
}
