/**
 * Does a compaction pay for itself? Pure arithmetic on a plan's token counts and the pricing table
 * (shared/summary/pricing.ts): no I/O, no clock.
 *
 * A compaction saves the tokens it removes on every later request of the session, and costs the
 * summary call (none for the strategies that call no LLM) plus one cache rewrite: the first request
 * after it finds the cached prefix changed from the first edited message on, so the kept context is
 * written to the cache again at the cache-write rate instead of read at the cache-read rate.
 *
 * Prices (Anthropic, platform.claude.com/docs/en/build-with-claude/prompt-caching and
 * .../about-claude/pricing, read November 2026): a 5-minute cache write costs 1.25 x the base input
 * rate, a cache read 0.1 x on most models (every rate is taken from the pricing table as written).
 * "Clearing invalidates the cached prefix" (.../build-with-claude/context-editing), and so does a
 * summary: only exact prefixes are read from the cache. OpenAI's models cache exact prefixes too
 * (developers.openai.com/api/docs/guides/prompt-caching; writes are free before GPT-5.6, 1.25 x
 * after), so the same arithmetic holds with their rates.
 *
 * Assumption, stated once: an agent with prompt caching on (`promptCaching`, the default) reads its
 * whole stable prefix from the cache on every request, so a token removed saves the cache-read rate
 * per request, not the input rate. That is the conservative choice: an agent without caching saves
 * ten times more per token, and pays no rewrite.
 */
import { z } from 'zod';
import { costUsd, priceOf, type TokenRates } from '../summary/pricing.ts';
import type { SummaryEstimate } from '../summary/summarizer.ts';

/** The model the agent's requests are priced at when the policy names none. */
export const DEFAULT_AGENT_MODEL = 'claude-sonnet-4-6';

/** The horizon the `fidelity` report and the docs use for a fixed comparison, in requests. */
export const REFERENCE_HORIZON_REQUESTS = 20;

/**
 * A policy's `payback`: skip a compaction whose predicted savings over the session's expected
 * remaining requests are less than `minRatio` times its predicted cost.
 * - `minRatio`: savings / cost below which the compaction is skipped (1: it must at least pay back).
 * - `horizonRequests`: the requests the session is expected to make after the compaction; absent:
 *   estimated from the session's own history ({@link expectedRequests}).
 * - `model`: the model the agent's requests run on, for their prices; default {@link DEFAULT_AGENT_MODEL}.
 *   A Claude or an OpenAI model of the pricing table (`gpt-5.5`, a dated snapshot, `openai/…`):
 *   an OpenAI model's cache reads cost its "cached input" rate and its cache writes its input rate
 *   (no write premium before GPT-5.6; OpenAI's prompt-caching guide), so its rewrite costs
 *   input − cached input a token. GPT-5.6 and later, which are not in the table, are refused.
 * - `promptCaching`: whether the agent's requests read their prefix from the prompt cache (default true).
 */
export const paybackSchema = z
  .object({
    minRatio: z.number().min(0).max(1_000),
    horizonRequests: z.number().int().min(1).max(1_000_000).optional(),
    model: z
      .string()
      .min(1)
      .max(200)
      .refine((m) => priceOf(m) !== undefined, {
        message: 'has no price in the pricing table: name a priced model (e.g. claude-sonnet-4-6, gpt-5.5)',
      })
      .optional(),
    promptCaching: z.boolean().default(true),
  })
  .strict();

export type PaybackPolicy = z.infer<typeof paybackSchema>;

/** Where the number of requests came from: the policy's `horizonRequests`, or the session's history. */
export type HorizonSource = 'policy' | 'history';

/**
 * The requests a session is expected to make from now on.
 *
 * Estimator (Gott's "Copernican" rule, J. R. Gott, Nature 363, 1993): with nothing known but how long
 * something has lasted, its expected remaining life is as long again. A session that has made `n`
 * requests so far is expected to make `n` more. The requests so far are the assistant messages
 * of its live history (one model response per request); that undercounts after an earlier compaction
 * archived some, which errs towards predicting less savings. At least 1.
 * @param horizonRequests the policy's fixed horizon, which wins when set.
 */
export function expectedRequests(
  horizonRequests: number | undefined,
  assistantMessages: number,
): { requests: number; source: HorizonSource } {
  if (horizonRequests !== undefined) return { requests: horizonRequests, source: 'policy' };
  return { requests: Math.max(1, Math.floor(assistantMessages)), source: 'history' };
}

/** What a prediction is made from. Tokens are compactor's estimates. */
export interface PaybackInput {
  /** The session's tokens before the compaction. */
  tokensBefore: number;
  /** Its tokens after (before minus what leaves, plus the summary at its maximum length). */
  tokensAfter: number;
  /** Requests expected after the compaction, and where that number came from. */
  requests: number;
  horizon: HorizonSource;
  /** The model the agent's requests are priced at. */
  agentModel: string;
  promptCaching: boolean;
  /** The summary call as sized before it is made; null for a strategy that calls no LLM. */
  summary: SummaryEstimate | null;
}

/** The inputs and intermediate figures of a prediction, recorded in the ledger (`payback_inputs`). */
export interface PaybackInputs {
  tokensBefore: number;
  tokensAfter: number;
  tokensSavedPerRequest: number;
  requests: number;
  horizon: HorizonSource;
  agentModel: string;
  /** The pricing table's key the agent's model was priced as; null: unknown, priced at 0. */
  pricedAs: string | null;
  promptCaching: boolean;
  /** USD per token saved on one request: the cache-read rate with caching, else the input rate. */
  savedTokenUsd: number;
  summaryModel: string | null;
  summaryInputTokens: number;
  summaryMaxOutputTokens: number;
  /** The summary call: input at the input rate plus the maximum output at the output rate, USD. */
  summaryUsd: number;
  /** The kept context written again at the cache-write rate instead of read, USD (0 without caching). */
  rewriteUsd: number;
}

/** A prediction: savings and cost in USD, their ratio, and what they came from. */
export interface PaybackPrediction {
  savingsUsd: number;
  costUsd: number;
  /** savings / cost; null when the compaction costs nothing (it pays whatever it saves). */
  ratio: number | null;
  inputs: PaybackInputs;
}

/**
 * Predicts the payback of a compaction before it is made.
 * savings = (tokensBefore − tokensAfter) × requests × (cache-read rate, or input rate without caching);
 * cost = summary (input × input rate + max output × output rate of the summarizer's model)
 *      + rewrite (tokensAfter × (cache-write − cache-read rate), with caching).
 * An agent model missing from the pricing table prices savings and rewrite at 0 (`pricedAs: null`).
 */
export function predictPayback(input: PaybackInput): PaybackPrediction {
  const found = priceOf(input.agentModel);
  const rates: TokenRates | null = found?.price ?? null;
  const saved = Math.max(0, Math.round(input.tokensBefore - input.tokensAfter));
  const requests = Math.max(0, Math.floor(input.requests));
  const savedTokenUsd = rates
    ? (input.promptCaching ? rates.cacheReadPerMTok : rates.inputPerMTok) / 1_000_000
    : 0;
  const rewriteUsd =
    rates && input.promptCaching
      ? (Math.max(0, input.tokensAfter) * (rates.cacheWritePerMTok - rates.cacheReadPerMTok)) / 1_000_000
      : 0;
  const { summary } = input;
  const summaryUsd = summary
    ? costUsd(summary.model, {
        inputTokens: summary.inputTokens,
        outputTokens: summary.maxOutputTokens,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      }).usd
    : 0;
  const savingsUsd = round(saved * requests * savedTokenUsd);
  const cost = round(summaryUsd + rewriteUsd);
  return {
    savingsUsd,
    costUsd: cost,
    ratio: ratioOf(savingsUsd, cost),
    inputs: {
      tokensBefore: Math.round(input.tokensBefore),
      tokensAfter: Math.round(input.tokensAfter),
      tokensSavedPerRequest: saved,
      requests,
      horizon: input.horizon,
      agentModel: input.agentModel,
      pricedAs: found?.key ?? null,
      promptCaching: input.promptCaching,
      savedTokenUsd,
      summaryModel: summary?.model ?? null,
      summaryInputTokens: summary?.inputTokens ?? 0,
      summaryMaxOutputTokens: summary?.maxOutputTokens ?? 0,
      summaryUsd,
      rewriteUsd: round(rewriteUsd),
    },
  };
}

/** What the session's state says about skipping at all. */
export interface PaybackContext {
  trigger: 'event' | 'sweep' | 'manual';
  /** The session's tokens and context window (null: unknown). */
  tokenCount: number;
  contextWindow: number | null;
}

/**
 * Whether `prediction` lets the compaction go ahead under `policy`. It is skipped only when the
 * policy sets `payback`, the ratio is known and under `minRatio`, and none of these hold: a manual
 * compaction (someone asked for it), a session at or over its context window (its next request
 * would not fit, whatever it costs), an agent model without a price (better compact than skip on a
 * price of 0).
 * @returns null to go ahead, else the skip's reason with the numbers.
 */
export function paybackSkipReason(
  prediction: PaybackPrediction,
  policy: PaybackPolicy | undefined,
  context: PaybackContext,
): string | null {
  if (!policy || prediction.ratio === null || prediction.ratio >= policy.minRatio) return null;
  if (context.trigger === 'manual') return null;
  if (context.contextWindow !== null && context.tokenCount >= context.contextWindow) return null;
  if (prediction.inputs.pricedAs === null) return null;
  return `payback: predicted ratio ${prediction.ratio} < minRatio ${policy.minRatio}: ${describePrediction(prediction)}`;
}

/**
 * One line of a prediction's numbers, e.g. `saves 12000 tokens × 5 requests (history) ≈ 0.0180 USD
 * at claude-sonnet-4-6 cache reads; costs 0.0420 USD (summary 0.0300, cache rewrite 0.0120)`.
 */
export function describePrediction(p: PaybackPrediction): string {
  const i = p.inputs;
  const rate = i.promptCaching ? 'cache reads' : 'input';
  return (
    `saves ${i.tokensSavedPerRequest} tokens × ${i.requests} requests (${i.horizon}) ≈ ${money(p.savingsUsd)} USD ` +
    `at ${i.pricedAs ?? i.agentModel} ${rate}; costs ${money(p.costUsd)} USD ` +
    `(summary ${money(i.summaryUsd)}, cache rewrite ${money(i.rewriteUsd)})`
  );
}

/** One request reported after a compaction (`session.run.completed`), as measured. */
export interface ReportedRequest {
  /** The prompt's tokens: input + cache writes + cache reads. */
  inputTokens: number;
  /** Of those, read from the cache; undefined when the agent did not say. */
  cacheReadTokens?: number | undefined;
}

/** The running measurement of a compaction's payback (ledger `measured_*`). */
export interface MeasuredPayback {
  requests: number;
  /** Sum of the prompt tokens the agent reported sending. */
  tokensSent: number;
  /** Sum of what it would have sent without the compaction: each prompt plus the tokens removed. */
  tokensWithout: number;
  savingsUsd: number;
  /** savingsUsd / cost (the summary's recorded cost plus the predicted rewrite); null when free. */
  ratio: number | null;
}

/**
 * Adds one reported request to a compaction's measurement. The tokens the compaction removed
 * (`tokensBefore − tokensAfter`) would have been in that prompt too; they are priced at the
 * cache-read rate when the request read from the cache (`cacheReadTokens > 0`), at the input rate
 * when it reported 0, and per the prediction's `promptCaching` when it did not say.
 * @param summaryCostUsd the summary call's recorded cost (ledger `cost_usd`; null: none).
 */
export function addMeasuredRequest(
  measured: MeasuredPayback | null,
  prediction: Pick<PaybackInputs, 'tokensSavedPerRequest' | 'agentModel' | 'promptCaching' | 'rewriteUsd'>,
  summaryCostUsd: number | null,
  request: ReportedRequest,
): MeasuredPayback {
  const before = measured ?? { requests: 0, tokensSent: 0, tokensWithout: 0, savingsUsd: 0, ratio: null };
  const rates = priceOf(prediction.agentModel)?.price;
  const cached =
    request.cacheReadTokens === undefined ? prediction.promptCaching : request.cacheReadTokens > 0;
  const perToken = rates ? (cached ? rates.cacheReadPerMTok : rates.inputPerMTok) / 1_000_000 : 0;
  const saved = Math.max(0, prediction.tokensSavedPerRequest);
  const savingsUsd = round(before.savingsUsd + saved * perToken);
  const cost = round((summaryCostUsd ?? 0) + prediction.rewriteUsd);
  return {
    requests: before.requests + 1,
    tokensSent: before.tokensSent + request.inputTokens,
    tokensWithout: before.tokensWithout + request.inputTokens + saved,
    savingsUsd,
    ratio: ratioOf(savingsUsd, cost),
  };
}

/** The most a ratio is recorded as: a compaction costing next to nothing pays "a million times". */
export const MAX_RATIO = 1_000_000;

function ratioOf(savingsUsd: number, costUsd: number): number | null {
  return costUsd > 0 ? Math.min(MAX_RATIO, round(savingsUsd / costUsd, 1e4)) : null;
}

function round(value: number, scale = 1e9): number {
  return Math.round(value * scale) / scale;
}

function money(amount: number): string {
  return amount.toFixed(4);
}
