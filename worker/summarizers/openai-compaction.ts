/**
 * The `openai-compaction` summarizer, for `openai-responses` sessions: OpenAI's standalone compact
 * endpoint (`POST /v1/responses/compact`, `client.responses.compact` of the `openai` SDK; OpenAI's
 * compaction guide, https://developers.openai.com/api/docs/guides/compaction: "fully stateless and
 * ZDR-friendly"). The leaving items go as the agent's context renders them (calls answered,
 * reasoning with its encrypted content, the previous summary or compaction item first), with the
 * strategy's `instructions`; the API answers the input's user messages "followed by a single
 * compaction item" (openai-python `types/responses/compacted_response.py`). The summary message
 * stores that compaction item exactly as returned, and `loadContext` sends it first in place of a
 * readable summary: it is "opaque and not intended to be human-interpretable" and carries "key
 * prior state and reasoning" (the guide). Compactor's own checkpoint is made beside it by the
 * extractive summarizer: the readable, portable copy (dashboard, `restore`, a later summary).
 *
 * Failures: an answer without a compaction item is a {@link SummaryRejectedError}; a 400, 401, 403
 * or 404 (a request the API will never take: a model without the endpoint, a bad key) a
 * {@link SummarizerConfigError}; anything else (429, 5xx, a connection error) is thrown as it is,
 * for BullMQ to retry. The window sent must fit the model's context window (the guide): a session
 * compacted often stays well under it; the request is not chunked.
 *
 * `openai` (the SDK, an optional peer dependency) is imported on the first summary, so the worker
 * entry that exports this factory loads without it.
 */
import { performance } from 'node:perf_hooks';
import type OpenAI from 'openai';
import { SummarizerConfigError, SummaryRejectedError } from '../../shared/contract/errors.ts';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import type {
  EstimateInput,
  SummarizeInput,
  Summarizer,
  SummaryEstimate,
  SummaryResult,
  SummaryUsage,
} from '../../shared/summary/summarizer.ts';

/** Options of {@link createOpenAICompactionSummarizer}. */
export interface OpenAICompactionSummarizerOptions {
  /** OpenAI API key. */
  apiKey: string;
  /** The API's base URL (with `/v1`); default the SDK's (`https://api.openai.com/v1`). */
  baseURL?: string | undefined;
  /** Model id used when the strategy names none (the endpoint requires one). */
  model: string;
  /** Timeout of one request, ms; default 120,000. */
  timeoutMs?: number | undefined;
  /** Monotonic clock for `llmMs`, ms; default `performance.now`. */
  now?: (() => number) | undefined;
}

/** Output tokens a compaction is budgeted at in {@link Summarizer.estimate} (the API sets no cap). */
export const ESTIMATED_OUTPUT_TOKENS = 4_096;

/** Input tokens besides the items: the model's framing of the request, as the estimate allows for it. */
const REQUEST_OVERHEAD_TOKENS = 1_000;

/**
 * The request a summary of `input` would send to /responses/compact, sized: one request (it is not
 * chunked), its input the Responses items as they are sent (JSON, about 4 characters a token, the
 * encrypted reasoning included, which the API counts as the reasoning's tokens) and the
 * instructions, plus {@link REQUEST_OVERHEAD_TOKENS}; without the items (a caller that has not
 * rendered them), the leaving tokens stand in for them. The output is budgeted at
 * {@link ESTIMATED_OUTPUT_TOKENS}: the endpoint takes no output cap, so this is a typical ceiling,
 * not a bound. Cached input is priced as uncached, so the estimate errs high.
 */
export function estimateCompaction(input: EstimateInput, model: string): SummaryEstimate {
  const items = input.request?.input;
  const itemTokens = items ? estimateTextTokens(JSON.stringify(items)) : input.leavingTokens;
  const instructionTokens = input.instructions ? estimateTextTokens(input.instructions) : 0;
  return {
    model,
    inputTokens: itemTokens + instructionTokens + REQUEST_OVERHEAD_TOKENS,
    maxOutputTokens: ESTIMATED_OUTPUT_TOKENS,
  };
}

/**
 * Creates the `openai-compaction` summarizer.
 * @throws {SummarizerConfigError} when an option is invalid (empty key or model).
 */
export function createOpenAICompactionSummarizer(options: OpenAICompactionSummarizerOptions): Summarizer {
  if (!options.apiKey) throw new SummarizerConfigError('openai-compaction summarizer: apiKey is empty');
  if (!options.model) throw new SummarizerConfigError('openai-compaction summarizer: model is empty');
  let sdk: Promise<typeof import('openai')> | null = null;
  let client: OpenAI | null = null;
  async function connect(): Promise<{ client: OpenAI; APIError: typeof OpenAI.APIError }> {
    sdk ??= import('openai');
    const { default: OpenAIClient, APIError } = await sdk;
    client ??= new OpenAIClient({
      apiKey: options.apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      maxRetries: 0,
      timeout: options.timeoutMs ?? 120_000,
    });
    return { client, APIError };
  }
  const now = options.now ?? (() => performance.now());
  const readable = createExtractiveSummarizer();

  return {
    name: 'openai-compaction',
    reads: 'request',
    estimate(input: EstimateInput): SummaryEstimate {
      return estimateCompaction(input, input.model || options.model);
    },
    async summarize(input: SummarizeInput): Promise<SummaryResult> {
      const items = input.request?.input;
      if (!items) {
        throw new Error('openai-compaction: the caller must pass the Responses input (input.request.input)');
      }
      const model = input.model || options.model;
      // The readable checkpoint first: free, and it reads the leaving pages, which may be read once.
      const { checkpoint } = await readable.summarize(input);
      const { client, APIError } = await connect();
      const started = now();
      let compacted: OpenAI.Responses.CompactedResponse;
      try {
        compacted = await client.responses.compact(
          {
            model: model as OpenAI.Responses.ResponseCompactParams['model'],
            input: items as unknown as OpenAI.Responses.ResponseInputItem[],
            ...(input.instructions ? { instructions: input.instructions } : {}),
          },
          { signal: input.signal },
        );
      } catch (error) {
        throw mapOpenAIError(error, APIError, model);
      }
      const llmMs = Math.max(0, Math.round(now() - started));
      const item = compacted.output.find((o) => o.type === 'compaction');
      if (!item) {
        throw new SummaryRejectedError(
          `no compaction item in the answer of /responses/compact (${compacted.id}): the session goes on without this summary`,
        );
      }
      return {
        checkpoint,
        usage: usageOf(compacted, model, llmMs),
        // Stored exactly as returned; the summary message holds it (a `compaction` input item).
        block: item as unknown as NonNullable<SummaryResult['block']>,
      };
    },
  };
}

function usageOf(compacted: OpenAI.Responses.CompactedResponse, model: string, llmMs: number): SummaryUsage {
  const usage = compacted.usage;
  const cached = usage?.input_tokens_details?.cached_tokens ?? 0;
  const tokens = {
    inputTokens: Math.max(0, (usage?.input_tokens ?? 0) - cached),
    outputTokens: usage?.output_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
  return { model, ...tokens, costUsd: costUsd(model, tokens).usd, llmMs };
}

/** An SDK error as compactor's: a request the API will never take is a configuration error. */
function mapOpenAIError(error: unknown, APIError: typeof OpenAI.APIError, model: string): unknown {
  if (!(error instanceof APIError) || error.status === undefined) return error;
  if ([400, 401, 403, 404].includes(error.status)) {
    return new SummarizerConfigError(
      `openai-compaction summarizer: /responses/compact refused the request for model "${model}" ` +
        `(${error.status}: ${error.message}; request ${error.requestID ?? 'none'})`,
    );
  }
  return error;
}
