/**
 * The kept tail's options, shared by every strategy that keeps its newest messages verbatim
 * (`slidingWindow`, `summarize`): a tail measured in estimated tokens beside the message count, and
 * a cut only where a user turn begins. Pure: schemas and their shorthand, no I/O.
 */
import { z } from 'zod';

/** Largest `keepRecentTokens` accepted, in estimated tokens: more than any model's context window. */
export const MAX_KEEP_RECENT_TOKENS = 2_000_000;

/**
 * `keepRecentTokens`: the kept tail holds at least this many estimated tokens (the messages'
 * `tokenCount`), or the whole session if it holds fewer. Beside a message count, the larger tail wins.
 */
export const keepRecentTokensSchema = z
  .number({ error: 'must be a number of tokens' })
  .int({ error: 'must be a whole number of tokens' })
  .min(1, { error: 'must be at least 1 token' })
  .max(MAX_KEEP_RECENT_TOKENS, {
    error: `must be at most ${MAX_KEEP_RECENT_TOKENS.toLocaleString('en-US')} tokens`,
  });

/**
 * `cutAtUserTurn`: the kept tail begins with a user turn (a user message that answers no tool call);
 * the cut moves to an earlier message when needed, so it only ever keeps more. Absent means false.
 */
export const cutAtUserTurnSchema = z.boolean({ error: 'must be true or false' });

/** The tail options a shorthand may add after the message count (`:20000tokens`, `:userTurn`). */
export interface TailShorthand {
  /** Estimated tokens the kept tail holds at least. */
  keepRecentTokens?: number;
  /** The kept tail begins with a user turn. */
  cutAtUserTurn?: true;
}

/** The shorthand's form of the tail options, for help texts. */
export const TAIL_USAGE = '[:Ttokens][:userTurn]';

/** The shorthand's suffix for the tail options of a strategy: `:20000tokens:userTurn`, or nothing. */
export function tailShorthand(strategy: {
  keepRecentTokens?: number | undefined;
  cutAtUserTurn?: boolean | undefined;
}): string {
  return (
    (strategy.keepRecentTokens !== undefined ? `:${strategy.keepRecentTokens}tokens` : '') +
    (strategy.cutAtUserTurn ? ':userTurn' : '')
  );
}

/**
 * Reads one shorthand part after the message count: `<T>tokens` or `userTurn`, else null.
 * A number that is not a whole number is returned as it was written, for the schema to refuse.
 */
export function readTailPart(part: string): TailShorthand | null {
  if (part === 'userTurn') return { cutAtUserTurn: true };
  const tokens = /^(\d+(?:\.\d+)?)tokens$/.exec(part);
  return tokens ? { keepRecentTokens: Number(tokens[1]) } : null;
}
