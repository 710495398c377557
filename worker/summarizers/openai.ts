/**
 * The `openai` summarizer: one Chat Completions call per summary (per chunk of a long transcript),
 * through the `openai` SDK, against OpenAI or any server that speaks its API (Azure OpenAI, vLLM,
 * Ollama, LiteLLM, OpenRouter) by base URL and model. It sends the `anthropic` summarizer's prompt
 * and asks for the same answer (shared/summary/prompt.ts, shared/summary/answer.ts), sized and
 * chunked the same way (shared/summary/plan.ts), and checks the checkpoint as every summarizer does
 * (shared/summary/guard.ts).
 *
 * How the answer is forced (OpenAI "Structured model outputs" guide,
 * developers.openai.com/api/docs/guides/structured-outputs, read 2026-11):
 * - `json_schema`: `response_format: { type: 'json_schema', json_schema: { name, strict: true,
 *   schema } }`, the checkpoint's schema in the guide's strict subset; the answer is the message's
 *   JSON `content`;
 * - `tool`: a forced call of the strict function `record_checkpoint` (`tool_choice` naming it,
 *   `parallel_tool_calls: false`: the guide's launch post says strict schemas are not guaranteed
 *   across parallel calls); the answer is the call's `arguments`;
 * - `auto` (the default): `json_schema`, and `tool` from then on for a model whose server refused
 *   `response_format` with a 400 naming it.
 * Either way the answer is validated with the checkpoint's zod schema: a compatible server may not
 * enforce the schema it was sent. Nothing from a refused (`message.refusal`), cut off
 * (`finish_reason: 'length'`), filtered, empty or invalid answer is returned.
 *
 * Retries belong to BullMQ, as for the `anthropic` summarizer: the SDK's own retries are off by
 * default, and SDK errors are mapped by {@link mapOpenAIError}.
 *
 * Token budget: the request is sized by compactor's estimate (about 4 characters a token, the text
 * JSON-escaped), a little over what tiktoken's `o200k_base` counts for the GPT-4o and GPT-5 models.
 * The OpenAI cookbook ("How to count tokens with tiktoken") adds about 3 tokens per message and 3
 * to prime the reply: 9 for the two messages sent, inside the estimate's margin. There is no
 * counting endpoint for Chat Completions (the token-counting guide,
 * developers.openai.com/api/docs/guides/token-counting, documents `/v1/responses/input_tokens`
 * only), and compatible servers count with their own tokenizers, so nothing is counted remotely.
 * `completion_tokens`, and so `max_completion_tokens`, include a reasoning model's hidden reasoning
 * (same guide).
 */
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { Agent } from 'undici';
import { SummarizerConfigError, SummaryRejectedError, TransientError } from '../../shared/contract/errors.ts';
import {
  CHECKPOINT_ANSWER_SCHEMA,
  checkpointFromAnswer,
  strictJsonSchema,
} from '../../shared/summary/answer.ts';
import { summaryMaxTokens } from '../../shared/summary/budget.ts';
import type { Checkpoint, CheckpointEntry } from '../../shared/summary/checkpoint.ts';
import { guardCheckpoint, sessionSuspects } from '../../shared/summary/guard.ts';
import {
  estimateSummary,
  foldLeaving,
  type RequestShape,
  summaryPromptOf,
  transcriptBudget,
} from '../../shared/summary/plan.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import { type AnswerForm, SUMMARY_TOOL_DESCRIPTION, SUMMARY_TOOL_NAME } from '../../shared/summary/prompt.ts';
import {
  type EstimateInput,
  leavingArray,
  type SummarizeInput,
  type Summarizer,
  type SummaryResult,
  type SummaryUsage,
} from '../../shared/summary/summarizer.ts';
import { directCalls, type LlmCalls, whileAnswering } from './llm-calls.ts';
import { CHAT_REPORT, chatCall, chatTokensOf } from './openai-calls.ts';
import { isResponseFormatUnsupported, mapOpenAIError } from './openai-errors.ts';

/** Endpoint used when no `baseURL` is given. Passed explicitly so the SDK never reads OPENAI_BASE_URL itself. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Default per-request timeout, ms (as the `anthropic` summarizer's). */
export const DEFAULT_OPENAI_TIMEOUT_MS = 180_000;

/** Default input budget of one request, tokens (as the `anthropic` summarizer's). */
export const DEFAULT_OPENAI_MAX_INPUT_TOKENS = 100_000;

/** How the summarizer forces a checkpoint (see the file's comment). */
export const STRUCTURED_OUTPUT_MODES = ['auto', 'json_schema', 'tool'] as const;
export type StructuredOutputMode = (typeof STRUCTURED_OUTPUT_MODES)[number];

/** Options of {@link createOpenAISummarizer}. */
export interface OpenAISummarizerOptions {
  /** API key (config `OPENAI_API_KEY`); servers that check none still need a non-empty one. */
  apiKey: string;
  /** Chat Completions endpoint's base (config `OPENAI_BASE_URL`); default {@link DEFAULT_OPENAI_BASE_URL}. */
  baseURL?: string | undefined;
  /** Model id used when the strategy names none (config `COMPACTOR_OPENAI_MODEL`). */
  model: string;
  /** How the answer is forced (config `COMPACTOR_OPENAI_STRUCTURED_OUTPUTS`); default `auto`. */
  structuredOutputs?: StructuredOutputMode | undefined;
  /**
   * The GenAI conventions' `gen_ai.provider.name` of the server (config
   * `COMPACTOR_OPENAI_PROVIDER_NAME`): default `openai`; `azure.ai.openai` for Azure OpenAI.
   */
  providerName?: string | undefined;
  /** Retries inside the SDK, on top of BullMQ's; default 0. */
  maxRetries?: number | undefined;
  /** Timeout of one request, ms; default {@link DEFAULT_OPENAI_TIMEOUT_MS}. */
  timeoutMs?: number | undefined;
  /**
   * Most input tokens one request may carry (estimated); longer transcripts are summarized in
   * chunks folded into the checkpoint in order. Default {@link DEFAULT_OPENAI_MAX_INPUT_TOKENS}.
   */
  maxInputTokens?: number | undefined;
  /** Monotonic clock for `llmMs`, ms; default `performance.now`. */
  now?: (() => number) | undefined;
  /** Sends each request (worker/observability/tracing.ts traces them); default {@link directCalls}. */
  calls?: LlmCalls | undefined;
}

/** The checkpoint's answer schema in the strict subset of Structured Outputs. */
export const CHECKPOINT_RESPONSE_SCHEMA = strictJsonSchema(CHECKPOINT_ANSWER_SCHEMA);

/** `response_format` of a `json_schema` request (`name` is at most 64 of `[a-zA-Z0-9_-]`). */
export const CHECKPOINT_RESPONSE_FORMAT: OpenAI.ResponseFormatJSONSchema = {
  type: 'json_schema',
  json_schema: {
    name: SUMMARY_TOOL_NAME,
    description: SUMMARY_TOOL_DESCRIPTION,
    strict: true,
    schema: CHECKPOINT_RESPONSE_SCHEMA,
  },
};

/** The strict function a `tool` request forces. */
export const CHECKPOINT_FUNCTION: OpenAI.ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: SUMMARY_TOOL_NAME,
    description: SUMMARY_TOOL_DESCRIPTION,
    parameters: CHECKPOINT_RESPONSE_SCHEMA,
    strict: true,
  },
};

/** How each answer form's requests carry the schema and the prompt, for shared/summary/plan.ts. */
const SHAPES: Readonly<Record<AnswerForm, RequestShape>> = {
  json: { schemaJson: JSON.stringify(CHECKPOINT_RESPONSE_FORMAT), answer: 'json' },
  tool: { schemaJson: JSON.stringify(CHECKPOINT_FUNCTION), answer: 'tool' },
};

/**
 * Creates the `openai` summarizer. One SDK client per summarizer; `summarize` may run concurrently.
 * @throws {SummarizerConfigError} when an option is invalid (empty key or model, unknown mode,
 *   bad retries/timeout/provider name).
 */
export function createOpenAISummarizer(options: OpenAISummarizerOptions): Summarizer {
  const mode = options.structuredOutputs ?? 'auto';
  const provider = options.providerName ?? 'openai';
  validate(options, mode, provider);
  const client = openAIClient(options);
  const now = options.now ?? (() => performance.now());
  const calls = options.calls ?? directCalls;
  const maxInputTokens = options.maxInputTokens ?? DEFAULT_OPENAI_MAX_INPUT_TOKENS;
  // Models whose server refused `response_format` (mode `auto`): asked with a tool from then on.
  const toolModels = new Set<string>();
  const formOf = (model: string): AnswerForm =>
    mode === 'tool' || (mode === 'auto' && toolModels.has(model)) ? 'tool' : 'json';

  /** One Chat Completions call: the previous checkpoint merged with `input.leaving`. */
  async function summarizeOnce(input: SummarizeInput, model: string): Promise<SummaryResult> {
    const form = formOf(model);
    const { params, prompt } = chatRequest(input, model, form);
    const started = now();
    let completion: OpenAI.ChatCompletion;
    let suspects: CheckpointEntry[];
    try {
      const reply = calls.send(
        chatCall(provider, input, params, client.baseURL),
        (headers) => client.chat.completions.create(params, { signal: input.signal, headers }),
        CHAT_REPORT,
      );
      [completion, suspects] = await whileAnswering(reply, () =>
        sessionSuspects(leavingArray(input.leaving)),
      );
    } catch (error) {
      if (mode === 'auto' && form === 'json' && isResponseFormatUnsupported(error)) {
        toolModels.add(model);
        return summarizeOnce(input, model);
      }
      throw mapOpenAIError(error, { model, baseURL: client.baseURL });
    }
    const llmMs = Math.max(0, Math.round(now() - started));
    assertCompletion(completion);
    const usage = chatUsageOf(completion, model, llmMs);
    const checkpoint = checkpointFromCompletion(completion, prompt.workingSet, form);
    return {
      checkpoint: guardCheckpoint(checkpoint, {
        leaving: leavingArray(input.leaving),
        previous: input.previous,
        leavingSuspects: suspects,
      }),
      usage,
    };
  }

  return {
    name: 'openai',
    estimate(input: EstimateInput) {
      const model = input.model || options.model;
      return estimateSummary(input, model, maxInputTokens, SHAPES[formOf(model)]);
    },
    async summarize(input: SummarizeInput): Promise<SummaryResult> {
      const model = input.model || options.model;
      const budget = transcriptBudget(input, SHAPES[formOf(model)], maxInputTokens, 'openai summarizer');
      return foldLeaving(input, budget, (chunk) => summarizeOnce(chunk, model));
    },
  };
}

/** A lower-case provider name of the GenAI conventions' form (`openai`, `azure.ai.openai`). */
const PROVIDER_NAME = /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*$/;

function validate(options: OpenAISummarizerOptions, mode: string, provider: string): void {
  const fail = (what: string) => {
    throw new SummarizerConfigError(`openai summarizer: ${what}`);
  };
  if (!options.apiKey) fail('apiKey is empty (a server that checks no key still needs one: set any)');
  if (!options.model) fail('model is empty');
  if (!(STRUCTURED_OUTPUT_MODES as readonly string[]).includes(mode))
    fail(`structuredOutputs must be ${STRUCTURED_OUTPUT_MODES.join(', ')}, got ${mode}`);
  if (!PROVIDER_NAME.test(provider))
    fail(`providerName must be lower-case words joined by dots (openai, azure.ai.openai), got ${provider}`);
  const retries = options.maxRetries ?? 0;
  if (!Number.isInteger(retries) || retries < 0) fail(`maxRetries must be an integer >= 0, got ${retries}`);
  const timeout = options.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout <= 0) fail(`timeoutMs must be an integer > 0, got ${timeout}`);
}

/**
 * The Chat Completions request of one summary call, and the prompt it was built from: a system and
 * a user message (the prompt of shared/summary/plan.ts in `form`), `max_completion_tokens` the
 * summary budget plus the analysis allowance, and the answer forced as `form` says.
 */
export function chatRequest(input: SummarizeInput, model: string, form: AnswerForm) {
  const { prompt, budget } = summaryPromptOf(input, SHAPES[form]);
  const params: OpenAI.ChatCompletionCreateParamsNonStreaming = {
    model,
    max_completion_tokens: summaryMaxTokens(budget),
    messages: [
      { role: 'system', content: prompt.system },
      { role: 'user', content: prompt.user },
    ],
    ...(form === 'json'
      ? { response_format: CHECKPOINT_RESPONSE_FORMAT }
      : {
          tools: [CHECKPOINT_FUNCTION],
          tool_choice: { type: 'function', function: { name: SUMMARY_TOOL_NAME } },
          parallel_tool_calls: false,
        }),
  };
  return { params, prompt, budget };
}

/**
 * Extracts and validates the checkpoint of a Chat Completions answer (shared/summary/answer.ts).
 * Pure.
 * @throws {SummaryRejectedError} when the answer has no choice, was refused (`message.refusal`),
 *   cut off (`finish_reason` `length`) or filtered (`content_filter`), holds no JSON content (`json`)
 *   or no `record_checkpoint` call (`tool`), or its checkpoint is invalid or empty.
 */
export function checkpointFromCompletion(
  completion: OpenAI.ChatCompletion,
  workingSet: string[],
  form: AnswerForm,
): Checkpoint {
  const ref = `completion ${completion.id}, request-id ${requestIdOf(completion)}`;
  const choice = completion.choices[0];
  if (!choice) throw new SummaryRejectedError(`no choice in the answer (${ref})`);
  const { message, finish_reason: finish } = choice;
  if (message.refusal) {
    throw new SummaryRejectedError(
      `summary refused by the model (refusal: ${message.refusal.slice(0, 300)}; ${ref})`,
    );
  }
  if (finish === 'length') {
    throw new SummaryRejectedError(
      `summary cut off (finish_reason length after ${completion.usage?.completion_tokens ?? '?'} output tokens; ${ref}): ` +
        'raise maxSummaryTokens or summarize fewer messages at once',
    );
  }
  if (finish === 'content_filter')
    throw new SummaryRejectedError(`summary withheld by a content filter (${ref})`);
  return checkpointFromAnswer(answerJson(message, form, ref), workingSet, ref);
}

/** The answer's JSON: the content (`json`) or the forced call's arguments (`tool`), parsed. */
function answerJson(message: OpenAI.ChatCompletionMessage, form: AnswerForm, ref: string): unknown {
  let text: string | null | undefined;
  if (form === 'json') {
    text = message.content;
    if (!text) throw new SummaryRejectedError(`no content in the answer (${ref})`);
  } else {
    const call = message.tool_calls?.find(
      (c): c is OpenAI.ChatCompletionMessageFunctionToolCall =>
        c.type === 'function' && c.function.name === SUMMARY_TOOL_NAME,
    );
    if (!call) {
      const said = (message.content ?? '').slice(0, 200);
      throw new SummaryRejectedError(
        `no ${SUMMARY_TOOL_NAME} call in the answer (${ref})${said ? `; it said: ${said}` : ''}`,
      );
    }
    text = call.function.arguments;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SummaryRejectedError(`the answer is not JSON (${ref}): ${(error as Error).message}`);
  }
}

/** A 2xx body that is not a completion (e.g. a proxy's HTML page): transient, like a garbled body. */
function assertCompletion(completion: unknown): asserts completion is OpenAI.ChatCompletion {
  const c = completion as Partial<OpenAI.ChatCompletion> | null;
  if (typeof c !== 'object' || c === null || !Array.isArray(c.choices)) {
    const preview = typeof completion === 'string' ? `: ${completion.slice(0, 120)}` : '';
    throw new TransientError(
      `OpenAI-compatible API answered 2xx with something that is not a completion${preview}`,
      {
        status: null,
        requestId: null,
      },
    );
  }
}

/**
 * The usage and cost (USD) of an answer, in the ledger's terms (./openai-calls.ts): the model the
 * answer names (a dated snapshot of the one asked, say) priced by shared/summary/pricing.ts.
 */
export function chatUsageOf(
  completion: OpenAI.ChatCompletion,
  requestedModel: string,
  llmMs: number,
): SummaryUsage {
  const model = typeof completion.model === 'string' && completion.model ? completion.model : requestedModel;
  const tokens = chatTokensOf(completion);
  return { model, ...tokens, costUsd: costUsd(model, tokens).usd, llmMs };
}

/** The connection pool of this process's `openai` SDK clients (see `anthropicClient` for why). */
const sdkDispatcher = new Agent();

/**
 * The SDK client of a summarizer's options: no SDK retries unless asked (BullMQ retries), the
 * default timeout and endpoint, and a keep-alive connection pool.
 */
export function openAIClient(options: OpenAISummarizerOptions): OpenAI {
  return new OpenAI({
    fetchOptions: { dispatcher: sdkDispatcher } as OpenAI['fetchOptions'],
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? DEFAULT_OPENAI_BASE_URL,
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS,
  });
}

function requestIdOf(completion: OpenAI.ChatCompletion): string {
  // The SDK attaches the `x-request-id` header as `_request_id`.
  const id = (completion as { _request_id?: unknown })._request_id;
  return typeof id === 'string' && id ? id : 'none';
}
