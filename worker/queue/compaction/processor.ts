/**
 * The BullMQ processor: thin. Parse the job into a compaction request, run the pipeline, and on an
 * error do what the table in `job-actions.ts` says (delay, pause the worker, fail for good, retry).
 * Two policies sit on top of that table: a strategy that opted into the extractive fallback gets it
 * on the job's last attempt, and a job that fails for good (or on its last attempt) leaves a
 * `failed` row in the ledger.
 */
import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import { printable, toError } from '../../../shared/contract/errors.ts';
import {
  type CompactionJobResult,
  describeZodError,
  idempotencyKeyOf,
  RUN_COMPLETED,
  runCompletedEventSchema,
  SWEEP_COMPACTION,
  sweepCompactionJobSchema,
  sweepIdempotencyKeyOf,
} from '../../../shared/protocol/events.ts';
import type { Strategy } from '../../../shared/strategies/index.ts';
import type { Checkpoint } from '../../../shared/summary/checkpoint.ts';
import type { WorkerMetrics } from '../../observability/metrics.ts';
import { type JobSpanEnd, traceCompactionJob } from '../../observability/tracing.ts';
import { afterLastAttempt } from '../../pipeline/last-attempt.ts';
import {
  type CompactionOutcome,
  type CompactionRequest,
  type PipelineDeps,
  runCompaction,
} from '../../pipeline/pipeline.ts';
import type { TenantSlot, TenantSlots } from '../../redis/tenant-slots.ts';
import { jobActionFor } from './job-actions.ts';

/** What a finished job returns (stored by BullMQ as the job's return value, shown in Bull Board). */
export interface JobResult extends CompactionJobResult {
  status: CompactionOutcome['status'];
}

export interface ProcessorDeps extends PipelineDeps {
  /** The strategy when the event names none; absent: the agent's or tenant's policy, else the built-in default. */
  defaultStrategy?: Strategy;
  /** The running worker, for the rate limiter; absent in tests that call the processor directly. */
  worker?: () => Worker | undefined;
  /** Delay before retrying a job whose session lease is busy, ms. Default 1,000 (+ jitter). */
  leaseBusyDelayMs?: number;
  /**
   * The tenants' shares of the workers (worker/redis/tenant-slots.ts): a job whose tenant is at its
   * cap while others have work goes back to delayed, no attempt used. Absent: no cap.
   */
  tenantSlots?: TenantSlots;
  /** Delay before a job refused a tenant slot is tried again, ms. Default 500 (+ jitter). */
  tenantSlotDelayMs?: number;
  /** Aborts running LLM calls (forced shutdown). */
  signal?: AbortSignal;
  /**
   * Called with the ledger row of every applied compaction (also when a retried job finds it
   * applied already), before the job completes: a failure fails the job, which retries and calls
   * it again. `checkpoint` is the one this run's apply wrote; absent when the row was found
   * applied already. Absent hook: nothing is told.
   */
  onApplied?: (row: CompactionRow, checkpoint?: Checkpoint | null) => Promise<void>;
  /** Counts outcomes and lease conflicts (worker/observability/metrics.ts); absent: nothing is counted. */
  metrics?: Pick<WorkerMetrics, 'jobSettled' | 'leaseConflict'>;
}

/**
 * Builds the processor function for `new Worker(queue, processor)`. Each attempt of a job runs in
 * its OpenTelemetry span (worker/observability/tracing.ts), which ends with the ledger row it left.
 */
export function createProcessor(deps: ProcessorDeps) {
  return async function process(job: Job, token?: string): Promise<JobResult> {
    const request = requestOf(job, deps);
    const start = {
      tenantId: request.tenantId,
      sessionId: request.sessionId,
      jobId: job.id,
      trigger: request.trigger,
      eventId: request.eventId,
      attempt: job.attemptsMade + 1,
    };
    const { result } = await traceCompactionJob(
      start,
      () => processRequest(deps, job, token, request),
      jobSpanEnd,
      rescheduled,
    );
    return result;
  };
}

/** A settled attempt: what the job returns, and the ledger row it reports (none for a batched summary). */
interface Settled {
  result: JobResult;
  row: CompactionRow | null;
}

/** What a job's span ends with: its result and the ledger row's strategy, summarizer, counts and cost. */
function jobSpanEnd({ result, row }: Settled): JobSpanEnd {
  return {
    status: result.status,
    compactionId: result.compactionId,
    strategy: row?.strategy,
    summarizer: row?.summarizer,
    messagesBefore: row?.messagesBefore,
    messagesAfter: row?.messagesAfter,
    tokensBefore: row?.tokensBefore,
    tokensAfter: row?.tokensAfter,
    // As the ledger stores it (numeric(12, 6)); the row a write returns may carry more digits.
    costUsd: typeof row?.costUsd === 'number' ? Math.round(row.costUsd * 1e6) / 1e6 : null,
  };
}

/** Whether an attempt's error only puts the job back in the queue (BullMQ's delay and rate limit). */
function rescheduled(error: unknown): boolean {
  return error instanceof DelayedError || (error instanceof Error && error.message === RATE_LIMIT_MESSAGE);
}

/** The message of `Worker.RateLimitError()`, which pauses the worker for an LLM 429. */
const RATE_LIMIT_MESSAGE = Worker.RateLimitError().message;

/** One attempt of a job: the pipeline for `request`, and what its errors call for. */
async function processRequest(
  deps: ProcessorDeps,
  job: Job,
  token: string | undefined,
  request: CompactionRequest & { eventId: string },
): Promise<Settled> {
  const started = deps.clock.now();
  const log = deps.logger.child({
    jobId: job.id,
    tenantId: request.tenantId,
    sessionId: request.sessionId,
  });
  const settled = (outcome: CompactionOutcome) => settle(deps, request, log, started, outcome);
  const told = async (outcome: CompactionOutcome): Promise<CompactionOutcome> => {
    if (outcome.status !== 'batched' && outcome.row.status === 'applied' && deps.onApplied)
      await deps.onApplied(outcome.row, outcome.checkpoint);
    return outcome;
  };
  const slot = await takeTenantSlot(job, token, request.tenantId, deps, log);
  try {
    return settled(await told(await runCompaction(deps, request)));
  } catch (thrown) {
    // The slot goes back first, so that handing the error to BullMQ is the attempt's last step:
    // a Redis round trip between `worker.rateLimit()` and the throw let the worker take the job
    // again before its pause began (an LLM 429's retry-after was not honoured).
    await slot?.release();
    const error = toError(thrown);
    const action = jobActionFor(error, {
      leaseBusyDelayMs: deps.leaseBusyDelayMs ?? 1_000,
      random: Math.random,
    });
    const worker = deps.worker?.();
    if (action.type === 'delay') {
      deps.metrics?.leaseConflict();
      await job.moveToDelayed(Date.now() + action.ms, token);
      throw new DelayedError();
    }
    if (action.type === 'pauseWorker' && worker) {
      log.warn({ retryAfterMs: action.ms }, 'LLM rate limit: pausing the worker');
      await worker.rateLimit(action.ms);
      throw Worker.RateLimitError();
    }
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const permanent = action.type === 'fail';
    if (permanent || lastAttempt) {
      const outcome = await afterLastAttempt(deps, request, error, log);
      if (outcome) return settled(await told(outcome));
    }
    if (permanent) throw new UnrecoverableError(error.message);
    throw error;
  } finally {
    await slot?.release();
  }
}

/**
 * What a settled attempt returns, counted by the metrics and logged: the ledger row's status and
 * counts, or a summary queued for the next message batch.
 */
function settle(
  deps: ProcessorDeps,
  request: CompactionRequest,
  log: ProcessorDeps['logger'],
  started: number,
  outcome: CompactionOutcome,
): Settled {
  const { row } = outcome;
  const seconds = (deps.clock.now() - started) / 1000;
  if (row === null) {
    deps.metrics?.jobSettled('batched', request.trigger, seconds, null);
    log.info({ status: outcome.status, queued: outcome.queued }, 'summary queued for the next message batch');
    const result: JobResult = {
      status: outcome.status,
      ledgerStatus: 'batched',
      compactionId: null,
      messagesBefore: null,
      messagesAfter: null,
      reason: outcome.queued ? 'queued for the next message batch' : 'already queued for a message batch',
    };
    return { result, row: null };
  }
  const counted =
    outcome.status === 'duplicate' ? 'duplicate' : row.status === 'skipped' ? 'skipped' : 'applied';
  deps.metrics?.jobSettled(counted, request.trigger, seconds, row);
  log.info(
    { compactionId: row.id, status: outcome.status, ledgerStatus: row.status, reason: row.reason },
    'event settled',
  );
  const result: JobResult = {
    status: outcome.status,
    ledgerStatus: row.status,
    compactionId: row.id,
    messagesBefore: row.messagesBefore,
    messagesAfter: row.messagesAfter,
    reason: row.reason,
  };
  return { result, row };
}

/**
 * Takes a worker slot of the job's tenant, when the processor caps tenants' shares.
 * @returns the slot (null without a cap).
 * @throws {DelayedError} after moving the job back to delayed (no attempt used), when the tenant
 *   runs its share of jobs already and another tenant has work pending.
 */
async function takeTenantSlot(
  job: Job,
  token: string | undefined,
  tenantId: string,
  deps: ProcessorDeps,
  log: ProcessorDeps['logger'],
): Promise<TenantSlot | null> {
  if (!deps.tenantSlots) return null;
  const slot = await deps.tenantSlots.acquire(tenantId);
  if (slot) return slot;
  const delayMs = Math.round((deps.tenantSlotDelayMs ?? 500) * (1 + Math.random()));
  log.debug({ delayMs }, 'tenant at its share of the workers: job delayed');
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/**
 * The compaction request a job asks for: `session.run.completed` from producers, or a sweep's job.
 * @throws {UnrecoverableError} naming the bad field, or the unknown job name.
 */
function requestOf(job: Job, deps: ProcessorDeps): CompactionRequest & { eventId: string } {
  if (job.name === SWEEP_COMPACTION) {
    const parsed = sweepCompactionJobSchema.safeParse(job.data);
    if (!parsed.success)
      throw new UnrecoverableError(`invalid sweep job: ${describeZodError(parsed.error, 'job')}`);
    const sweep = parsed.data;
    return {
      tenantId: sweep.tenantId,
      sessionId: sweep.sessionId,
      trigger: 'sweep',
      expectedVersion: sweep.expectedVersion,
      idempotencyKey: sweepIdempotencyKeyOf(sweep),
      eventId: sweep.eventId,
      signal: deps.signal,
    };
  }
  if (job.name !== RUN_COMPLETED) {
    throw new UnrecoverableError(
      `unknown job name "${printable(job.name, 100)}": expected "${RUN_COMPLETED}"`,
    );
  }
  const parsed = runCompletedEventSchema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`invalid event: ${describeZodError(parsed.error)}`);
  const event = parsed.data;
  return {
    tenantId: event.tenantId,
    sessionId: event.sessionId,
    strategy: event.strategy ?? deps.defaultStrategy,
    trigger: event.trigger,
    inputTokens: event.inputTokens,
    cacheReadTokens: event.cacheReadTokens,
    idempotencyKey: idempotencyKeyOf(event),
    eventId: event.eventId,
    signal: deps.signal,
  };
}
