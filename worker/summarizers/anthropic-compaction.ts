/**
 * The `anthropic-compaction` summarizer: Anthropic's on-demand compaction (beta
 * `compact-2026-09-04`, documented 2026-09 in "Compaction on demand"). The leaving messages go to
 * the Messages API as the agent sent them (the previous summary or compaction block first, native
 * blocks, the session's `system` and tools) with `compaction: { type: 'summarize' }` and the beta
 * header; the API answers one signed `compaction` block, which the summary message stores exactly
 * as returned and `loadContext` sends first. Compactor's own checkpoint is made beside it by the
 * extractive summarizer: the readable, portable copy (dashboard, `restore`, a later client-side
 * summary, a client that cannot send the beta).
 *
 * The documented failures:
 * - HTTP 200 without the block (`stop_reason` other than `compaction`, or empty `content`): a
 *   {@link SummaryRejectedError} saying what the stop reason asks for (`max_tokens`: a larger
 *   `maxSummaryTokens`; `model_context_window_exceeded`: fewer messages or shorter instructions;
 *   `tool_use`: instructions that forbid tools; `refusal`/`end_turn`: go on without a summary);
 * - 400 `compaction_nothing_to_summarize`: a {@link NothingToSummarizeError}, which the pipeline
 *   records as a skip;
 * - 529 `overloaded_error` with `compaction_unavailable`, like any 529: transient, retried with
 *   backoff; on the job's last attempt the strategy's `fallback` (`anthropic` or `extractive`) runs;
 * - every other error as the `anthropic` summarizer maps it (anthropic-errors.ts).
 * A transcript over the input budget is compacted in chunks cut between a reply and the next user
 * message ("compact again": each request carries the block of the chunks before it).
 */
import { performance } from 'node:perf_hooks';
import Anthropic from '@anthropic-ai/sdk';
import { countPdfPages } from '../../producer/media/pdf-pages.ts';
import type { Block } from '../../shared/contract/blocks.ts';
import { estimateContentTokens } from '../../shared/contract/blocks.ts';
import {
  NothingToSummarizeError,
  SummarizerConfigError,
  SummaryRejectedError,
} from '../../shared/contract/errors.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { COMPACTION_BETA, isCompactionBlock } from '../../shared/summary/compaction-block.ts';
import {
  addUsage,
  type ConversationRequest,
  type EstimateInput,
  type SummarizeInput,
  type Summarizer,
  type SummaryEstimate,
  type SummaryResult,
  type SummaryUsage,
} from '../../shared/summary/summarizer.ts';
import {
  type AnthropicSummarizerOptions,
  DEFAULT_MAX_INPUT_TOKENS,
  messagesClientOf,
  usageOf,
} from './anthropic.ts';
import { MESSAGES_REPORT, messagesCall } from './anthropic-calls.ts';
import { mapAnthropicError } from './anthropic-errors.ts';
import { directCalls } from './llm-calls.ts';

/**
 * Least `max_tokens` of a compaction request: it covers the model's thinking as well as the summary,
 * and the docs say to "allow several thousand tokens".
 */
export const MIN_COMPACTION_MAX_TOKENS = 4_096;

type Turn = ConversationRequest['messages'][number];

/**
 * Creates the `anthropic-compaction` summarizer.
 * @throws {SummarizerConfigError} when an option is invalid (empty key or model).
 */
export function createAnthropicCompactionSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  if (!options.apiKey && !options.client)
    throw new SummarizerConfigError('anthropic-compaction summarizer: apiKey is empty');
  if (!options.model) throw new SummarizerConfigError('anthropic-compaction summarizer: model is empty');
  const client = messagesClientOf(options);
  const now = options.now ?? (() => performance.now());
  const calls = options.calls ?? directCalls;
  const maxInputTokens = options.maxInputTokens ?? DEFAULT_MAX_INPUT_TOKENS;
  const readable = createExtractiveSummarizer();

  /** One compaction request over `messages` (the block of the chunks before first, if any). */
  async function compactOnce(
    request: ConversationRequest,
    messages: Turn[],
    input: SummarizeInput,
    model: string,
  ): Promise<{ block: Block; usage: SummaryUsage }> {
    const params = {
      model,
      max_tokens: Math.max(input.maxSummaryTokens, MIN_COMPACTION_MAX_TOKENS),
      ...(request.system ? { system: request.system } : {}),
      ...(request.tools.length > 0 ? { tools: request.tools } : {}),
      messages,
      compaction: { type: 'summarize', ...(input.instructions ? { instructions: input.instructions } : {}) },
    };
    const started = now();
    let message: Anthropic.Message;
    try {
      message = await calls.send(
        messagesCall('anthropic-compaction', input, params, client.baseURL, options.provider),
        (headers) =>
          client.messages.create(params as unknown as Anthropic.MessageCreateParamsNonStreaming, {
            signal: input.signal,
            headers: { ...headers, 'anthropic-beta': COMPACTION_BETA },
          }),
        MESSAGES_REPORT,
      );
    } catch (error) {
      const code = (error as { errorCode?: unknown }).errorCode;
      if (error instanceof Anthropic.APIError && code === 'compaction_nothing_to_summarize') {
        throw new NothingToSummarizeError(
          `nothing to summarize: the leaving messages hold no user or assistant content (${error.requestID ?? 'no request-id'})`,
        );
      }
      throw mapAnthropicError(error, { model, baseURL: client.baseURL, provider: options.provider });
    }
    const llmMs = Math.max(0, Math.round(now() - started));
    const block = blockOf(message);
    return { block, usage: usageOf(message, model, llmMs) };
  }

  return {
    name: 'anthropic-compaction',
    reads: 'request',
    estimate(input: EstimateInput): SummaryEstimate {
      const model = input.model || options.model;
      const calls = Math.max(1, Math.ceil(input.leavingTokens / maxInputTokens));
      return {
        model,
        inputTokens: input.leavingTokens + calls * 1_000,
        maxOutputTokens: calls * Math.max(input.maxSummaryTokens, MIN_COMPACTION_MAX_TOKENS),
      };
    },
    async summarize(input: SummarizeInput): Promise<SummaryResult> {
      const { request } = input;
      if (!request) {
        throw new Error('anthropic-compaction: the caller must pass the conversation (input.request)');
      }
      const model = input.model || options.model;
      // The readable checkpoint first: free, and it reads the leaving pages, which may be read once.
      const { checkpoint } = await readable.summarize(input);
      let block: Block | null = null;
      let total: SummaryUsage | null = null;
      for (const chunk of chunksOf(request.messages, maxInputTokens)) {
        // After the first chunk, the block of the chunks before stands first. The thinking of a
        // later chunk was signed over messages the block replaced: it is left out ("remove
        // thinking from the start of the history" is always allowed).
        const messages: Turn[] =
          block === null ? chunk : [{ role: 'assistant', content: [block] }, ...chunk.map(withoutThinking)];
        const result = await compactOnce(request, messages, input, model);
        block = result.block;
        total = total ? addUsage(total, result.usage) : result.usage;
      }
      if (block === null || total === null)
        throw new NothingToSummarizeError('nothing to summarize: no leaving messages');
      return { checkpoint, usage: total, block };
    },
  };
}

/**
 * The block of a compaction answer.
 * @throws {SummaryRejectedError} when there is none, saying what its stop reason asks for.
 */
function blockOf(message: Anthropic.Message): Block {
  const content = (message.content ?? []) as unknown as Block[];
  const block = content.find(isCompactionBlock);
  const stop = String(message.stop_reason);
  if (stop === 'compaction' && block) return block;
  const ref = `message ${message.id}`;
  const advice: Record<string, string> = {
    max_tokens: 'raise maxSummaryTokens (max_tokens covers the model thinking too)',
    model_context_window_exceeded:
      'summarize fewer messages at once (compact earlier) or shorten the instructions',
    tool_use: 'give instructions that forbid tool calls',
    refusal: 'the model declined; the session goes on without this summary',
    end_turn: 'the model answered without a summary; the session goes on without it',
  };
  const why = stop === 'compaction' ? 'an answer with no compaction block' : `stop_reason ${stop}`;
  throw new SummaryRejectedError(
    `no compaction block (${why}; ${ref})${advice[stop] ? `: ${advice[stop]}` : ''}`,
  );
}

/** The messages cut into requests of at most `budget` estimated tokens, each cut between a reply and the next user turn. */
export function chunksOf(messages: Turn[], budget: number): Turn[][] {
  const chunks: Turn[][] = [];
  let open: Turn[] = [];
  let tokens = 0;
  messages.forEach((turn, i) => {
    const size = estimateContentTokens(turn.content, countPdfPages);
    const previous = messages[i - 1];
    if (open.length > 0 && tokens + size > budget && safeCut(previous, turn)) {
      chunks.push(open);
      open = [];
      tokens = 0;
    }
    open.push(turn);
    tokens += size;
  });
  if (open.length > 0) chunks.push(open);
  return chunks;
}

/** A cut between `before` and `after` leaves no tool call open: a reply without calls, then a user turn. */
function safeCut(before: Turn | undefined, after: Turn): boolean {
  if (before?.role !== 'assistant' || after.role !== 'user') return false;
  return typeof before.content === 'string' || !before.content.some((b) => b.type === 'tool_use');
}

function withoutThinking(turn: Turn): Turn {
  if (typeof turn.content === 'string') return turn;
  const content = turn.content.filter((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking');
  return content.length === turn.content.length ? turn : { role: turn.role, content };
}
