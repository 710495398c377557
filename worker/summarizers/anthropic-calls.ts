/**
 * How the Anthropic summarizers describe a Messages API request and its answer to the
 * {@link LlmCalls} port (./llm-calls.ts), in the GenAI semantic conventions' terms.
 */
import type Anthropic from '@anthropic-ai/sdk';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type { SummarizeInput } from '../../shared/summary/summarizer.ts';
import type { LlmAnswer, LlmCall, LlmCallReport } from './llm-calls.ts';

/**
 * The call of one Messages API request of `summarizer` for `input`'s session, to `provider`
 * (`gen_ai.provider.name`: `anthropic`, or `aws.bedrock`, `gcp.vertex_ai` for Claude on a cloud
 * platform; ./anthropic-platform.ts).
 */
export function messagesCall(
  summarizer: string,
  input: Pick<SummarizeInput, 'tenantId' | 'sessionId'>,
  params: { model: string; max_tokens: number },
  baseURL: string,
  provider = 'anthropic',
): LlmCall {
  return {
    provider,
    operation: 'chat',
    model: params.model,
    maxTokens: params.max_tokens,
    baseURL,
    tenantId: input.tenantId,
    sessionId: input.sessionId,
    summarizer,
  };
}

/** How a Messages API answer and failure read; never throws, whatever the body holds. */
export const MESSAGES_REPORT: LlmCallReport<Anthropic.Message> = {
  answer: answerOf,
  errorType: anthropicErrorType,
};

/**
 * The answer of a Messages API response. Its usage is summed over `usage.iterations` when the
 * answer lists them (a compaction's does), as the ledger sums it (`usageOf` in ./anthropic.ts);
 * `inputTokens` counts the cached input too, as the GenAI conventions ask for Anthropic.
 */
export function answerOf(message: Anthropic.Message): LlmAnswer {
  const m = (typeof message === 'object' && message !== null ? message : {}) as Partial<Anthropic.Message>;
  const tokens = tokensOf(m);
  return {
    model: typeof m.model === 'string' && m.model ? m.model : null,
    id: typeof m.id === 'string' && m.id ? m.id : null,
    finishReasons: typeof m.stop_reason === 'string' ? [m.stop_reason] : [],
    inputTokens: tokens.inputTokens + tokens.cacheReadTokens + tokens.cacheWriteTokens,
    outputTokens: tokens.outputTokens,
    cacheReadTokens: tokens.cacheReadTokens,
    cacheCreationTokens: tokens.cacheWriteTokens,
  };
}

/**
 * The token counts of an answer, as the API reports them (`input_tokens` without the cached
 * input). When the answer lists `usage.iterations` (a compaction's does, with 0 at the top level),
 * the docs say to sum across them; otherwise the top-level counts. Missing counts are 0.
 */
export function tokensOf(message: Partial<Pick<Anthropic.Message, 'usage'>>): {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
} {
  const u = (message.usage ?? {}) as unknown as Record<string, unknown> & { iterations?: unknown };
  const parts: Array<Record<string, unknown>> = Array.isArray(u.iterations) ? u.iterations : [u];
  const sum = (field: string) =>
    parts.reduce((n, p) => n + (typeof p[field] === 'number' ? (p[field] as number) : 0), 0);
  return {
    inputTokens: sum('input_tokens'),
    outputTokens: sum('output_tokens'),
    cacheReadTokens: sum('cache_read_input_tokens'),
    cacheWriteTokens: sum('cache_creation_input_tokens'),
  };
}

/**
 * The `error.type` of a failed Messages API request: the API's error type (`overloaded_error`,
 * `rate_limit_error`, ...) or, without one, the HTTP status; `timeout` and `connection_error`
 * without a response; `cancelled` when the request was aborted (the worker stops, the lease was
 * lost); the error's class name otherwise.
 */
export function anthropicErrorType(error: unknown): string {
  if (error instanceof APIUserAbortError) return 'cancelled';
  if (error instanceof APIConnectionTimeoutError) return 'timeout';
  if (error instanceof APIConnectionError) return 'connection_error';
  if (error instanceof APIError)
    return error.type ?? (error.status !== undefined ? String(error.status) : 'api_error');
  return error instanceof Error && error.name ? error.name : '_OTHER';
}
