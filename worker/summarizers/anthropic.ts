/**
 * The `anthropic` summarizer: one Messages API call per summary, through @anthropic-ai/sdk.
 * Structured output comes from a forced call of the single tool `record_checkpoint`, whose input is
 * validated with the checkpoint's zod schema; the fixed system prompt (and the tool before it) is
 * the cached prefix. Nothing from a refused, truncated, toolless, invalid or empty answer is ever
 * returned, so a failed summary is never committed.
 *
 * Retries belong to BullMQ: the SDK's own retries are off by default, and SDK errors are mapped by
 * {@link mapAnthropicError}.
 */
import { performance } from 'node:perf_hooks';
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { SummarizerConfigError, SummaryRejectedError } from '../../shared/contract/errors.ts';
import type { Message } from '../../shared/contract/message.ts';
import { estimateMessageTokens, estimateTextTokens } from '../../shared/contract/tokens.ts';
import type { SummaryEstimate } from '../../shared/policy/budget.ts';
import { type Checkpoint, checkpointSchema } from '../../shared/summary/checkpoint.ts';
import { chunkByBudget } from '../../shared/summary/chunks.ts';
import { lastUserRequestOf } from '../../shared/summary/last-request.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import {
  buildSummaryPrompt,
  SUMMARY_TOOL_DESCRIPTION,
  SUMMARY_TOOL_NAME,
} from '../../shared/summary/prompt.ts';
import {
  addUsage,
  type EstimateInput,
  leavingArray,
  pagesOf,
  type SummarizeInput,
  type Summarizer,
  type SummaryResult,
  type SummaryUsage,
} from '../../shared/summary/summarizer.ts';
import { sanitizePath } from '../../shared/working-set/working-set.ts';
import { AnthropicTransientError, mapAnthropicError } from './anthropic-errors.ts';

/** Endpoint used when no `baseURL` is given. Passed explicitly so the SDK never reads ANTHROPIC_BASE_URL itself. */
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Default per-request timeout, ms. A summary of a few thousand tokens takes well under a minute. */
export const DEFAULT_TIMEOUT_MS = 180_000;

/** Default input budget of one request, tokens: half of a 200k context window, room to spare. */
export const DEFAULT_MAX_INPUT_TOKENS = 100_000;

/** A transcript budget below this is a configuration mistake, not something to chunk around. */
const MIN_TRANSCRIPT_TOKENS = 1_000;

/** Room for the prompt's working set: 20 paths of up to 300 characters, escaped. */
const WORKING_SET_RESERVE_TOKENS = 2_000;

/** Most working-set paths a checkpoint holds (the schema's bound). */
const MAX_WORKING_SET = 10_000;

/** Options of {@link createAnthropicSummarizer}. */
export interface AnthropicSummarizerOptions {
  /** Anthropic API key (config `ANTHROPIC_API_KEY`). */
  apiKey: string;
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
}

/**
 * The tool the model must call: `record_checkpoint`, whose input schema is the JSON schema of
 * `checkpointSchema` (without `$schema`, which the API does not need).
 */
export const CHECKPOINT_TOOL: Anthropic.Tool = (() => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(checkpointSchema) as Record<string, unknown>;
  return {
    name: SUMMARY_TOOL_NAME,
    description: SUMMARY_TOOL_DESCRIPTION,
    input_schema: { ...schema, type: 'object' },
  };
})();

/**
 * Creates the `anthropic` summarizer. One SDK client per summarizer; `summarize` may run concurrently.
 * @throws {SummarizerConfigError} when an option is invalid (empty key or model, bad retries/timeout).
 */
export function createAnthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  const maxRetries = options.maxRetries ?? 0;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!options.apiKey) throw new SummarizerConfigError('anthropic summarizer: apiKey is empty');
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
  const client = anthropicClient(options);
  const now = options.now ?? (() => performance.now());

  const maxInputTokens = options.maxInputTokens ?? DEFAULT_MAX_INPUT_TOKENS;

  /** One Messages API call: the previous checkpoint merged with `leaving`. */
  async function summarizeOnce(input: SummarizeInput, model: string): Promise<SummaryResult> {
    const { params, prompt } = summaryRequest(input, model);
    const started = now();
    let message: Anthropic.Message;
    try {
      message = await client.messages.create(params, { signal: input.signal });
    } catch (error) {
      throw mapAnthropicError(error, { model });
    }
    const llmMs = Math.max(0, Math.round(now() - started));
    assertMessage(message);
    const usage = usageOf(message, model, llmMs);
    const checkpoint = checkpointFromMessage(message, prompt.workingSet);
    return { checkpoint, usage };
  }

  return {
    name: 'anthropic',
    estimate(input: EstimateInput): SummaryEstimate {
      return estimateOf(input, input.model || options.model, maxInputTokens);
    },
    async summarize(input: SummarizeInput): Promise<SummaryResult> {
      const model = input.model || options.model;
      const budget = maxInputTokens - fixedInputTokens(input);
      if (budget < MIN_TRANSCRIPT_TOKENS) {
        throw new SummarizerConfigError(
          `anthropic summarizer: maxInputTokens ${maxInputTokens} leaves ${budget} tokens for the transcript ` +
            `after the system prompt, tool, previous checkpoint and summary; raise it above ${maxInputTokens - budget + MIN_TRANSCRIPT_TOKENS}`,
        );
      }
      // Fold the chunks in order: each call merges one chunk into the checkpoint of those before it.
      let previous = input.previous;
      let total: SummaryUsage | null = null;
      let lastRequest: string | null = null;
      const fold = async (chunk: Message[]) => {
        const result = await summarizeOnce({ ...input, previous, leaving: chunk }, model);
        previous = result.checkpoint;
        total = total ? addUsage(total, result.usage) : result.usage;
        lastRequest = lastUserRequestOf(chunk) ?? lastRequest;
      };
      // Pages arrive in order and gather until they hold about two chunks; then every chunk but the
      // last, which may still grow, is folded. Chunking greedily from a chunk's start, the
      // boundaries come out as they would over the whole list at once, with about two chunks and
      // a page in memory.
      let open: Message[] = [];
      let openTokens = 0;
      for await (const page of pagesOf(input.leaving)) {
        for (const m of page) open.push(m);
        openTokens += page.reduce((n, m) => n + estimateMessageTokens(m.content), 0);
        if (openTokens < 2 * budget) continue;
        const chunks = chunkByBudget(open, budget);
        open = chunks.pop() ?? [];
        openTokens = open.reduce((n, m) => n + estimateMessageTokens(m.content), 0);
        for (const chunk of chunks) await fold(chunk);
      }
      for (const chunk of chunkByBudget(open, budget)) await fold(chunk);
      if (!previous || !total) throw new SummaryRejectedError('nothing to summarize: no leaving messages');
      const checkpoint: Checkpoint = previous;
      return {
        checkpoint: {
          ...checkpoint,
          lastUserRequest: lastRequest ?? input.previous?.lastUserRequest ?? checkpoint.lastUserRequest,
        },
        usage: total,
      };
    },
  };
}

/** The Messages API request of one summary call, and the prompt it was built from. */
function summaryRequest(input: SummarizeInput, model: string) {
  const prompt = buildSummaryPrompt({
    previous: input.previous,
    leaving: leavingArray(input.leaving),
    maxSummaryTokens: input.maxSummaryTokens,
    instructions: input.instructions,
  });
  // The instructions go in the user turn: the system prompt (the cache breakpoint) is the same for
  // every call.
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model,
    max_tokens: input.maxSummaryTokens,
    system: [{ type: 'text', text: prompt.system, cache_control: { type: 'ephemeral' } }],
    tools: [CHECKPOINT_TOOL],
    tool_choice: { type: 'tool', name: SUMMARY_TOOL_NAME, disable_parallel_tool_use: true },
    messages: [{ role: 'user', content: prompt.user }],
  };
  return { params, prompt };
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
      chunkByBudget(leavingArray(input.leaving), maxInputTokens - fixedInputTokens(input)).length <= 1,
    async submit(items) {
      const requests = items.map(({ customId, input }) => ({
        custom_id: customId,
        params: summaryRequest(input, modelOf(input)).params,
      }));
      try {
        return (await client.messages.batches.create({ requests })).id;
      } catch (error) {
        throw mapAnthropicError(error, { model: options.model });
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
        throw mapAnthropicError(error, { model: options.model });
      }
    },
    summaryOf(message, input) {
      const { prompt } = summaryRequest(input, modelOf(input));
      const checkpoint = checkpointFromMessage(message, prompt.workingSet);
      const usage = usageOf(message, modelOf(input), 0);
      return {
        checkpoint: withLastRequest(checkpoint, input),
        usage: { ...usage, costUsd: usage.costUsd * BATCH_PRICE_FACTOR },
      };
    },
  };
}

/**
 * Input tokens of a request besides its transcript, estimated: system prompt, tool schema, the
 * instructions and working set (20 paths of at most 300 characters), and the carried checkpoint,
 * which may grow up to `maxSummaryTokens` between chunks.
 */
/**
 * The token ceiling of a summary as {@link createAnthropicSummarizer} would make it: one call per
 * chunk of the transcript; each call carries the prompt, the tool and the previous checkpoint (the
 * calls after the first, the checkpoint of the chunks before, up to `maxSummaryTokens`), and may
 * answer up to `maxSummaryTokens`.
 */
export function estimateOf(input: EstimateInput, model: string, maxInputTokens: number): SummaryEstimate {
  const fixed = fixedInputTokens(input);
  const perChunk = maxInputTokens - fixed;
  const calls = perChunk > 0 ? Math.max(1, Math.ceil(input.leavingTokens / perChunk)) : 1;
  const shell = fixed - input.maxSummaryTokens;
  return {
    model,
    inputTokens: input.leavingTokens + calls * shell + (calls - 1) * input.maxSummaryTokens,
    maxOutputTokens: calls * input.maxSummaryTokens,
  };
}

function fixedInputTokens(input: Omit<SummarizeInput, 'leaving'>): number {
  const shell = buildSummaryPrompt({
    previous: input.previous,
    leaving: [],
    maxSummaryTokens: input.maxSummaryTokens,
    instructions: input.instructions,
  });
  return (
    estimateTextTokens(shell.system + shell.user + JSON.stringify(CHECKPOINT_TOOL)) +
    WORKING_SET_RESERVE_TOKENS +
    input.maxSummaryTokens
  );
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
  const parsed = checkpointSchema.safeParse(call.input);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => {
      const where = i.path.length > 0 ? i.path.join('.') : 'checkpoint';
      return `${where}: ${i.message}`;
    });
    throw new SummaryRejectedError(`invalid checkpoint (${ref}): ${problems.join('; ')}`);
  }
  if (isEmptyCheckpoint(parsed.data)) {
    throw new SummaryRejectedError(`empty checkpoint: every field but workingSet is blank (${ref})`);
  }
  const extras = parsed.data.workingSet.map(sanitizePath);
  const merged = [...new Set([...workingSet, ...extras])].slice(0, MAX_WORKING_SET);
  const final = checkpointSchema.safeParse({ ...parsed.data, workingSet: merged });
  if (!final.success) {
    throw new SummaryRejectedError(
      `invalid working set (${ref}): ${final.error.issues[0]?.message ?? 'unknown'}`,
    );
  }
  return final.data;
}

/**
 * Whether a checkpoint says nothing: goal, last request and every list blank. The working set is not
 * counted: the model can copy it from the prompt without having summarized anything.
 */
export function isEmptyCheckpoint(checkpoint: Checkpoint): boolean {
  const { workingSet: _paths, ...rest } = checkpoint;
  return Object.values(rest).every((v) =>
    v === null ? true : Array.isArray(v) ? v.length === 0 : typeof v === 'string' ? v.trim() === '' : false,
  );
}

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
 * The SDK client of a summarizer's options: no SDK retries unless asked (BullMQ retries), the
 * default timeout and endpoint.
 */
export function anthropicClient(options: AnthropicSummarizerOptions): Anthropic {
  return new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? DEFAULT_ANTHROPIC_BASE_URL,
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

/**
 * The usage and cost (USD) of an answer. When the answer lists `usage.iterations` (a compaction's
 * does, with 0 at the top level), the docs say to sum across them; otherwise the top-level counts.
 */
export function usageOf(message: Anthropic.Message, requestedModel: string, llmMs: number): SummaryUsage {
  const model = typeof message.model === 'string' && message.model ? message.model : requestedModel;
  const u = (message.usage ?? {}) as unknown as Record<string, unknown> & { iterations?: unknown };
  const parts: Array<Record<string, unknown>> = Array.isArray(u.iterations) ? u.iterations : [u];
  const sum = (field: string) =>
    parts.reduce((n, p) => n + (typeof p[field] === 'number' ? (p[field] as number) : 0), 0);
  const tokens = {
    inputTokens: sum('input_tokens'),
    outputTokens: sum('output_tokens'),
    cacheReadTokens: sum('cache_read_input_tokens'),
    cacheWriteTokens: sum('cache_creation_input_tokens'),
  };
  return { model, ...tokens, costUsd: costUsd(model, tokens).usd, llmMs };
}

function requestIdOf(message: Anthropic.Message): string {
  // The SDK attaches the `request-id` header as a non-enumerable `_request_id`.
  const id = (message as { _request_id?: unknown })._request_id;
  return typeof id === 'string' && id ? id : 'none';
}
