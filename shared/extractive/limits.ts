/** Bounds of the extractive checkpoint: item lengths, list caps, and the budget share of each list. */

/** Longest goal taken from the first user request, in characters, `…` included. */
export const GOAL_CHARS = 500;

/** Longest goal when the goal's request is also the last request, shown in full below it. */
export const SHORT_GOAL_CHARS = 200;

/**
 * Longest list item the extractive summarizer writes, in characters (the schema allows 2,000): a
 * rule or a decision with its reason often runs past 300 and is kept verbatim.
 */
export const ITEM_CHARS = 400;

/** Most items kept per list after merging with the previous checkpoint. */
export const LIST_CAPS = {
  userInstructions: 16,
  completed: 15,
  inProgress: 8,
  pending: 8,
  blockers: 10,
  decisions: 12,
  openQuestions: 6,
  commands: 8,
  errorsAndFixes: 8,
  discoveries: 8,
  files: 15,
} as const;

/** The name of one of the checkpoint's lists the extractive summarizer fills. */
export type ListKey = keyof typeof LIST_CAPS;

/**
 * The share of the list budget (what goal, request and working set leave of `maxSummaryTokens`) each
 * list is guaranteed; what a list leaves unused goes to the others, newest items first.
 */
export const LIST_SHARES: Record<ListKey, number> = {
  // What the agent needs to carry on first: the user's rules, open errors, decisions, commands,
  // the state of the work and the files; the history (completed work, fixed errors, findings) after.
  userInstructions: 0.24,
  blockers: 0.12,
  decisions: 0.07,
  commands: 0.06,
  inProgress: 0.05,
  pending: 0.07,
  files: 0.14,
  completed: 0.08,
  errorsAndFixes: 0.06,
  discoveries: 0.07,
  openQuestions: 0.04,
};

/** Share of `maxSummaryTokens` the last user request may take before it is condensed. */
export const REQUEST_SHARE = 0.35;

/** Most working-set paths in a checkpoint (the schema's bound). */
export const MAX_WORKING_SET = 10_000;

/** Lists in trimming order when over budget: at equal age, completed work goes first. */
export const TRIM_ORDER: ListKey[] = [
  'completed',
  'openQuestions',
  'decisions',
  'discoveries',
  'files',
  'errorsAndFixes',
  'commands',
  'blockers',
  'pending',
  'inProgress',
  'userInstructions',
];

/**
 * The lists the budget's leftover goes to first, at equal rank within their lists: what the agent
 * needs to carry on (rules, open errors, decisions, commands, the state of the work, files), before
 * the history (completed work, fixed errors, findings, open questions).
 */
export const PRIORITY_LISTS: ReadonlySet<ListKey> = new Set<ListKey>([
  'userInstructions',
  'blockers',
  'decisions',
  'commands',
  'inProgress',
  'pending',
  'files',
]);
