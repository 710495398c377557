/**
 * The bound on a strategy's summary instructions, apart from the strategy schemas so that the
 * command line can state it in its help without loading them (summarize.ts re-exports it).
 */

/**
 * Longest summary instructions, in characters. They travel in every summary request (each chunk of
 * a long transcript) and in every ledger row, so they are kept to a short brief: 4,000 characters
 * is about 1,000 tokens, room for a list of what to keep, yet a small share of a request's input
 * budget and as long as the longest message the prompt shows.
 */
export const MAX_INSTRUCTIONS_CHARS = 4_000;
