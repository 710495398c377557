/**
 * Chooses the summarizer from the configuration: the one `COMPACTOR_SUMMARIZER` names, else
 * `anthropic` when `ANTHROPIC_API_KEY` is set or the platform is Bedrock or Vertex AI
 * (`COMPACTOR_ANTHROPIC_PLATFORM`), `openai` when `OPENAI_API_KEY` is, `extractive` (offline,
 * deterministic) otherwise (worker/config/config.ts).
 */

import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { SummarizerName } from '../../shared/strategies/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import type { Config } from '../config/config.ts';
import {
  type AnthropicBatches,
  type AnthropicSummarizerOptions,
  createAnthropicBatches,
  createAnthropicSummarizer,
  DEFAULT_TIMEOUT_MS,
  SDK_FETCH_OPTIONS,
} from './anthropic.ts';
import { createAnthropicCompactionSummarizer } from './anthropic-compaction.ts';
import { PLATFORM_PROVIDER, platformClient, unavailableOn } from './anthropic-platform.ts';
import type { LlmCalls } from './llm-calls.ts';
import { createOpenAISummarizer } from './openai.ts';
import { createOpenAICompactionSummarizer } from './openai-compaction.ts';

/**
 * The options of the anthropic summarizers of `config`, or null when it runs none (no API key on
 * Anthropic's platform). On Bedrock and Vertex AI they carry the platform's client.
 * @throws {SummarizerConfigError} when the platform's SDK is not installed.
 */
function anthropicOptionsOf(config: Config, calls: LlmCalls | undefined): AnthropicSummarizerOptions | null {
  const platform = config.anthropicPlatform ?? { platform: 'anthropic' };
  const base = { model: config.model, maxInputTokens: config.maxInputTokens, calls };
  if (platform.platform === 'anthropic') {
    if (!config.anthropicApiKey) return null;
    return { ...base, apiKey: config.anthropicApiKey, baseURL: config.anthropicBaseUrl };
  }
  const client = platformClient(platform, {
    maxRetries: 0,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    fetchOptions: SDK_FETCH_OPTIONS,
  });
  return { ...base, apiKey: '', client, provider: PLATFORM_PROVIDER[platform.platform] };
}

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
  const options = config.summarizer === 'extractive' ? null : anthropicOptionsOf(config, calls);
  return options ? createAnthropicSummarizer(options) : createExtractiveSummarizer();
}

/**
 * The summarizers a strategy may name: `extractive`; with an Anthropic key or a cloud platform,
 * `anthropic` and `anthropic-compaction` (on Bedrock, `anthropic-compaction` refuses every summary:
 * ./anthropic-platform.ts says why); with OpenAI settings, `openai` and `openai-compaction` (the
 * latter for `openai-responses` sessions).
 */
export function summarizersFor(
  config: Config,
  calls?: LlmCalls,
): Partial<Record<SummarizerName, Summarizer>> {
  const extractive = createExtractiveSummarizer();
  const openai = openaiFor(config, calls);
  const withOpenAI =
    openai && config.openai
      ? {
          openai,
          'openai-compaction': createOpenAICompactionSummarizer({
            apiKey: config.openai.apiKey,
            baseURL: config.openai.baseURL,
            model: config.openai.model,
          }),
        }
      : {};
  const options = anthropicOptionsOf(config, calls);
  if (!options) return { extractive, ...withOpenAI };
  const compaction =
    config.anthropicPlatform?.platform === 'bedrock'
      ? unavailableOn(
          'anthropic-compaction',
          'bedrock',
          'Anthropic lists on-demand compaction (compact-2026-09-04) on its API and Vertex AI only',
        )
      : createAnthropicCompactionSummarizer(options);
  return {
    anthropic: createAnthropicSummarizer(options),
    'anthropic-compaction': compaction,
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
 * Null on Bedrock and Vertex AI too: the Message Batches API is Anthropic's own (their SDKs leave it
 * out), so `"batch": true` sweeps summarize online there.
 */
export function batchesFor(config: Config): AnthropicBatches | null {
  const platform = config.anthropicPlatform?.platform ?? 'anthropic';
  if (!config.anthropicApiKey || platform !== 'anthropic' || config.summarizer === 'openai') return null;
  return createAnthropicBatches({
    apiKey: config.anthropicApiKey,
    baseURL: config.anthropicBaseUrl,
    model: config.model,
    maxInputTokens: config.maxInputTokens,
  });
}
