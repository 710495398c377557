/**
 * The one interface both summarizers implement (`anthropic`, `extractive`). A summarizer turns the
 * previous checkpoint plus the messages now leaving into a new checkpoint. It never sees messages
 * already summarized, nor any message above the cutoff.
 */
import type { Checkpoint } from './checkpoint.ts';
import type { Message } from './message.ts';

export interface SummarizeInput {
  tenantId: string;
  sessionId: string;
  /** The session's current checkpoint, or null before its first summary. */
  previous: Checkpoint | null;
  /** Messages leaving the live history, ascending seq, summaries excluded. */
  leaving: Message[];
  /** Upper bound of the new checkpoint, in tokens. */
  maxSummaryTokens: number;
  /** Model override from the strategy. */
  model?: string | undefined;
  /** Aborts an in-flight LLM call (worker shutdown, lost lease). */
  signal?: AbortSignal | undefined;
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
}

export interface Summarizer {
  /** `anthropic` or `extractive`; recorded in the ledger. */
  readonly name: string;
  /**
   * @throws {SummaryRejectedError} when the output is empty, a refusal, truncated or invalid:
   *   nothing may be committed from it.
   * @throws transient errors (network, 429, 5xx) plainly, for BullMQ to retry with backoff.
   */
  summarize(input: SummarizeInput): Promise<SummaryResult>;
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
