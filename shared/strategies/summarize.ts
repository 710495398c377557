/**
 * `summarize { keepRecent, maxSummaryTokens, model, fallback }`: the messages below the kept window
 * are replaced by one summary message holding the structured checkpoint, merged with the previous
 * one. Earlier summaries leave too: the previous checkpoint is merged instead, so nothing is
 * summarized twice.
 */
import { z } from 'zod';
import { planWindow } from '../planning/window.ts';
import type { StrategyUnit } from './unit.ts';

export const summarizeStrategySchema = z
  .object({
    type: z.literal('summarize'),
    /** Newest messages kept verbatim after the summary. */
    keepRecent: z.number().int().min(0).max(100_000),
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
  usage: 'summarize[:N]',
  shorthand: (n) => ({ type: 'summarize', keepRecent: n ?? DEFAULT_KEEP_RECENT }),
  describe: (strategy) => {
    const extras = [
      `summary up to ${strategy.maxSummaryTokens.toLocaleString('en-US')} tokens`,
      ...(strategy.model ? [`model ${strategy.model}`] : []),
      ...(strategy.fallback ? [`fallback ${strategy.fallback}`] : []),
    ];
    return `summarize:${strategy.keepRecent} (${extras.join(', ')})`;
  },
  kept: (strategy) => strategy.keepRecent,
  summarizes: true,
  summaryOptions: ({ maxSummaryTokens, model, fallback }) => ({ maxSummaryTokens, model, fallback }),
  plan: (snapshot, messages, strategy) =>
    planWindow(snapshot, messages, {
      strategy: 'summarize',
      keep: strategy.keepRecent,
      keepSummaries: false,
      summarizes: true,
    }),
};
