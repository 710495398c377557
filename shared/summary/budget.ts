/**
 * How many tokens a summary may take, and how many output tokens a summary request asks for. Pure.
 *
 * A strategy's `maxSummaryTokens` (default 2,000) was a fixed size whatever left the context: 2,000
 * tokens for 3,000 leaving tokens and for 90,000 alike. The budget now grows with what leaves, so
 * a long stretch of work keeps proportionally more of its detail, while the configured value stays
 * the floor (a small compaction gets what it always got) and a cap keeps a huge one bounded.
 */

/** Share of the leaving tokens the budget grows to: 7%, e.g. 7,000 tokens for 100,000 leaving. */
export const SUMMARY_GROWTH_RATIO = 0.07;

/** The grown budget is at most this many times the configured `maxSummaryTokens`. */
export const SUMMARY_GROWTH_CAP_FACTOR = 4;

/**
 * Absolute cap of the grown budget, tokens: whatever `maxSummaryTokens` says (up to 32,000), a
 * budget never grows past it. A configured value above it is kept as it is (it is the floor).
 */
export const SUMMARY_ABSOLUTE_CAP_TOKENS = 16_000;

/**
 * Most of the leaving tokens a budget may be, when that is above the configured value: a summary
 * a quarter the size of what it replaces is the most a compaction should leave behind.
 */
export const SUMMARY_MAX_SHARE = 0.25;

/**
 * The effective summary budget of one compaction, tokens (the request's target and the extractive
 * summarizer's `maxSummaryTokens`).
 *
 * Rule: `max(configured, min(ceil(7% × leaving), 4 × configured, 16,000))`, then lowered to
 * `floor(25% × leaving)` when that is above `configured` and below the result. So:
 * - `configured` is the floor: never less than what the strategy says;
 * - it grows with the leaving tokens (7% of them) up to 4× the configured value or 16,000 tokens,
 *   whichever is lower;
 * - it never passes a quarter of the leaving tokens unless the floor itself does.
 *
 * Examples with the default 2,000: 10,000 leaving → 2,000; 50,000 → 3,500; 90,000 → 6,300;
 * 200,000 → 8,000 (the 4× cap).
 *
 * @param configured the strategy's `maxSummaryTokens`, tokens (an integer ≥ 1).
 * @param leavingTokens estimated tokens of the messages leaving (≥ 0; non-finite counts as 0).
 * @returns an integer ≥ `configured`.
 * @throws {RangeError} when `configured` is not a positive integer.
 */
export function summaryBudgetTokens(configured: number, leavingTokens: number): number {
  if (!Number.isInteger(configured) || configured < 1) {
    throw new RangeError(`summaryBudgetTokens: configured must be a positive integer, got ${configured}`);
  }
  const leaving = Number.isFinite(leavingTokens) && leavingTokens > 0 ? leavingTokens : 0;
  const cap = Math.min(SUMMARY_GROWTH_CAP_FACTOR * configured, SUMMARY_ABSOLUTE_CAP_TOKENS);
  // The epsilon keeps 7% of 90,000 at 6,300 (floating point makes it 6,300.000000000001).
  const grown = Math.ceil(SUMMARY_GROWTH_RATIO * leaving - 1e-6);
  let budget = Math.max(configured, Math.min(grown, cap));
  const share = Math.floor(SUMMARY_MAX_SHARE * leaving);
  if (share > configured) budget = Math.min(budget, share);
  return budget;
}

/** Least output tokens a request leaves for the `analysis` scratch field. */
export const MIN_ANALYSIS_TOKENS = 1_024;

/** Most output tokens a request leaves for the `analysis` scratch field. */
export const MAX_ANALYSIS_TOKENS = 4_096;

/**
 * Output tokens a summary request leaves for the model's `analysis` (its reasoning before the
 * checkpoint, discarded): half the summary budget, between 1,024 and 4,096 tokens. The prompt asks
 * for an analysis well under it (see {@link analysisWordTarget}).
 * @param budgetTokens the summary budget ({@link summaryBudgetTokens}), tokens.
 */
export function analysisAllowanceTokens(budgetTokens: number): number {
  return Math.min(MAX_ANALYSIS_TOKENS, Math.max(MIN_ANALYSIS_TOKENS, Math.round(budgetTokens / 2)));
}

/**
 * Words the prompt asks the analysis to stay under: half its allowance in tokens, at about 0.75
 * words a token, rounded down to 50 words. A model told "under 400 words" writes a few hundred;
 * the other half of the allowance is slack, so an analysis that runs long does not push the
 * checkpoint past `max_tokens`.
 * @param budgetTokens the summary budget, tokens.
 */
export function analysisWordTarget(budgetTokens: number): number {
  const words = (analysisAllowanceTokens(budgetTokens) / 2) * 0.75;
  return Math.max(50, Math.floor(words / 50) * 50);
}

/**
 * `max_tokens` of a summary request, tokens: the summary budget plus the analysis allowance. A
 * checkpoint that keeps to its target (75% of the budget) and an analysis that keeps to its word
 * target finish well before it.
 * @param budgetTokens the summary budget ({@link summaryBudgetTokens}), tokens.
 */
export function summaryMaxTokens(budgetTokens: number): number {
  return budgetTokens + analysisAllowanceTokens(budgetTokens);
}
