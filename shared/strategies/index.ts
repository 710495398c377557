/**
 * Compaction strategies: how a session is compacted. Pure data + zod schemas, shared by
 * the producer (event overrides) and the worker (planning).
 */
import { z } from 'zod';

export const noneStrategySchema = z.object({ type: z.literal('none') }).strict();

export const slidingWindowStrategySchema = z
  .object({
    type: z.literal('slidingWindow'),
    /** Newest messages kept verbatim (pinned messages are kept on top of these). */
    maxMessages: z.number().int().min(1).max(100_000),
  })
  .strict();

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

/** One of `none`, `slidingWindow { maxMessages }`, `summarize { keepRecent, maxSummaryTokens?, model? }`. */
export const strategySchema = z.discriminatedUnion('type', [
  noneStrategySchema,
  slidingWindowStrategySchema,
  summarizeStrategySchema,
]);

export type Strategy = z.infer<typeof strategySchema>;
export type SlidingWindowStrategy = z.infer<typeof slidingWindowStrategySchema>;
export type SummarizeStrategy = z.infer<typeof summarizeStrategySchema>;

/** Built-in default when neither the event nor a policy says otherwise. */
export const DEFAULT_STRATEGY: Strategy = {
  type: 'summarize',
  keepRecent: 10,
  maxSummaryTokens: 2_000,
};

/**
 * Parses the CLI shorthand: `none`, `slidingWindow:50`, `summarize`, `summarize:20`, or a JSON
 * object of {@link strategySchema}.
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
    const [type, arg, ...rest] = trimmed.split(':');
    const n = arg === undefined || arg === '' ? undefined : Number(arg);
    if (rest.length > 0 || (n !== undefined && !Number.isInteger(n))) {
      throw new Error(`strategy: cannot read "${trimmed}"; use none, slidingWindow:N, summarize[:N] or JSON`);
    }
    if (type === 'none') candidate = { type };
    else if (type === 'slidingWindow') candidate = { type, maxMessages: n };
    else if (type === 'summarize') candidate = { type, keepRecent: n ?? DEFAULT_STRATEGY_KEEP_RECENT };
    else
      throw new Error(`strategy: unknown type "${type}"; use none, slidingWindow:N, summarize[:N] or JSON`);
  }
  const parsed = strategySchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`strategy.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

const DEFAULT_STRATEGY_KEEP_RECENT = 10;
