/**
 * How the `openai` summarizer describes a Chat Completions request and its answer to the
 * {@link LlmCalls} port (./llm-calls.ts), in the OpenTelemetry GenAI semantic conventions' terms
 * (semantic-conventions v1.41.0, "Semantic conventions for generative client AI spans" and the
 * OpenAI page): `gen_ai.provider.name` is `openai`, or the operator's name for the server
 * (`azure.ai.openai` for Azure OpenAI); `gen_ai.usage.input_tokens` counts every prompt token,
 * cached ones included, as `prompt_tokens` does.
 */
import type OpenAI from 'openai';
import type { SummarizeInput } from '../../shared/summary/summarizer.ts';
import type { LlmAnswer, LlmCall, LlmCallReport } from './llm-calls.ts';
import { openAIErrorType } from './openai-errors.ts';

/** The call of one Chat Completions request for `input`'s session. */
export function chatCall(
  provider: string,
  input: Pick<SummarizeInput, 'tenantId' | 'sessionId'>,
  params: { model: string; max_completion_tokens?: number | null | undefined },
  baseURL: string,
): LlmCall {
  return {
    provider,
    operation: 'chat',
    model: params.model,
    maxTokens: params.max_completion_tokens ?? undefined,
    baseURL,
    tenantId: input.tenantId,
    sessionId: input.sessionId,
    summarizer: 'openai',
  };
}

/** How a Chat Completions answer and failure read; never throws, whatever the body holds. */
export const CHAT_REPORT: LlmCallReport<OpenAI.ChatCompletion> = {
  answer: chatAnswerOf,
  errorType: openAIErrorType,
};

/** The answer of a Chat Completions response (`prompt_tokens` holds the cached ones). */
export function chatAnswerOf(completion: OpenAI.ChatCompletion): LlmAnswer {
  const c = (
    typeof completion === 'object' && completion !== null ? completion : {}
  ) as Partial<OpenAI.ChatCompletion>;
  const tokens = chatTokensOf(c);
  const reasons = Array.isArray(c.choices)
    ? c.choices.flatMap((choice) => (typeof choice?.finish_reason === 'string' ? [choice.finish_reason] : []))
    : [];
  return {
    model: typeof c.model === 'string' && c.model ? c.model : null,
    id: typeof c.id === 'string' && c.id ? c.id : null,
    finishReasons: reasons,
    inputTokens: tokens.inputTokens + tokens.cacheReadTokens + tokens.cacheWriteTokens,
    outputTokens: tokens.outputTokens,
    cacheReadTokens: tokens.cacheReadTokens,
    cacheCreationTokens: tokens.cacheWriteTokens,
  };
}

/**
 * The token counts of an answer in the ledger's terms, which are the Anthropic API's: `inputTokens`
 * is the prompt tokens neither read from nor written to the cache. Chat Completions reports
 * `prompt_tokens` with the cached ones inside it (`prompt_tokens_details.cached_tokens`, and on
 * GPT-5.6 and later `cache_write_tokens`; OpenAI prompt-caching guide,
 * developers.openai.com/api/docs/guides/prompt-caching), so they are taken out of it here. Missing
 * counts are 0; `inputTokens` is never negative.
 */
export function chatTokensOf(completion: Partial<Pick<OpenAI.ChatCompletion, 'usage'>>): {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
} {
  const u = completion.usage;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  const prompt = n(u?.prompt_tokens);
  const cacheReadTokens = Math.min(prompt, n(u?.prompt_tokens_details?.cached_tokens));
  const cacheWriteTokens = Math.min(
    prompt - cacheReadTokens,
    n(u?.prompt_tokens_details?.cache_write_tokens),
  );
  return {
    inputTokens: prompt - cacheReadTokens - cacheWriteTokens,
    outputTokens: n(u?.completion_tokens),
    cacheReadTokens,
    cacheWriteTokens,
  };
}
