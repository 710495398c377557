/**
 * The `anthropic` summarizer: one Messages API call per summary, through @anthropic-ai/sdk.
 * Structured output comes from a forced call of the single tool `record_checkpoint`, whose input is
 * validated with the checkpoint's zod schema. Nothing from a refused, truncated, toolless, invalid
 * or empty answer is ever returned, so a failed summary is never committed.
 *
 * What a request carries (shared/summary/prompt.ts): the previous checkpoint, the working set, the
 * user's own messages verbatim in `<user_messages>`, and the transcript with old tool output pruned
 * (shared/summary/prune.ts) so that the request's input is no larger than the messages leaving.
 * `max_tokens` is the summary budget, which grows with the leaving tokens (shared/summary/budget.ts),
 * plus room for the tool's `analysis` scratch field. `cache_control` breakpoints go only where the
 * prefix before them reaches the model's minimum cacheable length (shared/summary/cache.ts).
 *
 * Retries belong to BullMQ: the SDK's own retries are off by default, and SDK errors are mapped by
 * {@link mapAnthropicError}.
 */
import { performance } from 'node:perf_hooks';
import Anthropic from '@anthropic-ai/sdk';
import { Agent } from 'undici';
import { SummarizerConfigError, SummaryRejectedError } from '../../shared/contract/errors.ts';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import {
  CHECKPOINT_ANSWER_SCHEMA,
  checkpointFromAnswer,
  isEmptyCheckpoint,
  withoutAnalysis,
} from '../../shared/summary/answer.ts';
import { summaryBudgetTokens, summaryMaxTokens } from '../../shared/summary/budget.ts';
import { planCacheBreakpoints } from '../../shared/summary/cache.ts';
import type { Checkpoint, CheckpointEntry } from '../../shared/summary/checkpoint.ts';
import { chunkByBudget } from '../../shared/summary/chunks.ts';
import { guardCheckpoint, sessionSuspects } from '../../shared/summary/guard.ts';
import { lastUserRequestOf } from '../../shared/summary/last-request.ts';
import {
  estimateSummary,
  fixedInputTokens,
  foldLeaving,
  type RequestShape,
  summaryPromptOf,
  transcriptBudget,
} from '../../shared/summary/plan.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import { SUMMARY_TOOL_DESCRIPTION, SUMMARY_TOOL_NAME } from '../../shared/summary/prompt.ts';
import { pruneToolOutputs, SMALL_LEAVING_TOKENS } from '../../shared/summary/prune.ts';
import {
  type EstimateInput,
  leavingArray,
  type SummarizeInput,
  type Summarizer,
  type SummaryEstimate,
  type SummaryResult,
  type SummaryUsage,
} from '../../shared/summary/summarizer.ts';
import { MESSAGES_REPORT, messagesCall, tokensOf } from './anthropic-calls.ts';
import { AnthropicTransientError, mapAnthropicError } from './anthropic-errors.ts';
import type { AnthropicMessagesClient } from './anthropic-platform.ts';
import { directCalls, type LlmCalls, whileAnswering } from './llm-calls.ts';

/** Endpoint used when no `baseURL` is given. Passed explicitly so the SDK never reads ANTHROPIC_BASE_URL itself. */
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Default per-request timeout, ms. A summary of a few thousand tokens takes well under a minute. */
export const DEFAULT_TIMEOUT_MS = 180_000;

/** Default input budget of one request, tokens: half of a 200k context window, room to spare. */
export const DEFAULT_MAX_INPUT_TOKENS = 100_000;

/** Options of {@link createAnthropicSummarizer}. */
export interface AnthropicSummarizerOptions {
  /** Anthropic API key (config `ANTHROPIC_API_KEY`); unused, and may be empty, with {@link client}. */
  apiKey: string;
  /**
   * The Messages API client to send through instead of one made from `apiKey` and `baseURL`: a
   * Bedrock or Vertex AI client (./anthropic-platform.ts). Default: Anthropic's API.
   */
  client?: AnthropicMessagesClient | undefined;
  /** `gen_ai.provider.name` of the requests' spans (./anthropic-platform.ts); default `anthropic`. */
  provider?: string | undefined;
  /** Messages API endpoint (config `ANTHROPIC_BASE_URL`); default {@link DEFAULT_ANTHROPIC_BASE_URL}. */
  baseURL?: string | undefined;
  /** Model id used when the strategy names none (config `COMPACTOR_MODEL`). */
  model: string;
  /** Retries inside the SDK, on top of BullMQ's; default 0. */
  maxRetries?: number | undefined;
  /** Timeout of one request, ms; default {@link DEFAULT_TIMEOUT_MS}. */
  timeoutMs?: number | undefined;
  /**
   * Most input tokens one request may carry (estimated); longer transcripts are summarized in
   * chunks folded into the checkpoint in order. Default {@link DEFAULT_MAX_INPUT_TOKENS}.
   */
  maxInputTokens?: number | undefined;
  /** Monotonic clock for `llmMs`, ms; default `performance.now`. */
  now?: (() => number) | undefined;
  /**
   * Whether the user turn carries a `cache_control` breakpoint when the whole prompt reaches the
   * model's minimum cacheable length; default false. It makes a retry of the same request (after an
   * invalid answer, a 529) read the prompt from the cache at 0.1× the input price, and costs 1.25×
   * instead of 1× for the prompt of every first request: worth it when more than about one request
   * in four is sent again within the cache's 5 minutes. See docs/guide/summarizers.md.
   */
  cacheUserTurn?: boolean | undefined;
  /**
   * Sends each Messages API request (worker/observability/tracing.ts traces them); default
   * {@link directCalls}, which sends them as they are.
   */
  calls?: LlmCalls | undefined;
}

/**
 * The tool the model must call: `record_checkpoint`, whose input schema is the JSON schema of
 * `checkpointSchema` (without `$schema`, which the API does not need) opened by a required string
 * property `analysis`.
 *
 * Why a scratch property: the checkpoint is better when the model has walked through the
 * transcript before writing it, and extended thinking is not available here. The Messages API
 * documentation (Building with extended thinking, "Extended thinking with tool use") says tool use
 * with thinking only supports `tool_choice` `auto` or `none`; a `tool_choice` of type `any` or
 * `tool` is an error ("Thinking may not be enabled when tool_choice forces tool use"), and the
 * forced-tool-use guide adds that forcing a tool suppresses any content before the `tool_use` block.
 * compactor forces `record_checkpoint` (type `tool`) so that every answer is a checkpoint; the
 * documented-compatible way to let the model reason first is a field of the tool's input that it
 * fills first (JSON properties come in schema order). {@link checkpointFromMessage} drops it before
 * validation; it is never stored. `max_tokens` leaves room for it (shared/summary/budget.ts).
 */
export const CHECKPOINT_TOOL: Anthropic.Tool = {
  name: SUMMARY_TOOL_NAME,
  description: SUMMARY_TOOL_DESCRIPTION,
  input_schema: CHECKPOINT_ANSWER_SCHEMA as Anthropic.Tool.InputSchema,
};

/** How the Messages API requests carry the answer's schema, for the shared plan (shared/summary/plan.ts). */
const SHAPE: RequestShape = { schemaJson: JSON.stringify(CHECKPOINT_TOOL), answer: 'tool' };

/**
 * Creates the `anthropic` summarizer. One SDK client per summarizer; `summarize` may run concurrently.
 * @throws {SummarizerConfigError} when an option is invalid (empty key or model, bad retries/timeout).
 */
export function createAnthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  const maxRetries = options.maxRetries ?? 0;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!options.apiKey && !options.client)
    throw new SummarizerConfigError('anthropic summarizer: apiKey is empty');
  if (!options.model) throw new SummarizerConfigError('anthropic summarizer: model is empty');
  if (!Number.isInteger(maxRetries) || maxRetries < 0) {
    throw new SummarizerConfigError(
      `anthropic summarizer: maxRetries must be an integer >= 0, got ${maxRetries}`,
    );
  }
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new SummarizerConfigError(
      `anthropic summarizer: timeoutMs must be an integer > 0, got ${timeoutMs}`,
    );
  }
  const client = messagesClientOf(options);
  const now = options.now ?? (() => performance.now());
  const calls = options.calls ?? directCalls;

  const maxInputTokens = options.maxInputTokens ?? DEFAULT_MAX_INPUT_TOKENS;

  /** One Messages API call: the previous checkpoint merged with `leaving`. */
  async function summarizeOnce(input: SummarizeInput, model: string): Promise<SummaryResult> {
    const { params, prompt } = summaryRequest(input, model, options.cacheUserTurn ?? false);
    const started = now();
    let message: Anthropic.Message;
    let suspects: CheckpointEntry[];
    try {
      const reply = calls.send(
        messagesCall('anthropic', input, params, client.baseURL, options.provider),
        (headers) => client.messages.create(params, { signal: input.signal, headers }),
        MESSAGES_REPORT,
      );
      [message, suspects] = await whileAnswering(reply, () => sessionSuspects(leavingArray(input.leaving)));
    } catch (error) {
      throw mapAnthropicError(error, { model, baseURL: client.baseURL, provider: options.provider });
    }
    const llmMs = Math.max(0, Math.round(now() - started));
    assertMessage(message);
    const usage = usageOf(message, model, llmMs);
    const checkpoint = guarded(checkpointFromMessage(message, prompt.workingSet), input, suspects);
    return { checkpoint, usage };
  }

  return {
    name: 'anthropic',
    estimate(input: EstimateInput): SummaryEstimate {
      return estimateOf(input, input.model || options.model, maxInputTokens);
    },
    async summarize(input: SummarizeInput): Promise<SummaryResult> {
      const model = input.model || options.model;
      const budget = transcriptBudget(input, SHAPE, maxInputTokens, 'anthropic summarizer');
      return foldLeaving(input, budget, (chunk) => summarizeOnce(chunk, model));
    },
  };
}

/**
 * The Messages API request of one summary call, and the prompt it was built from.
 *
 * - The summary budget grows with the leaving tokens ({@link summaryBudgetTokens}, from
 *   `input.leavingTokens`, else this chunk's); `max_tokens` adds the analysis allowance.
 * - Old tool output is pruned ({@link pruneToolOutputs}) until the estimated input (system, tool,
 *   previous checkpoint, working set, user messages, transcript, instructions) is at most 95% of
 *   this chunk's leaving tokens. Under {@link SMALL_LEAVING_TOKENS} leaving tokens nothing is
 *   pruned: the fixed part of the request is larger than they are whatever is cut, and the
 *   transcript is small enough to send whole.
 * - `cache_control` goes on the system block when tools + system reach the model's minimum, and on
 *   the user turn when the whole prompt does ({@link planCacheBreakpoints}) and `cacheUserTurn` is
 *   true.
 */
export function summaryRequest(input: SummarizeInput, model: string, cacheUserTurn = false) {
  const { prompt, budget } = summaryPromptOf(input, SHAPE);
  // Counted unescaped, about 4 characters a token: under what the API counts (its tokens are
  // shorter on code), so a breakpoint is placed only where the prefix is surely long enough.
  // The tool's JSON is the shape's, written once at load (the schema is a few thousand characters).
  const prefixTokens = estimateTextTokens(SHAPE.schemaJson + prompt.system);
  const cache = planCacheBreakpoints(model, prefixTokens, prefixTokens + estimateTextTokens(prompt.user));
  const ephemeral = { cache_control: { type: 'ephemeral' as const } };
  // The instructions go in the user turn: the system prompt is the same for every call.
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model,
    max_tokens: summaryMaxTokens(budget),
    system: [{ type: 'text', text: prompt.system, ...(cache.system ? ephemeral : {}) }],
    tools: [CHECKPOINT_TOOL],
    tool_choice: { type: 'tool', name: SUMMARY_TOOL_NAME, disable_parallel_tool_use: true },
    messages: [
      {
        role: 'user',
        content: [{ type: 'text', text: prompt.user, ...(cache.userTurn && cacheUserTurn ? ephemeral : {}) }],
      },
    ],
  };
  return { params, prompt, budget };
}

/**
 * The model's checkpoint checked like the offline one (shared/summary/guard.ts): a model can be talked
 * into copying an injected order from the transcript, so what it presents as the user's
 * instructions, current work and next step is checked against where it came from and what it reads
 * as; what fails is kept quoted in `suspectedInjections`, and secret paths it adds to the working
 * set stay out unless the agent acted on them at the user's request. `leavingSuspects`: what
 * `sessionSuspects` found in the leaving messages while the call ran (read here when absent).
 */
function guarded(
  checkpoint: Checkpoint,
  input: SummarizeInput,
  leavingSuspects?: readonly CheckpointEntry[],
): Checkpoint {
  return guardCheckpoint(checkpoint, {
    leaving: leavingArray(input.leaving),
    previous: input.previous,
    leavingSuspects,
  });
}

/**
 * The request verbatim comes from the transcript (or the previous checkpoint), not from the model,
 * which saw it clipped and is told to leave it empty.
 */
function withLastRequest(checkpoint: Checkpoint, input: SummarizeInput): Checkpoint {
  const lastUserRequest =
    lastUserRequestOf(leavingArray(input.leaving)) ??
    input.previous?.lastUserRequest ??
    checkpoint.lastUserRequest;
  return { ...checkpoint, lastUserRequest };
}

/** One summary request of a batch: `customId` comes back with its result. */
export interface BatchItem {
  customId: string;
  input: SummarizeInput;
}

/** One request's answer in an ended batch: the model's message, or why there is none. */
export type BatchAnswer =
  | { customId: string; ok: true; message: Anthropic.Message }
  | { customId: string; ok: false; error: string };

/** Submits summaries through the Message Batches API and collects them (for sweeps with `batch` on). */
export interface AnthropicBatches {
  /**
   * Whether `input` fits one request of the input budget (a batch cannot fold chunks; a longer
   * transcript is summarized online instead).
   */
  fits(input: SummarizeInput): boolean;
  /** Creates one batch of `items`. @returns the batch id. @throws mapped SDK errors. */
  submit(items: BatchItem[]): Promise<string>;
  /** null while the batch runs; once it ended, one answer per request. @throws mapped SDK errors. */
  collect(batchId: string): Promise<BatchAnswer[] | null>;
  /**
   * The summary in a batch answer, validated exactly like an online one, billed at
   * {@link BATCH_PRICE_FACTOR}. `input` is the request's input rebuilt from the database.
   * @throws {SummaryRejectedError} when the answer must not be committed.
   */
  summaryOf(message: Anthropic.Message, input: SummarizeInput): SummaryResult;
}

/** The Message Batches API is billed at half the price of the Messages API. */
export const BATCH_PRICE_FACTOR = 0.5;

/**
 * A client for batch summaries with the same prompt, tool and validation as the online summarizer.
 * @throws {SummarizerConfigError} when an option is invalid.
 */
export function createAnthropicBatches(options: AnthropicSummarizerOptions): AnthropicBatches {
  if (!options.apiKey) throw new SummarizerConfigError('anthropic batches: apiKey is empty');
  const client = anthropicClient(options);
  const maxInputTokens = options.maxInputTokens ?? DEFAULT_MAX_INPUT_TOKENS;
  const modelOf = (input: SummarizeInput) => input.model || options.model;
  return {
    fits: (input) =>
      chunkByBudget(leavingArray(input.leaving), maxInputTokens - fixedInputTokens(input, SHAPE)).length <= 1,
    async submit(items) {
      const requests = items.map(({ customId, input }) => ({
        custom_id: customId,
        params: summaryRequest(input, modelOf(input), options.cacheUserTurn ?? false).params,
      }));
      try {
        return (await client.messages.batches.create({ requests })).id;
      } catch (error) {
        throw mapAnthropicError(error, { model: options.model, baseURL: client.baseURL });
      }
    },
    async collect(batchId) {
      try {
        const batch = await client.messages.batches.retrieve(batchId);
        if (batch.processing_status !== 'ended') return null;
        const answers: BatchAnswer[] = [];
        for await (const { custom_id: customId, result } of await client.messages.batches.results(batchId)) {
          if (result.type === 'succeeded') answers.push({ customId, ok: true, message: result.message });
          else {
            const detail = result.type === 'errored' ? `: ${result.error.error.message}` : '';
            answers.push({ customId, ok: false, error: `batch request ${result.type}${detail}` });
          }
        }
        return answers;
      } catch (error) {
        throw mapAnthropicError(error, { model: options.model, baseURL: client.baseURL });
      }
    },
    summaryOf(message, input) {
      const { prompt } = summaryRequest(input, modelOf(input));
      const checkpoint = guarded(checkpointFromMessage(message, prompt.workingSet), input);
      const usage = usageOf(message, modelOf(input), 0);
      return {
        checkpoint: withLastRequest(checkpoint, input),
        usage: { ...usage, costUsd: usage.costUsd * BATCH_PRICE_FACTOR },
      };
    },
  };
}

/**
 * The token ceiling of a summary as {@link createAnthropicSummarizer} would make it: one call per
 * chunk of the transcript; each call carries the prompt, the tool and the previous checkpoint (the
 * calls after the first, the checkpoint of the chunks before, up to the summary budget), and may
 * answer up to its `max_tokens` (the budget and the analysis allowance). An upper bound: pruning
 * usually makes the input smaller than the leaving tokens.
 */
export function estimateOf(input: EstimateInput, model: string, maxInputTokens: number): SummaryEstimate {
  return estimateSummary(input, model, maxInputTokens, SHAPE);
}

/**
 * Extracts and validates the checkpoint of a Messages API answer, then sets its working set: the
 * paths compactor extracted (`workingSet`, most recent first) followed by any the model added
 * (sanitized like compactor's).
 * Pure.
 * @throws {SummaryRejectedError} when the answer was refused, cut off (`max_tokens`, context window)
 *   or paused, has no `record_checkpoint` call, its input breaks the schema (the message names the
 *   field), or it says nothing (every field but the working set empty).
 */
export function checkpointFromMessage(message: Anthropic.Message, workingSet: string[]): Checkpoint {
  const ref = `message ${message.id}, request-id ${requestIdOf(message)}`;
  const stop = message.stop_reason;
  if (stop === 'refusal') {
    const why = message.stop_details?.explanation ?? message.stop_details?.category ?? 'no explanation given';
    throw new SummaryRejectedError(`summary refused by the model (stop_reason refusal: ${why}; ${ref})`);
  }
  if (stop === 'max_tokens' || stop === 'model_context_window_exceeded') {
    throw new SummaryRejectedError(
      `summary cut off (stop_reason ${stop} after ${message.usage?.output_tokens ?? '?'} output tokens; ${ref}): ` +
        'raise maxSummaryTokens or summarize fewer messages at once',
    );
  }
  if (stop === 'pause_turn')
    throw new SummaryRejectedError(`summary not finished (stop_reason pause_turn; ${ref})`);
  const call = message.content.find(
    (b): b is Anthropic.ToolUseBlock => b.type === 'tool_use' && b.name === SUMMARY_TOOL_NAME,
  );
  if (!call) {
    const text = message.content
      .flatMap((b) => (b.type === 'text' ? [b.text] : []))
      .join(' ')
      .slice(0, 200);
    throw new SummaryRejectedError(
      `no ${SUMMARY_TOOL_NAME} call in the answer (stop_reason ${stop}; ${ref})${text ? `; it said: ${text}` : ''}`,
    );
  }
  return checkpointFromAnswer(call.input, workingSet, ref);
}

// Moved to shared/summary/answer.ts, which the `openai` summarizer shares; re-exported for callers.
export { isEmptyCheckpoint, withoutAnalysis };

/** A 2xx body that is not a Message (e.g. a proxy's HTML page): transient, like a garbled body. */
function assertMessage(message: unknown): asserts message is Anthropic.Message {
  const m = message as Partial<Anthropic.Message> | null;
  if (typeof m !== 'object' || m === null || !Array.isArray(m.content)) {
    const preview = typeof message === 'string' ? `: ${message.slice(0, 120)}` : '';
    throw new AnthropicTransientError(
      `Anthropic API answered 2xx with something that is not a message${preview}`,
      {
        status: null,
        requestId: null,
      },
    );
  }
}

/**
 * The connection pool of every SDK client of this process: one undici `Agent`, handed to the
 * SDK's own `fetch` (the platform's) as its `dispatcher`. It keeps connections alive between
 * summaries with undici's defaults: an idle connection is kept 4 s, or as long as the server's
 * `Keep-Alive: timeout` says less 2 s, so a connection the server is about to close is not
 * reused; any number of connections per origin. undici 7 is the major whose dispatchers take
 * both the handler interface of the `fetch` Node 20 and 22 bundle (undici 6) and the newer one.
 */
const sdkDispatcher = new Agent();

/** The SDK clients' `fetchOptions`: the process's connection pool (the platform clients' too). */
export const SDK_FETCH_OPTIONS = { dispatcher: sdkDispatcher };

/**
 * The SDK client of a summarizer's options: no SDK retries unless asked (BullMQ retries), the
 * default timeout and endpoint, and the process's keep-alive connection pool. The SDK's own
 * OpenTelemetry spans are off: the summarizer sends each request through its {@link LlmCalls},
 * whose GenAI span is that request's (worker/observability/tracing.ts), and a second span of the
 * same call would count its tokens twice in a backend that sums GenAI spans. The request still
 * carries the trace context, as headers the span's propagator writes.
 */
export function anthropicClient(options: AnthropicSummarizerOptions): Anthropic {
  return new Anthropic({
    openTelemetry: false,
    fetchOptions: SDK_FETCH_OPTIONS,
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? DEFAULT_ANTHROPIC_BASE_URL,
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

/** The client of a summarizer's options: the one given, else {@link anthropicClient}'s. */
export function messagesClientOf(options: AnthropicSummarizerOptions): AnthropicMessagesClient {
  return options.client ?? anthropicClient(options);
}

/**
 * The usage and cost (USD) of an answer. When the answer lists `usage.iterations` (a compaction's
 * does, with 0 at the top level), the docs say to sum across them; otherwise the top-level counts.
 */
export function usageOf(message: Anthropic.Message, requestedModel: string, llmMs: number): SummaryUsage {
  const model = typeof message.model === 'string' && message.model ? message.model : requestedModel;
  const tokens = tokensOf(message);
  return { model, ...tokens, costUsd: costUsd(model, tokens).usd, llmMs };
}

function requestIdOf(message: Anthropic.Message): string {
  // The SDK attaches the `request-id` header as a non-enumerable `_request_id`.
  const id = (message as { _request_id?: unknown })._request_id;
  return typeof id === 'string' && id ? id : 'none';
}
