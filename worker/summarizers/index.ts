/**
 * Chooses the summarizer from the configuration: `anthropic` when `ANTHROPIC_API_KEY` is set,
 * `extractive` (offline, deterministic) otherwise.
 */
import type { Config } from '../../shared/config.ts';
import { createExtractiveSummarizer } from '../../shared/extractive.ts';
import type { Summarizer } from '../../shared/summarizer.ts';
import { createAnthropicSummarizer } from './anthropic.ts';

export function summarizerFor(config: Config): Summarizer {
  if (!config.anthropicApiKey) return createExtractiveSummarizer();
  return createAnthropicSummarizer({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
  });
}
