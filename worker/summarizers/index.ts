/**
 * Chooses the summarizer from the configuration: `anthropic` when `ANTHROPIC_API_KEY` is set,
 * `extractive` (offline, deterministic) otherwise.
 */

import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { Config } from '../../shared/runtime/config.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { type AnthropicBatches, createAnthropicBatches, createAnthropicSummarizer } from './anthropic.ts';

export function summarizerFor(config: Config): Summarizer {
  if (!config.anthropicApiKey) return createExtractiveSummarizer();
  return createAnthropicSummarizer({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
  });
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
