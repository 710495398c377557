/**
 * List prices of Claude and OpenAI models and the cost of one summary call, for the ledger's
 * `cost_usd`.
 * Pure data and arithmetic: no I/O, never throws. An unknown model costs 0 and says so, so a new
 * model id never fails a compaction; the ledger row then shows `known: false` for an operator.
 *
 * Source: Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing), checked
 * November 2026. Cache writes are the 5-minute TTL rate (1.25 x input; compactor only asks for
 * `ephemeral` without a TTL). Cache reads are 0.1 x input for most models, but not all: the 5.1 and
 * 5.2 Fable/Mythos models read at 0.025 x, Opus 5.5 and Sonnet 5.5 at 0.05 x, so every rate is
 * written out rather than derived. Fable 5.2 and Mythos 5.2 (the model ids @anthropic-ai/sdk 1.11
 * lists, released November 2026) are $8 / $40 per MTok as the models overview lists them; their cache
 * rates are the 1.25 x write and the 0.025 x read of the 5.1 models, as the pricing page's Fable 5.2
 * row gives them. Models no page listed are left out on purpose: better `known: false` than a
 * guessed price. Retired and deprecated ids stay: ledger rows and sessions name them.
 *
 * OpenAI models (the `openai` summarizer): OpenAI's API pricing page
 * (platform.openai.com/docs/pricing), standard tier, as copies of it dated April to June 2026
 * list them: GPT-5.5, the GPT-5.4 family, GPT-5.2 and GPT-5.1; GPT-5, GPT-4.1 and GPT-4o as the page
 * listed them in 2025. `cacheReadPerMTok` is the page's "cached input". Before GPT-5.6, cache writes
 * are free (OpenAI prompt-caching guide): a written token is an input token, so `cacheWritePerMTok`
 * is the input rate; GPT-5.6 and later (writes at 1.25 x input) are left out until a price page
 * lists them. The GPT-5.5 and 5.4 rates are the page's "under 270K" context rates; longer prompts are
 * billed 2x input and 1.5x output, cached input assumed at 2x too. A model served by another
 * provider (Azure deployments, vLLM, Ollama, OpenRouter) under an id not listed here costs 0 and
 * says so (`known: false`), as any unknown model, until the operator prices it: `COMPACTOR_MODEL_PRICES`
 * adds rows to the table, or replaces built-in ones ({@link extendModelPrices}).
 */
import { z } from 'zod';

/** Prices in USD per million tokens (MTok). */
export interface TokenRates {
  inputPerMTok: number;
  outputPerMTok: number;
  /** 5-minute cache write. */
  cacheWritePerMTok: number;
  cacheReadPerMTok: number;
}

/** A model's prices; some models bill a whole request at higher rates past a prompt length. */
export interface ModelPrice extends TokenRates {
  /**
   * Rates for every token of a request (output included) whose prompt (input + cache reads + cache
   * writes, in tokens) is over `thresholdTokens`.
   */
  longPrompt?: { thresholdTokens: number; rates: TokenRates };
}

const rates = (input: number, output: number, cacheWrite: number, cacheRead: number): TokenRates => ({
  inputPerMTok: input,
  outputPerMTok: output,
  cacheWritePerMTok: cacheWrite,
  cacheReadPerMTok: cacheRead,
});

const FABLE_5_2 = rates(8, 40, 10, 0.2);
const FABLE_5_1 = rates(10, 50, 12.5, 0.25);
const FABLE_5 = rates(10, 50, 12.5, 1);
const OPUS_5_5 = rates(4, 20, 5, 0.2);
const OPUS_4_5_TO_5 = rates(5, 25, 6.25, 0.5);
const OPUS_4_AND_4_1 = rates(15, 75, 18.75, 1.5);
const SONNET_5_5 = rates(2, 10, 2.5, 0.1);
const SONNET_5 = rates(2, 10, 2.5, 0.2);
const SONNET_3_7_TO_4_6 = rates(3, 15, 3.75, 0.3);
const HAIKU_5_5: ModelPrice = {
  ...rates(0.1, 0.5, 0.125, 0.01),
  longPrompt: { thresholdTokens: 100_000, rates: rates(0.5, 2.5, 0.625, 0.05) },
};
const HAIKU_4_5 = rates(1, 5, 1.25, 0.1);
const HAIKU_3_5 = rates(0.8, 4, 1, 0.08);
const HAIKU_3 = rates(0.25, 1.25, 0.3, 0.03);

/** An OpenAI price: cache writes at the input rate (free before GPT-5.6). */
const openai = (input: number, output: number, cachedInput: number): TokenRates =>
  rates(input, output, input, cachedInput);
/** GPT-5.5 and GPT-5.4 rates with the page's long-context rule (prompts over 270K tokens). */
const openaiLong = (input: number, output: number, cachedInput: number): ModelPrice => ({
  ...openai(input, output, cachedInput),
  longPrompt: { thresholdTokens: 270_000, rates: openai(2 * input, 1.5 * output, 2 * cachedInput) },
});

/**
 * Prices by model alias (the id without a date suffix). Dated snapshot ids (`claude-haiku-4-5-20251001`)
 * and Vertex/Bedrock spellings resolve to these through {@link priceOf}.
 */
export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'claude-fable-5-2': FABLE_5_2,
  'claude-mythos-5-2': FABLE_5_2,
  'claude-fable-5-1': FABLE_5_1,
  'claude-mythos-5-1': FABLE_5_1,
  'claude-fable-5': FABLE_5,
  'claude-mythos-5': FABLE_5,
  'claude-opus-5-5': OPUS_5_5,
  'claude-opus-5': OPUS_4_5_TO_5,
  'claude-opus-4-8': OPUS_4_5_TO_5,
  'claude-opus-4-7': OPUS_4_5_TO_5,
  'claude-opus-4-6': OPUS_4_5_TO_5,
  'claude-opus-4-5': OPUS_4_5_TO_5,
  'claude-opus-4-1': OPUS_4_AND_4_1,
  'claude-opus-4-0': OPUS_4_AND_4_1,
  'claude-opus-4': OPUS_4_AND_4_1,
  'claude-sonnet-5-5': SONNET_5_5,
  'claude-sonnet-5': SONNET_5,
  'claude-sonnet-4-6': SONNET_3_7_TO_4_6,
  'claude-sonnet-4-5': SONNET_3_7_TO_4_6,
  'claude-sonnet-4-0': SONNET_3_7_TO_4_6,
  'claude-sonnet-4': SONNET_3_7_TO_4_6,
  'claude-3-7-sonnet': SONNET_3_7_TO_4_6,
  'claude-haiku-5-5': HAIKU_5_5,
  'claude-haiku-4-5': HAIKU_4_5,
  'claude-3-5-haiku': HAIKU_3_5,
  'claude-3-haiku': HAIKU_3,
  'gpt-5.5': openaiLong(5, 30, 0.5),
  'gpt-5.4': openaiLong(2.5, 15, 0.25),
  'gpt-5.4-mini': openaiLong(0.75, 4.5, 0.075),
  'gpt-5.4-nano': openaiLong(0.2, 1.25, 0.02),
  'gpt-5.2': openai(1.75, 14, 0.175),
  'gpt-5.1': openai(1.25, 10, 0.125),
  'gpt-5': openai(1.25, 10, 0.125),
  'gpt-5-mini': openai(0.25, 2, 0.025),
  'gpt-5-nano': openai(0.05, 0.4, 0.005),
  'gpt-4.1': openai(2, 8, 0.5),
  'gpt-4.1-mini': openai(0.4, 1.6, 0.1),
  'gpt-4.1-nano': openai(0.1, 0.4, 0.025),
  'gpt-4o': openai(2.5, 10, 1.25),
  'gpt-4o-mini': openai(0.15, 0.6, 0.075),
});

/** Token counts of one call, as the API reports them (`usage`). Missing or negative counts count as 0. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** The cost of one call. */
export interface CostEstimate {
  /** USD, rounded to 1e-9. 0 when the model is unknown. */
  usd: number;
  /** False when the model has no price (built-in or the operator's): `usd` is then 0, not the real cost. */
  known: boolean;
  /** The {@link MODEL_PRICES} key the model was priced as, or null. */
  pricedAs: string | null;
}

const ratePerMTok = z.number().finite().min(0).max(10_000);

/**
 * An operator's price rows (`COMPACTOR_MODEL_PRICES`): model id → USD per million tokens. `input` and
 * `output` are required; `cacheRead` and `cacheWrite` default to `input` (no cache discount or
 * premium assumed for a server that does not say). A model id is matched as {@link priceOf} matches
 * built-in ones (any case, dated snapshots, platform spellings).
 */
export const modelPricesSchema = z.record(
  z.string().trim().min(1).max(200),
  z
    .object({
      input: ratePerMTok,
      output: ratePerMTok,
      cacheRead: ratePerMTok.optional(),
      cacheWrite: ratePerMTok.optional(),
    })
    .strict(),
);

/** Operator price rows, as {@link modelPricesSchema} reads them. */
export type OperatorModelPrices = z.output<typeof modelPricesSchema>;

/** The operator's rows, by normalized model id: read before {@link MODEL_PRICES}. */
let operatorPrices: ReadonlyMap<string, ModelPrice> = new Map();

/**
 * Sets the operator's price rows for this process (the worker calls it once at start-up with
 * `COMPACTOR_MODEL_PRICES`): a row prices its model for the ledger's cost, budgets and payback, in
 * place of the built-in row of the same model if there is one. Replaces the rows set before.
 */
export function extendModelPrices(rows: OperatorModelPrices): void {
  operatorPrices = new Map(
    Object.entries(rows).map(([model, r]) => [
      normalizeModelId(model),
      rates(r.input, r.output, r.cacheWrite ?? r.input, r.cacheRead ?? r.input),
    ]),
  );
}

/**
 * The price entry of a model id, or undefined. Accepts aliases (`claude-haiku-4-5`), dated snapshots
 * (`claude-haiku-4-5-20251001`), `-latest`, Vertex (`claude-opus-4-1@20250805`) and Bedrock
 * (`anthropic.claude-opus-4-1-20250805-v1:0`, with or without an inference profile's prefix: `us.`,
 * `eu.`, `apac.`, `us-gov.`, `global.`) spellings, any case. Bedrock and Vertex AI are priced at
 * Anthropic's list prices: a platform's own premium (e.g. for regional endpoints) is not counted.
 */
export function priceOf(model: string): { key: string; price: ModelPrice } | undefined {
  const key = normalizeModelId(model);
  const price = operatorPrices.get(key) ?? (Object.hasOwn(MODEL_PRICES, key) ? MODEL_PRICES[key] : undefined);
  return price ? { key, price } : undefined;
}

/**
 * The cost in USD of one call of `model` with `usage`. Never throws.
 * @returns `{ usd: 0, known: false }` for a model without a price.
 */
export function costUsd(model: string, usage: TokenUsage): CostEstimate {
  const found = priceOf(model);
  if (!found) return { usd: 0, known: false, pricedAs: null };
  const input = count(usage.inputTokens);
  const output = count(usage.outputTokens);
  const cacheRead = count(usage.cacheReadTokens);
  const cacheWrite = count(usage.cacheWriteTokens);
  const { longPrompt } = found.price;
  const r =
    longPrompt && input + cacheRead + cacheWrite > longPrompt.thresholdTokens
      ? longPrompt.rates
      : found.price;
  const usd =
    (input * r.inputPerMTok +
      output * r.outputPerMTok +
      cacheRead * r.cacheReadPerMTok +
      cacheWrite * r.cacheWritePerMTok) /
    1_000_000;
  return { usd: Math.round(usd * 1e9) / 1e9, known: true, pricedAs: found.key };
}

function count(tokens: number | null | undefined): number {
  return typeof tokens === 'number' && Number.isFinite(tokens) && tokens > 0 ? tokens : 0;
}

function normalizeModelId(model: string): string {
  return model
    .trim()
    .toLowerCase()
    .replace(/^(?:(?:global|us-gov|[a-z]{2,4})\.)?anthropic\./, '') // Bedrock: `anthropic.`, `us.anthropic.`, `global.anthropic.`
    .replace(/-v\d+(?::\d+)?$/, '') // Bedrock version suffix `-v1:0`
    .replace(/@.*$/, '') // Vertex snapshot `@20250805`
    .replace(/\[1m\]$/, '') // 1M-context marker some tools append
    .replace(/^openai\//, '') // OpenRouter and LiteLLM: `openai/gpt-5.4-mini`
    .replace(/-\d{4}-\d{2}-\d{2}$/, '') // OpenAI dated snapshot `-2026-03-17`
    .replace(/-(?:\d{8}|latest)$/, ''); // dated snapshot or `-latest`
}
