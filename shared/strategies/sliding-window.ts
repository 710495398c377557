/**
 * `slidingWindow { maxMessages }`: keep the newest N messages, archive the rest, no summary. Earlier
 * summary messages stay, since nothing else would carry what they say.
 */
import { z } from 'zod';
import { planWindow } from '../planning/window.ts';
import type { StrategyUnit } from './unit.ts';

export const slidingWindowStrategySchema = z
  .object({
    type: z.literal('slidingWindow'),
    /** Newest messages kept verbatim (pinned messages are kept on top of these). */
    maxMessages: z.number().int().min(1).max(100_000),
  })
  .strict();

export type SlidingWindowStrategy = z.infer<typeof slidingWindowStrategySchema>;

export const slidingWindow: StrategyUnit<SlidingWindowStrategy> = {
  type: 'slidingWindow',
  schema: slidingWindowStrategySchema,
  usage: 'slidingWindow:N',
  shorthand: (n) => ({ type: 'slidingWindow', maxMessages: n }),
  describe: (strategy) => `slidingWindow:${strategy.maxMessages}`,
  kept: (strategy) => strategy.maxMessages,
  summarizes: false,
  summaryOptions: () => null,
  plan: (snapshot, messages, strategy) =>
    planWindow(snapshot, messages, {
      strategy: 'slidingWindow',
      keep: strategy.maxMessages,
      keepSummaries: true,
      summarizes: false,
    }),
};
