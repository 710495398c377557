/** Bounds of the extractive checkpoint: item lengths, list caps, and the order lists are trimmed in. */

/** Longest goal taken from the first user message, in characters, `…` included. */
export const GOAL_CHARS = 500;

/** Longest list item the extractive summarizer writes, in characters (the schema allows 2,000). */
export const ITEM_CHARS = 300;

/** Most items kept per list after merging with the previous checkpoint. */
export const LIST_CAPS = {
  completed: 15,
  inProgress: 8,
  pending: 8,
  blockers: 10,
  decisions: 12,
  openQuestions: 6,
} as const;

/** Most working-set paths in a checkpoint (the schema's bound). */
export const MAX_WORKING_SET = 10_000;

/** The name of one of the checkpoint's lists. */
export type ListKey = keyof typeof LIST_CAPS;

/** Lists in trimming order: at equal age, completed work goes first and the current state last. */
export const TRIM_ORDER: ListKey[] = [
  'completed',
  'openQuestions',
  'decisions',
  'blockers',
  'pending',
  'inProgress',
];
