/**
 * Fitting the checkpoint into `maxSummaryTokens`. Each list is guaranteed its share of what the
 * fixed parts leave ({@link LIST_SHARES}), newest items first (an error still open at the cut
 * before any); what a list leaves unused goes to the others, the lists an agent needs to carry on
 * ({@link PRIORITY_LISTS}) before the history at equal rank, then newest first; the items that still do not fit are condensed into one `Earlier:` item per
 * list when it fits, else dropped.
 */

import { estimateTextTokens } from '../contract/tokens.ts';
import { type Checkpoint, renderCheckpoint } from '../summary/checkpoint.ts';
import { clipWords } from '../text/text.ts';
import { ageOf, condense, type Item, toEntries } from './items.ts';
import { LIST_SHARES, type ListKey, PRIORITY_LISTS, TRIM_ORDER } from './limits.ts';

/** The parts of a checkpoint that are never trimmed. */
export type Fixed = Pick<Checkpoint, 'goal' | 'lastUserRequest' | 'workingSet' | 'currentWork' | 'nextStep'>;

/** Tokens of a section's title and blank line. */
const SECTION_TOKENS = 8;

/** Longest condensed `Earlier:` item the budget adds for the items it could not keep. */
const CONDENSED_ITEM_CHARS = 200;

/**
 * Assembles the checkpoint within about `maxTokens` tokens of {@link renderCheckpoint} text. The
 * fixed parts are never trimmed. Lists keep their order; `priority` lists (files, ranked by role)
 * keep their first items rather than their newest.
 */
export function fitBudget(
  fixed: Fixed,
  lists: Record<ListKey, Item[]>,
  maxTokens: number,
  coveredSeq: number,
): Checkpoint {
  const budget =
    typeof maxTokens === 'number' && !Number.isNaN(maxTokens) ? maxTokens : Number.POSITIVE_INFINITY;
  const tokens = (c: Checkpoint) => estimateTextTokens(renderCheckpoint(c, coveredSeq));
  const full = assemble(fixed, lists);
  if (tokens(full) <= budget) return full;

  const empty = Object.fromEntries(TRIM_ORDER.map((k) => [k, []])) as unknown as Record<ListKey, Item[]>;
  const room = Math.max(0, budget - tokens(assemble(fixed, empty)));
  const cost = (item: Item) => estimateTextTokens(`- ${item.text} (seq ${item.seq ?? ''})\n`);
  const chosen = new Map<ListKey, Set<Item>>(TRIM_ORDER.map((k) => [k, new Set<Item>()]));
  let used = 0;
  const take = (key: ListKey, item: Item) => {
    const set = chosen.get(key) as Set<Item>;
    used += cost(item) + (set.size === 0 ? SECTION_TOKENS : 0);
    set.add(item);
  };
  // 1. Each list's guaranteed share, its most important items first.
  for (const key of TRIM_ORDER) {
    const share = room * LIST_SHARES[key];
    let spent = 0;
    for (const item of byImportance(key, lists[key])) {
      const c = cost(item) + (spent === 0 ? SECTION_TOKENS : 0);
      if (spent + c > share) break;
      spent += c;
      take(key, item);
    }
  }
  // 2. What the lists left unused, to the remaining items of any list: each list's next most
  // important first, the lists an agent needs to carry on before the history, then the newest.
  const rest = TRIM_ORDER.flatMap((key, order) =>
    byImportance(key, lists[key])
      .filter((item) => !chosen.get(key)?.has(item))
      .map((item, rankInList) => ({ key, item, order, rankInList })),
  );
  const tier = (key: ListKey) => (PRIORITY_LISTS.has(key) ? 0 : 1);
  rest.sort(
    (a, b) =>
      a.rankInList - b.rankInList ||
      tier(a.key) - tier(b.key) ||
      ageOf(b.item) - ageOf(a.item) ||
      b.order - a.order,
  );
  for (const { key, item } of rest) {
    const extra = cost(item) + ((chosen.get(key)?.size ?? 0) === 0 ? SECTION_TOKENS : 0);
    if (used + extra <= room) take(key, item);
  }
  // 3. What still did not fit: condensed into one short item per list, when that fits.
  const kept = {} as Record<ListKey, Item[]>;
  for (const key of TRIM_ORDER) {
    const set = chosen.get(key) as Set<Item>;
    const left = lists[key].filter((i) => !set.has(i));
    let items = lists[key].filter((i) => set.has(i));
    if (left.length > 0 && key !== 'files' && key !== 'errorsAndFixes') {
      const summary = condense(left);
      const short = { ...summary, text: clipWords(summary.text, CONDENSED_ITEM_CHARS) };
      if (used + cost(short) <= room) {
        used += cost(short);
        items = [short, ...items];
      }
    }
    kept[key] = items;
  }
  // 4. The estimate per item is close, not exact: drop the least important items while over.
  let checkpoint = assemble(fixed, kept);
  const order = TRIM_ORDER.flatMap((key, o) =>
    kept[key].map((item) => ({ key, item, o, rank: byImportance(key, kept[key]).indexOf(item) })),
  ).sort((a, b) => b.rank - a.rank || ageOf(a.item) - ageOf(b.item) || a.o - b.o);
  for (const { key, item } of order) {
    if (tokens(checkpoint) <= budget) break;
    kept[key] = kept[key].filter((i) => i !== item);
    checkpoint = assemble(fixed, kept);
  }
  return checkpoint;
}

/**
 * A list's items, most important first: files in their ranked order, other lists newest first, an
 * error still open at the cut ({@link Item.open}) before any other.
 */
function byImportance(key: ListKey, items: Item[]): Item[] {
  if (key === 'files') return [...items];
  return [...items].sort((a, b) => Number(b.open ?? false) - Number(a.open ?? false) || ageOf(b) - ageOf(a));
}

function assemble(fixed: Fixed, lists: Record<ListKey, Item[]>): Checkpoint {
  return {
    goal: fixed.goal,
    lastUserRequest: fixed.lastUserRequest,
    userInstructions: toEntries(lists.userInstructions),
    currentWork: fixed.currentWork,
    nextStep: fixed.nextStep,
    completed: toEntries(lists.completed),
    inProgress: toEntries(lists.inProgress),
    pending: toEntries(lists.pending),
    blockers: toEntries(lists.blockers),
    decisions: toEntries(lists.decisions),
    openQuestions: toEntries(lists.openQuestions),
    commands: toEntries(lists.commands),
    errorsAndFixes: lists.errorsAndFixes.flatMap((i) => (i.fix ? [i.fix] : [])),
    discoveries: toEntries(lists.discoveries),
    files: lists.files.flatMap((i) => (i.file ? [i.file] : [])),
    // Filled after the budget by the guard (shared/summary/guard.ts), a few short quoted items.
    suspectedInjections: [],
    workingSet: fixed.workingSet,
    // compactor's list, set by the guard too (shared/summary/media.ts); at most 20 short lines rendered.
    media: [],
  };
}
