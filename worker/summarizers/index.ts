/**
 * Chooses the summarizer from the configuration: `anthropic` when `ANTHROPIC_API_KEY` is set,
 * `extractive` (offline, deterministic) otherwise.
 */

import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { SummarizerName } from '../../shared/strategies/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import type { Config } from '../config/config.ts';
import { type AnthropicBatches, createAnthropicBatches, createAnthropicSummarizer } from './anthropic.ts';
import { createAnthropicCompactionSummarizer } from './anthropic-compaction.ts';
import type { LlmCalls } from './llm-calls.ts';

/**
 * The primary summarizer of `config`.
 * @param calls sends the LLM summarizer's requests (the runtime's traces them); default: as they are.
 */
export function summarizerFor(config: Config, calls?: LlmCalls): Summarizer {
  if (!config.anthropicApiKey) return createExtractiveSummarizer();
  return createAnthropicSummarizer({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
    calls,
  });
}

/**
 * The summarizers a strategy may name: with an API key, `anthropic`, `anthropic-compaction` and
 * `extractive`; without one, `extractive` only.
 */
export function summarizersFor(
  config: Config,
  calls?: LlmCalls,
): Partial<Record<SummarizerName, Summarizer>> {
  const extractive = createExtractiveSummarizer();
  if (!config.anthropicApiKey) return { extractive };
  const options = {
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
    calls,
  };
  return {
    anthropic: createAnthropicSummarizer(options),
    'anthropic-compaction': createAnthropicCompactionSummarizer(options),
    extractive,
  };
}

/** The Message Batches client when an Anthropic key is set (batch summaries for sweeps), else null. */
export function batchesFor(config: Config): AnthropicBatches | null {
  if (!config.anthropicApiKey) return null;
  return createAnthropicBatches({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
  });
}
