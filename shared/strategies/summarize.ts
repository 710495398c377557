/**
 * `summarize { keepRecent, keepRecentTokens?, cutAtUserTurn?, maxSummaryTokens, model, fallback }`:
 * the messages below the kept window (the newest `keepRecent` messages, or the newest
 * `keepRecentTokens` estimated tokens, whichever keeps more) are replaced by one summary message holding the structured checkpoint, merged with the previous
 * one. Earlier summaries leave too: the previous checkpoint is merged instead, so nothing is
 * summarized twice.
 */
import { z } from 'zod';
import { planWindow } from '../planning/window.ts';
import { cutAtUserTurnSchema, keepRecentTokensSchema, TAIL_USAGE, tailShorthand } from './tail.ts';
import type { StrategyUnit } from './unit.ts';

export const summarizeStrategySchema = z
  .object({
    type: z.literal('summarize'),
    /** Newest messages kept verbatim after the summary. */
    keepRecent: z.number().int().min(0).max(100_000),
    /**
     * Estimated tokens the kept tail holds at least; with `keepRecent`, whichever tail is larger is
     * kept. Absent: the tail is counted in messages only.
     */
    keepRecentTokens: keepRecentTokensSchema.optional(),
    /** The kept tail begins with a user turn (the cut moves down to one). Absent means false. */
    cutAtUserTurn: cutAtUserTurnSchema.optional(),
    /** Upper bound of the checkpoint, in tokens. */
    maxSummaryTokens: z.number().int().min(256).max(32_000).default(2_000),
    /** Model override for the `anthropic` summarizer. */
    model: z.string().min(1).max(200).optional(),
    /**
     * Opt-in: when the LLM summary still fails on the job's last attempt (outage, refusals), use the
     * `extractive` summarizer instead, so the session stays bounded; the ledger records it.
     * Absent means `none`.
     */
    fallback: z.enum(['none', 'extractive']).optional(),
  })
  .strict();

export type SummarizeStrategy = z.infer<typeof summarizeStrategySchema>;

/** Messages `summarize` keeps when the shorthand names no number. */
export const DEFAULT_KEEP_RECENT = 10;

export const summarize: StrategyUnit<SummarizeStrategy> = {
  type: 'summarize',
  // The schema's input allows `maxSummaryTokens` to be absent (it defaults); its output is the type.
  schema: summarizeStrategySchema as unknown as z.ZodType<SummarizeStrategy>,
  usage: `summarize[:N]${TAIL_USAGE}`,
  shorthand: (n, tail) => ({ type: 'summarize', keepRecent: n ?? DEFAULT_KEEP_RECENT, ...tail }),
  describe: (strategy) => {
    const extras = [
      `summary up to ${strategy.maxSummaryTokens.toLocaleString('en-US')} tokens`,
      ...(strategy.model ? [`model ${strategy.model}`] : []),
      ...(strategy.fallback ? [`fallback ${strategy.fallback}`] : []),
    ];
    return `summarize:${strategy.keepRecent}${tailShorthand(strategy)} (${extras.join(', ')})`;
  },
  kept: (strategy) => strategy.keepRecent,
  summarizes: true,
  summaryOptions: ({ maxSummaryTokens, model, fallback }) => ({ maxSummaryTokens, model, fallback }),
  plan: (snapshot, messages, strategy) =>
    planWindow(snapshot, messages, {
      strategy: 'summarize',
      keep: strategy.keepRecent,
      keepTokens: strategy.keepRecentTokens,
      cutAtUserTurn: strategy.cutAtUserTurn,
      keepSummaries: false,
      summarizes: true,
    }),
};
