/**
 * Chooses the summarizer from the configuration: the one `COMPACTOR_SUMMARIZER` names, else
 * `anthropic` when `ANTHROPIC_API_KEY` is set, `openai` when `OPENAI_API_KEY` is, `extractive`
 * (offline, deterministic) otherwise (worker/config/config.ts).
 */

import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { SummarizerName } from '../../shared/strategies/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import type { Config } from '../config/config.ts';
import { type AnthropicBatches, createAnthropicBatches, createAnthropicSummarizer } from './anthropic.ts';
import { createAnthropicCompactionSummarizer } from './anthropic-compaction.ts';
import type { LlmCalls } from './llm-calls.ts';
import { createOpenAISummarizer } from './openai.ts';

/**
 * The primary summarizer of `config`.
 * @param calls sends the LLM summarizer's requests (the runtime's traces them); default: as they are.
 */
export function summarizerFor(config: Config, calls?: LlmCalls): Summarizer {
  if (config.summarizer === 'openai') {
    const openai = openaiFor(config, calls);
    if (!openai) throw new Error('config.summarizer is openai and config.openai is unset');
    return openai;
  }
  if (config.summarizer === 'extractive' || !config.anthropicApiKey) return createExtractiveSummarizer();
  return createAnthropicSummarizer({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
    calls,
  });
}

/**
 * The summarizers a strategy may name: `extractive`; with an Anthropic key, `anthropic` and
 * `anthropic-compaction`; with OpenAI settings, `openai`.
 */
export function summarizersFor(
  config: Config,
  calls?: LlmCalls,
): Partial<Record<SummarizerName, Summarizer>> {
  const extractive = createExtractiveSummarizer();
  const openai = openaiFor(config, calls);
  const withOpenAI = openai ? { openai } : {};
  if (!config.anthropicApiKey) return { extractive, ...withOpenAI };
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
    ...withOpenAI,
  };
}

/** The `openai` summarizer of `config.openai`, or null without it. */
function openaiFor(config: Config, calls: LlmCalls | undefined): Summarizer | null {
  if (!config.openai) return null;
  return createOpenAISummarizer({ ...config.openai, maxInputTokens: config.maxInputTokens, calls });
}

/**
 * The Message Batches client when an Anthropic key is set (batch summaries for sweeps) and the
 * primary summarizer is not `openai` (whose summaries are not Anthropic's to batch), else null.
 */
export function batchesFor(config: Config): AnthropicBatches | null {
  if (!config.anthropicApiKey || config.summarizer === 'openai') return null;
  return createAnthropicBatches({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
  });
}
