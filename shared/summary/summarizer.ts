/**
 * The one interface both summarizers implement (`anthropic`, `extractive`). A summarizer turns the
 * previous checkpoint plus the messages now leaving into a new checkpoint. It never sees messages
 * already summarized, nor any message above the cutoff.
 */

import type { Block } from '../contract/blocks.ts';
import type { Message } from '../contract/message.ts';
import { summaryBudgetTokens } from './budget.ts';
import type { Checkpoint } from './checkpoint.ts';

/** Leaving messages, ascending seq: one array, or pages of it in order. */
export type Leaving = Message[] | AsyncIterable<Message[]>;

/** The non-empty pages of `leaving`, in order: an array is one page. */
export async function* pagesOf(leaving: Leaving): AsyncGenerator<Message[]> {
  if (Array.isArray(leaving)) {
    if (leaving.length > 0) yield leaving;
    return;
  }
  for await (const page of leaving) if (page.length > 0) yield page;
}

/** All of `leaving` in one array, for a summarizer that needs it whole. */
export async function collectLeaving(leaving: Leaving): Promise<Message[]> {
  if (Array.isArray(leaving)) return leaving;
  const all: Message[] = [];
  for await (const page of leaving) all.push(...page);
  return all;
}

/**
 * `leaving` when it is one array.
 * @throws {Error} for pages: a caller bug (a single request, such as a batch's, needs the array).
 */
export function leavingArray(leaving: Leaving): Message[] {
  if (!Array.isArray(leaving))
    throw new Error('this summary needs its leaving messages as one array, not pages');
  return leaving;
}

export interface SummarizeInput {
  tenantId: string;
  sessionId: string;
  /** The session's current checkpoint, or null before its first summary. */
  previous: Checkpoint | null;
  /**
   * Messages leaving the live history, ascending seq, summaries excluded: all at once, or in pages
   * (each continuing the one before) so that a long history never sits in memory whole.
   */
  leaving: Leaving;
  /**
   * The strategy's `maxSummaryTokens`, tokens: the floor of the summary budget. The `anthropic`
   * summarizer grows it with the leaving tokens (shared/summary/budget.ts); the `extractive` one
   * takes it as it is, except as a fallback ({@link withSummaryBudget}).
   */
  maxSummaryTokens: number;
  /**
   * Estimated tokens of all the leaving messages (the plan's `leavingTokens`), which the summary
   * budget grows with. Absent: the summarizer counts the messages it is given.
   */
  leavingTokens?: number | undefined;
  /** Model override from the strategy. */
  model?: string | undefined;
  /**
   * The operator's summary instructions from the strategy. The `anthropic` summarizer sends them in
   * the user turn; the `extractive` summarizer cannot follow free text and ignores them.
   */
  instructions?: string | undefined;
  /** Aborts an in-flight LLM call (worker shutdown, lost lease). */
  signal?: AbortSignal | undefined;
  /**
   * For a summarizer that reads the conversation as the agent sent it ({@link Summarizer.reads}
   * `request`): the leaving messages rendered as a Messages API request (native blocks, the
   * previous summary or compaction block first), with the session's `system` and tools.
   */
  request?: ConversationRequest | undefined;
}

/** A conversation as a Messages API request carries it (shared/context/render.ts renders it). */
export interface ConversationRequest {
  /** `system` text blocks, or undefined. */
  system: Block[] | undefined;
  /** `messages`, as the SDK takes them (each `{ role, content }`). */
  messages: Array<{ role: string; content: string | Block[] }>;
  /** Tool definitions: the session's declared ones, or (when none are) stand-ins named after the tools the history calls. */
  tools: Array<Record<string, unknown>>;
  /** Whether `tools` are the session's declared tools. */
  toolsDeclared: boolean;
  /**
   * For an `openai-responses` session (the `openai-compaction` summarizer): the leaving items as
   * Responses input items, rendered as `loadContext` renders them; `system`, `messages` and `tools`
   * are then empty. Absent for an Anthropic conversation.
   */
  input?: Array<Record<string, unknown>> | undefined;
}

/** LLM usage of one summary; all zero for `extractive`. Tokens are the API's counts; cost in USD. */
export interface SummaryUsage {
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  /** Wall time of the LLM call(s), ms. */
  llmMs: number;
}

export interface SummaryResult {
  checkpoint: Checkpoint;
  usage: SummaryUsage;
  /**
   * Anthropic's signed `compaction` block (the `anthropic-compaction` summarizer), or OpenAI's
   * `compaction` input item (the `openai-compaction` summarizer), exactly as returned: the summary
   * message sends it instead of the checkpoint's text. Absent otherwise.
   */
  block?: Block | undefined;
}

/** What a summary's cost may be, by the summarizer's own count of the request it would send. */
export interface SummaryEstimate {
  /** The model the request names. */
  model: string;
  /** Estimated input tokens of all the summary's requests (prompt, previous checkpoint, transcript). */
  inputTokens: number;
  /** Most output tokens of all its requests (`max_tokens` of each). */
  maxOutputTokens: number;
}

/** A summary as {@link Summarizer.estimate} sizes it: the input without its messages, and their tokens. */
export type EstimateInput = Omit<SummarizeInput, 'leaving' | 'signal'> & {
  /** Estimated tokens of the leaving messages (the plan's `leavingTokens`). */
  leavingTokens: number;
};

export interface Summarizer {
  /** `anthropic`, `anthropic-compaction`, `openai-compaction` or `extractive`; recorded in the ledger. */
  readonly name: string;
  /**
   * What it reads besides the leaving messages' text: `request` for a summarizer that sends the
   * conversation itself (the caller then sets {@link SummarizeInput.request}). Absent: text only.
   */
  readonly reads?: 'request';
  /**
   * The model and token ceiling of the requests a summary of `input` would send, for the spend
   * budgets (shared/policy/budget.ts). Absent on a summarizer that calls no paid API: its summaries
   * are free and never checked against a budget.
   */
  estimate?(input: EstimateInput): SummaryEstimate;
  /**
   * @throws {SummaryRejectedError} when the output is empty, a refusal, truncated or invalid:
   *   nothing may be committed from it.
   * @throws transient errors (network, 429, 5xx) plainly, for BullMQ to retry with backoff.
   */
  summarize(input: SummarizeInput): Promise<SummaryResult>;
}

/**
 * `summarizer` given the grown summary budget (shared/summary/budget.ts) instead of the strategy's
 * `maxSummaryTokens`: for the extractive summarizer when it stands in for the `anthropic` one (a
 * fallback), so that its checkpoint may be as large as the one it replaces. Its `name` and the rest
 * are `summarizer`'s.
 */
export function withSummaryBudget(summarizer: Summarizer): Summarizer {
  return {
    name: summarizer.name,
    ...(summarizer.reads ? { reads: summarizer.reads } : {}),
    ...(summarizer.estimate ? { estimate: summarizer.estimate.bind(summarizer) } : {}),
    summarize: (input) =>
      summarizer.summarize({
        ...input,
        maxSummaryTokens: summaryBudgetTokens(input.maxSummaryTokens, input.leavingTokens ?? 0),
      }),
  };
}

/** Usage of a summarizer that calls no LLM. */
export function noUsage(llmMs = 0): SummaryUsage {
  return {
    model: null,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: 0,
    llmMs,
  };
}

/** The usage of two LLM calls of one summary, summed (the model: the later call's). */
export function addUsage(a: SummaryUsage, b: SummaryUsage): SummaryUsage {
  return {
    model: b.model ?? a.model,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    costUsd: a.costUsd + b.costUsd,
    llmMs: a.llmMs + b.llmMs,
  };
}
