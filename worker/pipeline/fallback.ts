/**
 * The one fallback policy of the pipeline: what stands in when the summary a strategy asks for
 * cannot be had, and the reason the ledger row then records. Every route that ends somewhere other
 * than the summary asked for is decided here:
 *
 * | route         | when                                                   | answers                                          |
 * | ------------- | ------------------------------------------------------ | ------------------------------------------------ |
 * | `unavailable` | the strategy names a summarizer this process cannot run | the primary summarizer, noted                     |
 * | `budget`      | a spend budget refused the paid summary                 | clear old tool results, the offline summary, skip |
 * | `lowFidelity` | the summary scored under the strategy's `minFidelity`   | retry (a failed row), the offline summary, skip   |
 * | `lastAttempt` | the job's last attempt failed                           | the strategy's `fallback` summarizer, or fail     |
 *
 * An offline summary that stands in for another is held to the same `minFidelity`
 * ({@link judgeStandIn}). Pure: the pipeline's steps hand it the facts and carry out its answer.
 */

import type { FidelityCheck } from '../../shared/fidelity/score.ts';
import type { BudgetDecision } from '../../shared/policy/budget.ts';
import {
  clearToolResultsStrategySchema,
  type Strategy,
  type SummarizerName,
  type SummaryOptions,
} from '../../shared/strategies/index.ts';
import { type Summarizer, withSummaryBudget } from '../../shared/summary/summarizer.ts';
import { belowMinimum, fallbackLowReason } from './fidelity.ts';
import type { Summarizers } from './ports.ts';

/** A budget's refusal of a paid summary (shared/policy/budget.ts, `decideBudget`). */
export type BudgetRefusal = Extract<BudgetDecision, { allowed: false }>;

/** Why the summary asked for cannot be had: one of the four routes, with what it knows. */
export type FallbackRoute =
  | { route: 'unavailable'; name: SummarizerName }
  | { route: 'budget'; refusal: BudgetRefusal }
  | {
      route: 'lowFidelity';
      /** The strategy's `onLowFidelity` (absent: `skip`). */
      action: SummaryOptions['onLowFidelity'];
      /** The summary's {@link lowFidelityReason}. */
      low: string;
      /** The summarizer whose summary scored low. */
      summarizer: string;
      minimum: number;
    }
  | {
      route: 'lastAttempt';
      error: Error;
      /** Whether the error is one no retry can fix (`isPermanent`): nothing falls back then. */
      permanent: boolean;
      /** The summary options of the strategy in force; null when it writes no summary or is unknown. */
      options: SummaryOptions | null;
    };

/**
 * What the policy answers:
 * - `summarizer`: another summarizer writes the summary; `note` joins the ledger row's reason. With
 *   a `bar`, the stand-in is held to the same `minFidelity` and {@link judgeStandIn} words the
 *   note once it is scored.
 * - `strategy`: a strategy with no summary runs instead, its row's reason `note`.
 * - `skip`: nothing changes; a `skipped` row says `reason`.
 * - `retry`: nothing changes; a `failed` row holds `error` and `reason`, and the job retries.
 * - `fail`: nothing stands in; the failure stands.
 */
export type Fallback =
  | { kind: 'summarizer'; summarizer: Summarizer; note: string; bar?: { low: string; minimum: number } }
  | { kind: 'strategy'; strategy: Strategy; note: string }
  | { kind: 'skip'; reason: string }
  | { kind: 'retry'; error: string; reason: string }
  | { kind: 'fail' };

/** The answer of the policy for `route`, given the summarizers this process can run. */
export function fallbackFor(route: FallbackRoute, summarizers: Summarizers): Fallback {
  switch (route.route) {
    case 'unavailable':
      return {
        kind: 'summarizer',
        summarizer: summarizers.primary,
        note: `the strategy names the ${route.name} summarizer, which this worker cannot run (no ANTHROPIC_API_KEY): summarized by ${summarizers.primary.name}`,
      };
    case 'budget':
      return budgetFallback(route.refusal, summarizers.offline);
    case 'lowFidelity':
      return lowFidelityFallback(route, summarizers.offline);
    case 'lastAttempt':
      return lastAttemptFallback(route, summarizers);
    default:
      throw new Error(`unknown fallback route ${JSON.stringify(route satisfies never)}`);
  }
}

/**
 * The summarizer a strategy names, when this process runs it; else the primary one, with the
 * `unavailable` route's note for the ledger. A registry without `named` runs the primary for all.
 */
export function chooseSummarizer(
  summarizers: Summarizers,
  name: SummarizerName | undefined,
): { summarizer: Summarizer; note: string | undefined } {
  if (name === undefined || summarizers.named === undefined)
    return { summarizer: summarizers.primary, note: undefined };
  const named = summarizers.named[name];
  if (named) return { summarizer: named, note: undefined };
  const fallback = fallbackFor({ route: 'unavailable', name }, summarizers);
  if (fallback.kind !== 'summarizer') throw new Error('the unavailable route answers with a summarizer');
  return { summarizer: fallback.summarizer, note: fallback.note };
}

/**
 * Whether a stand-in held to `bar` may be committed: its row's note names it and its score, or
 * (under the bar too) the skip's reason names both scores.
 */
export function judgeStandIn(
  bar: { low: string; minimum: number },
  summarizer: string,
  check: FidelityCheck,
): { kind: 'pass'; note: string } | { kind: 'skip'; reason: string } {
  if (belowMinimum(check, bar.minimum))
    return { kind: 'skip', reason: fallbackLowReason(bar.low, summarizer, check) };
  return { kind: 'pass', note: `${bar.low}: summarized by ${summarizer} instead (fidelity ${check.score})` };
}

/** A budget's `onExceeded`: old tool results cleared, the offline summary (when there is one), or a skip. */
function budgetFallback(refusal: BudgetRefusal, offline: Summarizer | undefined): Fallback {
  if (refusal.action === 'clearToolResults') {
    return {
      kind: 'strategy',
      strategy: clearToolResultsStrategySchema.parse({ type: 'clearToolResults' }),
      note: `${refusal.reason}: cleared old tool results instead`,
    };
  }
  if (refusal.action === 'extractive' && offline) {
    // A stand-in for a paid summary gets the summary budget the paid one would have had.
    return {
      kind: 'summarizer',
      summarizer: withSummaryBudget(offline),
      note: `${refusal.reason}: summarized by ${offline.name} instead`,
    };
  }
  const why = refusal.action === 'skip' ? 'skipped' : 'skipped (no offline summarizer in this process)';
  return { kind: 'skip', reason: `${refusal.reason}: ${why}` };
}

/**
 * A strategy's `onLowFidelity`: retry, skip, or the offline summary held to the same bar (skipped
 * when there is none, or when the low summary was the offline one's).
 */
function lowFidelityFallback(
  route: Extract<FallbackRoute, { route: 'lowFidelity' }>,
  offline: Summarizer | undefined,
): Fallback {
  const { low, summarizer } = route;
  const action = route.action ?? 'skip';
  if (action === 'retry')
    return { kind: 'retry', error: low, reason: 'summary below minFidelity: not committed; the job retries' };
  if (action === 'skip') return { kind: 'skip', reason: `${low}: skipped` };
  if (!offline || offline.name === summarizer) {
    const which = offline ? `; ${summarizer} is the offline one` : '';
    return { kind: 'skip', reason: `${low}: skipped (no other summarizer to fall back to${which})` };
  }
  return {
    kind: 'summarizer',
    summarizer: withSummaryBudget(offline),
    note: low,
    bar: { low, minimum: route.minimum },
  };
}

/**
 * A strategy's `fallback` on the last attempt: `extractive` the offline summarizer (with the
 * summary budget of the paid one it replaces), `anthropic` the named `anthropic` one (for an
 * `anthropic-compaction` strategy whose compaction stayed unavailable); when this process has it.
 */
function lastAttemptFallback(
  route: Extract<FallbackRoute, { route: 'lastAttempt' }>,
  summarizers: Summarizers,
): Fallback {
  const { options, error } = route;
  if (route.permanent || options === null) return { kind: 'fail' };
  const stand =
    options.fallback === 'extractive'
      ? summarizers.offline && withSummaryBudget(summarizers.offline)
      : options.fallback === 'anthropic'
        ? summarizers.named?.anthropic
        : undefined;
  if (!stand) return { kind: 'fail' };
  const failed = chooseSummarizer(summarizers, options.summarizer).summarizer.name;
  const note = `fell back to ${stand.name}: ${failed} failed on the last attempt: ${error.message}`;
  return { kind: 'summarizer', summarizer: stand, note: note.slice(0, 2_000) };
}
