/**
 * `summarize { keepRecent, keepRecentTokens?, cutAtUserTurn?, maxSummaryTokens, model, fallback,
 * instructions? }`: the messages below the kept window (the newest `keepRecent` messages, or the
 * newest `keepRecentTokens` estimated tokens, whichever keeps more) are replaced by one summary
 * message holding the structured checkpoint, merged with the previous one. Earlier summaries leave
 * too: the previous checkpoint is merged instead, so nothing is summarized twice.
 */
import { z } from 'zod';
import { storableText } from '../contract/unicode.ts';
import { planWindow } from '../planning/window.ts';
import { MAX_INSTRUCTIONS_CHARS } from './instructions-limit.ts';
import { cutAtUserTurnSchema, keepRecentTokensSchema, TAIL_USAGE, tailShorthand } from './tail.ts';
import type { StrategyUnit } from './unit.ts';

export { MAX_INSTRUCTIONS_CHARS } from './instructions-limit.ts';

/** The summarizers a strategy may name (`summarizer`). */
export const SUMMARIZER_NAMES = [
  'anthropic',
  'anthropic-compaction',
  'openai',
  'openai-compaction',
  'extractive',
] as const;

/** What a summary under its strategy's `minFidelity` leads to. */
export const ON_LOW_FIDELITY = ['skip', 'retry', 'fallback'] as const;

/** A summarizer a strategy may name. */
export type SummarizerName = (typeof SUMMARIZER_NAMES)[number];

/** Whether `text` holds a control character other than tab, line feed and carriage return (C0, DEL, C1). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x09 || code === 0x0a || code === 0x0d) continue;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/**
 * Summary instructions: free text from the operator that refines what the `anthropic` summarizer
 * keeps. Trimmed; refused when blank, longer than {@link MAX_INSTRUCTIONS_CHARS}, or not printable
 * text (control characters other than tab and line breaks, unpaired surrogates).
 */
export const summaryInstructionsSchema = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .max(MAX_INSTRUCTIONS_CHARS, `must be at most ${MAX_INSTRUCTIONS_CHARS.toLocaleString('en-US')} characters`)
  .refine((text) => !hasControlCharacter(text), {
    message: 'must be printable text (no control characters but tab and line breaks)',
  })
  // storableText changes nothing but unpaired surrogates once control characters are refused.
  .refine((text) => storableText(text) === text, {
    message: 'must be printable text (no unpaired surrogates)',
  });

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
    /** Model override for the LLM summarizer (`anthropic`, `anthropic-compaction` or `openai`). */
    model: z.string().min(1).max(200).optional(),
    /**
     * Opt-in: when the LLM summary still fails on the job's last attempt (outage, refusals), use the
     * `extractive` summarizer instead, so the session stays bounded; the ledger records it.
     * `anthropic` (for `summarizer: 'anthropic-compaction'`, when compaction stays unavailable):
     * the `anthropic` summarizer's client-side summary instead. Absent means `none`.
     */
    fallback: z.enum(['none', 'extractive', 'anthropic']).optional(),
    /**
     * Which summarizer writes the summary. Absent: the process's (`COMPACTOR_SUMMARIZER`; else
     * `anthropic` with an Anthropic key, `openai` with an OpenAI key, else `extractive`). `openai`:
     * an OpenAI-compatible Chat Completions server (OpenAI, Azure OpenAI, vLLM, Ollama, ...). `anthropic-compaction`: Anthropic's on-demand compaction (beta
     * `compact-2026-09-04`): a signed `compaction` block the context sends first, the one summary
     * after which kept turns can keep their thinking; compactor's extractive checkpoint is kept
     * beside it. `openai-compaction` (an `openai-responses` session only): OpenAI's
     * `/responses/compact`, whose opaque `compaction` item the context sends first, the extractive
     * checkpoint kept beside it. A summarizer this process cannot run (no API key) is replaced by
     * the process's, and the ledger row says so.
     */
    summarizer: z.enum(SUMMARIZER_NAMES).optional(),
    /**
     * What the summary must keep, in the operator's words (e.g. "keep every SQL statement
     * verbatim"): sent to the `anthropic` summarizer in the user turn, never in the cached system
     * prompt, and recorded in the ledger. The `extractive` summarizer (offline, and the fallback)
     * cannot follow free text and ignores them.
     */
    instructions: summaryInstructionsSchema.optional(),
    /**
     * The least fidelity (shared/fidelity/score.ts: how much of the leaving messages' paths, last
     * request, user instructions, open error and pinned messages the summary kept, 0..1) a summary
     * must score to be committed. Absent: every summary is scored and recorded, none held back.
     */
    minFidelity: z.number().min(0).max(1).optional(),
    /**
     * What a summary under `minFidelity` leads to (it is never committed): `skip` (default) a
     * skipped ledger row with the score; `retry` a failed row, then the job retries (a new summary
     * on the next attempt); `fallback` a summary by the extractive summarizer instead, held to the
     * same bar. Each case is recorded in the ledger with the score.
     */
    onLowFidelity: z.enum(ON_LOW_FIDELITY).optional(),
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
      ...(strategy.summarizer ? [`summarizer ${strategy.summarizer}`] : []),
      ...(strategy.fallback ? [`fallback ${strategy.fallback}`] : []),
      ...(strategy.instructions ? ['with instructions'] : []),
      ...(strategy.minFidelity !== undefined
        ? [`min fidelity ${strategy.minFidelity} (else ${strategy.onLowFidelity ?? 'skip'})`]
        : []),
    ];
    return `summarize:${strategy.keepRecent}${tailShorthand(strategy)} (${extras.join(', ')})`;
  },
  kept: (strategy) => strategy.keepRecent,
  summarizes: true,
  // Every option but the window's is a summary option.
  summaryOptions: ({
    type: _type,
    keepRecent: _n,
    keepRecentTokens: _tokens,
    cutAtUserTurn: _turn,
    ...options
  }) => options,
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
