/**
 * The strategy registry: every compaction strategy, its JSON schema (a discriminated union on
 * `type`, shared by the producer's event overrides, stored policies and the CLI), its shorthand and
 * its unit. A new strategy is a file beside this one and a line in {@link STRATEGIES} and
 * {@link strategySchema}.
 */
import { z } from 'zod';
import { auto, autoStrategySchema } from './auto.ts';
import { clearThinking, clearThinkingStrategySchema } from './clear-thinking.ts';
import { clearToolResults, clearToolResultsStrategySchema } from './clear-tool-results.ts';
import { none, noneStrategySchema } from './none.ts';
import { slidingWindow, slidingWindowStrategySchema } from './sliding-window.ts';
import { summarize, summarizeStrategySchema } from './summarize.ts';
import { readTailPart, type TailShorthand } from './tail.ts';
import type { StrategyUnit } from './unit.ts';

export { type AutoStrategy, autoStrategySchema } from './auto.ts';
export { type ClearThinkingStrategy, clearThinkingStrategySchema } from './clear-thinking.ts';
export {
  CLEARED_RESULT_PREFIX,
  type ClearToolResultsStrategy,
  clearToolResultsStrategySchema,
} from './clear-tool-results.ts';
export { type NoneStrategy, noneStrategySchema } from './none.ts';
export { type SlidingWindowStrategy, slidingWindowStrategySchema } from './sliding-window.ts';
export {
  MAX_INSTRUCTIONS_CHARS,
  ON_LOW_FIDELITY,
  SUMMARIZER_NAMES,
  type SummarizerName,
  type SummarizeStrategy,
  summarizeStrategySchema,
  summaryInstructionsSchema,
} from './summarize.ts';
export { MAX_KEEP_RECENT_TOKENS, type TailShorthand } from './tail.ts';
export type { StrategyUnit, SummaryOptions } from './unit.ts';

/**
 * One of `none`, `slidingWindow { maxMessages, keepRecentTokens?, cutAtUserTurn? }`,
 * `summarize { keepRecent, keepRecentTokens?, cutAtUserTurn?, maxSummaryTokens?, model?, fallback?, instructions? }`,
 * `clearToolResults { keep?, clearAtLeast?, clearToolInputs?, excludeTools? }`, `clearThinking { keep? }`,
 * `auto { clear?, summarize? }` (clearToolResults, then summarize while still over the trigger).
 */
export const strategySchema = z.discriminatedUnion('type', [
  noneStrategySchema,
  slidingWindowStrategySchema,
  summarizeStrategySchema,
  clearToolResultsStrategySchema,
  clearThinkingStrategySchema,
  autoStrategySchema,
]);

export type Strategy = z.infer<typeof strategySchema>;

/** Every strategy's unit, by name. */
export const STRATEGIES: { readonly [T in Strategy['type']]: StrategyUnit<Extract<Strategy, { type: T }>> } =
  {
    none,
    slidingWindow,
    summarize,
    clearToolResults,
    clearThinking,
    auto,
  };

/** The unit of a parsed strategy (its planning rule, whether it summarizes). */
export function strategyUnit<S extends Strategy>(strategy: S): StrategyUnit<S> {
  return STRATEGIES[strategy.type] as unknown as StrategyUnit<S>;
}

/** The summary instructions a strategy carries, or null (none given, or a strategy that writes no summary). */
export function instructionsOf(strategy: Strategy): string | null {
  return strategyUnit(strategy).summaryOptions(strategy)?.instructions ?? null;
}

/** Built-in default when neither the event nor a policy says otherwise. */
export const DEFAULT_STRATEGY: Strategy = {
  type: 'summarize',
  keepRecent: 10,
  maxSummaryTokens: 2_000,
};

const FORMS = `${Object.values(STRATEGIES)
  .map((unit) => unit.usage)
  .join(', ')} or JSON`;

/**
 * Parses the CLI shorthand: `none`, `slidingWindow:50`, `summarize`, `summarize:20`,
 * `clearToolResults`, `clearToolResults:3` (the tool uses kept), `clearThinking`, `clearThinking:1`
 * (the assistant turns whose thinking stays), `auto`, `auto:20` (the summary stage's count), the
 * first two and `auto` with
 * tail options after the count (`slidingWindow:10:20000tokens:userTurn`, `summarize:20000tokens`),
 * or a JSON object of {@link strategySchema}.
 * @throws {Error} naming the bad text and the accepted forms.
 */
export function parseStrategy(text: string): Strategy {
  const trimmed = text.trim();
  let candidate: unknown;
  if (trimmed.startsWith('{')) {
    try {
      candidate = JSON.parse(trimmed);
    } catch {
      throw new Error(`strategy: not valid JSON: ${trimmed.slice(0, 80)}`);
    }
  } else {
    const [type = '', ...parts] = trimmed.split(':');
    const countText = parts[0] !== undefined && readTailPart(parts[0]) === null ? parts.shift() : undefined;
    const n = countText === undefined || countText === '' ? undefined : Number(countText);
    const tail: TailShorthand = {};
    for (const part of parts) {
      const option = readTailPart(part);
      const repeated = option && Object.keys(option).some((key) => Object.hasOwn(tail, key));
      if (!option || repeated) throw new Error(`strategy: cannot read "${trimmed}"; use ${FORMS}`);
      Object.assign(tail, option);
    }
    if (n !== undefined && !Number.isInteger(n)) {
      throw new Error(`strategy: cannot read "${trimmed}"; use ${FORMS}`);
    }
    const unit = Object.hasOwn(STRATEGIES, type) ? STRATEGIES[type as Strategy['type']] : undefined;
    if (!unit) throw new Error(`strategy: unknown type "${type}"; use ${FORMS}`);
    candidate = unit.shorthand(n, tail);
  }
  const parsed = strategySchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    throw new Error(`strategy${path === '' ? '' : `.${path}`}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
