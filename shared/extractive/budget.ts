/** Fitting the checkpoint into `maxSummaryTokens` by dropping the oldest list items. */

import { estimateTextTokens } from '../contract/tokens.ts';
import { type Checkpoint, emptyCheckpoint, renderCheckpoint } from '../summary/checkpoint.ts';
import type { Item } from './items.ts';
import { type ListKey, TRIM_ORDER } from './limits.ts';

/** The parts of a checkpoint that are never trimmed. */
export type Fixed = Pick<Checkpoint, 'goal' | 'lastUserRequest' | 'workingSet'>;

/**
 * Assembles the checkpoint and drops the oldest list items (lowest seq; previous items first) until its
 * rendering fits `maxTokens`. The goal, the last request and the working set are never trimmed.
 */
export function fitBudget(
  fixed: Fixed,
  lists: Record<ListKey, Item[]>,
  maxTokens: number,
  coveredSeq: number,
): Checkpoint {
  const assemble = (): Checkpoint => ({
    ...fixed,
    workingSet: [],
    completed: texts(lists.completed),
    inProgress: texts(lists.inProgress),
    pending: texts(lists.pending),
    blockers: texts(lists.blockers),
    decisions: texts(lists.decisions),
    openQuestions: texts(lists.openQuestions),
  });
  const budget =
    typeof maxTokens === 'number' && !Number.isNaN(maxTokens) ? maxTokens : Number.POSITIVE_INFINITY;
  // The working set is the last section rendered: its text is the same with or without the lists.
  const header = renderCheckpoint(emptyCheckpoint(), coveredSeq).length;
  const workingSetText = renderCheckpoint(
    { ...emptyCheckpoint(), workingSet: fixed.workingSet },
    coveredSeq,
  ).slice(header);
  const tokens = (c: Checkpoint) => estimateTextTokens(renderCheckpoint(c, coveredSeq) + workingSetText);
  const queue = TRIM_ORDER.flatMap((key, order) => lists[key].map((item) => ({ key, item, order })));
  queue.sort((a, b) => a.item.seq - b.item.seq || a.order - b.order);
  let checkpoint = assemble();
  for (const { key, item } of queue) {
    if (tokens(checkpoint) <= budget) break;
    lists[key] = lists[key].filter((i) => i !== item);
    checkpoint = assemble();
  }
  return { ...checkpoint, workingSet: fixed.workingSet };
}

function texts(items: Item[]): string[] {
  return items.map((i) => i.text).filter((t) => t.length > 0);
}
