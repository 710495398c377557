/**
 * What the pipeline is given (its ports, {@link PipelineDeps}), what it is asked
 * ({@link CompactionRequest}) and what it answers ({@link CompactionOutcome}).
 */
import type { Logger } from 'pino';
import type { CompactPlan, Plan } from '../../shared/planning/types.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import type { SummarizeInput } from '../../shared/summary/summarizer.ts';
import type {
  Budgets,
  Clock,
  FencedWrites,
  Leases,
  PipelineObserver,
  SessionReads,
  Summarizers,
  WriteResult,
} from './ports.ts';

/** A summary queued for the next message batch instead of an online call (see worker/queue/batches/batches.ts). */
export interface QueuedSummary {
  tenantId: string;
  sessionId: string;
  idempotencyKey: string;
  eventId: string | null;
  expectedVersion: number;
  /** The strategy as the policy gave it (re-parsed when the batch ends). */
  strategy: Strategy;
  plan: CompactPlan;
}

/** Message Batches for sweep-found summaries whose policy says `batch`. */
export interface Batching {
  /** Whether the summary of `input` fits in one batch request. */
  fits(input: SummarizeInput): boolean;
  /** Queues the summary; false when it was queued already. */
  queue(item: QueuedSummary): Promise<boolean>;
}

/** Side effects the pipeline needs: its ports (./ports.ts). */
export interface PipelineDeps {
  reads: SessionReads;
  writes: FencedWrites;
  leases: Leases;
  /** The summarizers this process can run: the primary one, those a strategy may name, the offline one. */
  summarizers: Summarizers;
  /** Durations and the wall clock (`systemClock` in ./clock.ts; a test sets its own). */
  clock: Clock;
  /**
   * The spend budgets of the policies (shared/policy/budget.ts), checked and reserved before each
   * paid summary. Absent: no budget is enforced (a summarizer without `estimate` is never checked).
   */
  budgets?: Budgets | undefined;
  /** Told each stage's duration, fence rejection, fidelity score and budget refusal. Absent: no one. */
  observer?: PipelineObserver | undefined;
  /** Message Batches for sweep-found summaries whose policy says `batch` (absent: always online). */
  batching?: Batching | undefined;
  logger: Logger;
}

/** One request to compact a session. */
export interface CompactionRequest {
  tenantId: string;
  sessionId: string;
  /** The event's strategy override; absent: the agent's or tenant's policy, else the built-in default. */
  strategy?: Strategy | undefined;
  /**
   * Summary instructions for this request, over those of the strategy in force (`compact
   * --instructions`), validated by the caller. Refused when that strategy writes no summary.
   */
  instructions?: string | undefined;
  trigger: 'event' | 'sweep' | 'manual';
  /** A sweep's job: the compaction version the sweep saw (a compaction since then makes it moot). */
  expectedVersion?: number | undefined;
  /** One effect per key: a second request with the same key changes nothing. */
  idempotencyKey: string;
  eventId: string | null;
  /** Aborts the LLM call (worker shutdown). */
  signal?: AbortSignal | undefined;
  /** Recorded as the ledger row's reason when the compaction applies (e.g. why a fallback ran). */
  note?: string | undefined;
  /** The context size the agent reported with the event, tokens; token triggers then use it. */
  inputTokens?: number | undefined;
  /** Of `inputTokens`, how many the agent's request read from the prompt cache, when it said. */
  cacheReadTokens?: number | undefined;
}

/**
 * What happened: the ledger row the request left (`applied`, `skipped`; `duplicate` for the row
 * an earlier run left), or a summary queued for the next message batch (`batched`; its ledger row
 * is written when the batch ends).
 */
export type CompactionOutcome =
  | (WriteResult & { plan: Plan | null })
  | { status: 'batched'; row: null; plan: CompactPlan; queued: boolean };
