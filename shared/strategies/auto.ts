/**
 * `auto { clear?, summarize? }`: the cheap step first, the paid one only when it is still needed.
 * One job runs two stages, each its own compaction (its own ledger row, version bump and restore):
 * `clearToolResults` with the `clear` options (no LLM call), then, when the session is still over
 * its trigger, `summarize` with the `summarize` options. Both option sets are those of the
 * strategies themselves without `type`, every one defaulted, so `{ "type": "auto" }` (shorthand
 * `auto`) is clearing with its defaults, then summarize keeping the newest 10 messages. The stages
 * and the rule between them are run by the pipeline (worker/pipeline/pipeline.ts); this unit names
 * the stages and plans the next one for a dry run. Pure.
 */
import { z } from 'zod';
import {
  type ClearToolResultsStrategy,
  clearToolResults,
  clearToolResultsStrategySchema,
} from './clear-tool-results.ts';
import {
  DEFAULT_KEEP_RECENT,
  type SummarizeStrategy,
  summarize,
  summarizeStrategySchema,
} from './summarize.ts';
import { TAIL_USAGE } from './tail.ts';
import type { StrategyUnit } from './unit.ts';

export const autoStrategySchema = z
  .object({
    type: z.literal('auto'),
    /** Stage 1: the options of `clearToolResults` (`keep`, `clearAtLeast`, ...), each defaulted. */
    clear: clearToolResultsStrategySchema.omit({ type: true }).strict().prefault({}),
    /**
     * Stage 2, run only while the session is still over its trigger: the options of `summarize`,
     * `keepRecent` included, each defaulted (`keepRecent` to 10).
     */
    summarize: summarizeStrategySchema
      .omit({ type: true })
      .extend({ keepRecent: summarizeStrategySchema.shape.keepRecent.default(DEFAULT_KEEP_RECENT) })
      .strict()
      .prefault({}),
  })
  .strict();

export type AutoStrategy = z.infer<typeof autoStrategySchema>;

/** The first stage, as the `clearToolResults` strategy it runs. */
function clearStage(strategy: AutoStrategy): ClearToolResultsStrategy {
  return { type: 'clearToolResults', ...strategy.clear };
}

/** The second stage, as the `summarize` strategy it runs. */
function summarizeStage(strategy: AutoStrategy): SummarizeStrategy {
  return { type: 'summarize', ...strategy.summarize };
}

export const auto: StrategyUnit<AutoStrategy> = {
  type: 'auto',
  // The schema's input allows every option to be absent (they default); its output is the type.
  schema: autoStrategySchema as unknown as z.ZodType<AutoStrategy>,
  usage: `auto[:N]${TAIL_USAGE}`,
  // The count and the tail options are the summary stage's, as in `summarize[:N]`.
  shorthand: (n, tail) => ({
    type: 'auto',
    ...(n === undefined && Object.keys(tail).length === 0
      ? {}
      : { summarize: { keepRecent: n ?? DEFAULT_KEEP_RECENT, ...tail } }),
  }),
  describe: (strategy) =>
    `auto (${clearToolResults.describe(clearStage(strategy))}, then while over the trigger ` +
    `${summarize.describe(summarizeStage(strategy))})`,
  // The storm guard waits for what the last stage keeps: after it, only new messages can help.
  kept: (strategy) => summarize.kept(summarizeStage(strategy)),
  summarizes: true,
  summaryOptions: (strategy) => summarize.summaryOptions(summarizeStage(strategy)),
  stages: (strategy) => [clearStage(strategy), summarizeStage(strategy)],
  reads: (messages, strategy) => clearToolResults.reads?.(messages, clearStage(strategy)) ?? [],
  // For a dry run: the clearing when it would apply, else the summary (whether the pipeline runs
  // it depends on the trigger once the clearing is done).
  plan: (snapshot, messages, strategy) => {
    const clearing = clearToolResults.plan(snapshot, messages, clearStage(strategy));
    return clearing.action === 'compact'
      ? clearing
      : summarize.plan(snapshot, messages, summarizeStage(strategy));
  },
};
