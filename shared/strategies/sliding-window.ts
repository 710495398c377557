/**
 * `slidingWindow { maxMessages, keepRecentTokens?, cutAtUserTurn? }`: keep the newest N messages
 * (or the newest `keepRecentTokens` estimated tokens, whichever keeps more), archive the rest, no
 * summary. Earlier summary messages stay, since nothing else would carry what they say.
 */
import { z } from 'zod';
import { planWindow } from '../planning/window.ts';
import { cutAtUserTurnSchema, keepRecentTokensSchema, TAIL_USAGE, tailShorthand } from './tail.ts';
import type { StrategyUnit } from './unit.ts';

export const slidingWindowStrategySchema = z
  .object({
    type: z.literal('slidingWindow'),
    /** Newest messages kept verbatim (pinned messages are kept on top of these). */
    maxMessages: z.number().int().min(1).max(100_000),
    /**
     * Estimated tokens the kept tail holds at least; with `maxMessages`, whichever tail is larger
     * is kept. Absent: the tail is counted in messages only.
     */
    keepRecentTokens: keepRecentTokensSchema.optional(),
    /** The kept tail begins with a user turn (the cut moves down to one). Absent means false. */
    cutAtUserTurn: cutAtUserTurnSchema.optional(),
  })
  .strict();

export type SlidingWindowStrategy = z.infer<typeof slidingWindowStrategySchema>;

export const slidingWindow: StrategyUnit<SlidingWindowStrategy> = {
  type: 'slidingWindow',
  schema: slidingWindowStrategySchema,
  usage: `slidingWindow:N${TAIL_USAGE}`,
  shorthand: (n, tail) => ({ type: 'slidingWindow', maxMessages: n, ...tail }),
  describe: (strategy) => `slidingWindow:${strategy.maxMessages}${tailShorthand(strategy)}`,
  kept: (strategy) => strategy.maxMessages,
  summarizes: false,
  summaryOptions: () => null,
  plan: (snapshot, messages, strategy) =>
    planWindow(snapshot, messages, {
      strategy: 'slidingWindow',
      keep: strategy.maxMessages,
      keepTokens: strategy.keepRecentTokens,
      cutAtUserTurn: strategy.cutAtUserTurn,
      keepSummaries: true,
      summarizes: false,
    }),
};
