/**
 * The BullMQ processor: thin, so the pipeline it calls can be run and tested without BullMQ. Parse
 * the event, run the pipeline, map errors to BullMQ's retry semantics in one place:
 * - a bad event, an unknown session, a foreign tenant, an LLM request that can never succeed:
 *   `UnrecoverableError` (no retry; the job stays in the failed set with a message naming the cause);
 * - another worker holds the session's lease: the job goes back to delayed (no attempt used);
 * - the LLM says 429: the whole worker pauses for `retry-after` (BullMQ's rate limiter);
 * - anything else: thrown as is, retried with exponential backoff.
 */
import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import {
  isPermanent,
  LeaseBusyError,
  printable,
  SessionNotFoundError,
} from '../../shared/contract/errors.ts';
import {
  describeZodError,
  idempotencyKeyOf,
  RUN_COMPLETED,
  runCompletedEventSchema,
  SWEEP_COMPACTION,
  sweepCompactionJobSchema,
  sweepIdempotencyKeyOf,
} from '../../shared/contract/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import type { WorkerMetrics } from '../observability/metrics.ts';
import {
  type CompactionOutcome,
  type CompactionRequest,
  effectivePolicy,
  type PipelineDeps,
  runCompaction,
} from '../pipeline/pipeline.ts';

/** What a finished job returns (stored by BullMQ as the job's return value, shown in Bull Board). */
export interface JobResult {
  status: CompactionOutcome['status'];
  /** The ledger row's status, or `batched` while a batch summary is pending. */
  ledgerStatus: string;
  /** Null while a batch summary is pending. */
  compactionId: string | null;
  messagesBefore: number | null;
  messagesAfter: number | null;
  reason: string | null;
}

export interface ProcessorDeps extends PipelineDeps {
  /** The strategy when the event names none; absent: the agent's or tenant's policy, else the built-in default. */
  defaultStrategy?: Strategy;
  /** The running worker, for the rate limiter; absent in tests that call the processor directly. */
  worker?: () => Worker | undefined;
  /** Delay before retrying a job whose session lease is busy, ms. Default 1,000 (+ jitter). */
  leaseBusyDelayMs?: number;
  /** Aborts running LLM calls (forced shutdown). */
  signal?: AbortSignal;
  /** Used on a job's last attempt when its strategy says `fallback: 'extractive'`. */
  fallbackSummarizer?: Summarizer;
  /** Counts outcomes and lease conflicts (worker/observability/metrics.ts); absent: nothing is counted. */
  metrics?: Pick<WorkerMetrics, 'jobSettled' | 'leaseConflict'>;
}

/** Whether a strategy opted into the extractive fallback. */
function wantsFallback(strategy: Strategy): boolean {
  return strategy.type === 'summarize' && strategy.fallback === 'extractive';
}

/** Errors that carry how long the LLM asked us to wait (shape of worker/summarizers/anthropic-errors.ts). */
interface RetryAfter {
  retryAfterMs: number;
}

/** Builds the processor function for `new Worker(queue, processor)`. */
export function createProcessor(deps: ProcessorDeps) {
  return async function process(job: Job, token?: string): Promise<JobResult> {
    const started = deps.now();
    const request = requestOf(job, deps);
    const log = deps.logger.child({
      jobId: job.id,
      tenantId: request.tenantId,
      sessionId: request.sessionId,
    });
    const settled = (outcome: CompactionOutcome): JobResult => {
      const { row } = outcome;
      const seconds = (deps.now() - started) / 1000;
      if (row === null) {
        deps.metrics?.jobSettled('batched', request.trigger, seconds, null);
        log.info(
          { status: outcome.status, queued: outcome.queued },
          'summary queued for the next message batch',
        );
        return {
          status: outcome.status,
          ledgerStatus: 'batched',
          compactionId: null,
          messagesBefore: null,
          messagesAfter: null,
          reason: outcome.queued ? 'queued for the next message batch' : 'already queued for a message batch',
        };
      }
      const counted =
        outcome.status === 'duplicate' ? 'duplicate' : row.status === 'skipped' ? 'skipped' : 'applied';
      deps.metrics?.jobSettled(counted, request.trigger, seconds, row);
      log.info(
        { compactionId: row.id, status: outcome.status, ledgerStatus: row.status, reason: row.reason },
        'event settled',
      );
      return {
        status: outcome.status,
        ledgerStatus: row.status,
        compactionId: row.id,
        messagesBefore: row.messagesBefore,
        messagesAfter: row.messagesAfter,
        reason: row.reason,
      };
    };
    try {
      return settled(await runCompaction(deps, request));
    } catch (error) {
      if (error instanceof LeaseBusyError) {
        deps.metrics?.leaseConflict();
        const delay = (deps.leaseBusyDelayMs ?? 1_000) * (1 + Math.random());
        await job.moveToDelayed(Date.now() + delay, token);
        throw new DelayedError();
      }
      const retryAfterMs = (error as Partial<RetryAfter>).retryAfterMs;
      const worker = deps.worker?.();
      if (typeof retryAfterMs === 'number' && worker) {
        log.warn({ retryAfterMs }, 'LLM rate limit: pausing the worker');
        await worker.rateLimit(retryAfterMs);
        throw Worker.RateLimitError();
      }
      const message = error instanceof Error ? error.message : String(error);
      const permanent = isPermanent(error);
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const strategy =
        permanent || !lastAttempt || error instanceof SessionNotFoundError
          ? request.strategy
          : await effectivePolicy(deps.store, request).then(
              (p) => p.strategy,
              () => request.strategy,
            );
      if (lastAttempt && !permanent && strategy && wantsFallback(strategy) && deps.fallbackSummarizer) {
        log.warn(
          { err: message },
          'summary failed on the last attempt: falling back to the extractive summarizer',
        );
        const note = `fell back to ${deps.fallbackSummarizer.name}: ${deps.summarizer.name} failed on the last attempt: ${message}`;
        return settled(
          await runCompaction(
            { ...deps, summarizer: deps.fallbackSummarizer },
            { ...request, note: note.slice(0, 2_000) },
          ),
        );
      }
      if ((permanent || lastAttempt) && !(error instanceof SessionNotFoundError)) {
        await recordFailure(deps, request, strategy?.type ?? 'policy', message).catch((e: unknown) =>
          log.warn({ err: e }, 'could not record the failure in the ledger'),
        );
      }
      if (permanent) throw new UnrecoverableError(message);
      throw error;
    }
  };
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
    idempotencyKey: idempotencyKeyOf(event),
    eventId: event.eventId,
    signal: deps.signal,
  };
}

/** A failed row for a session that exists; nothing for unknown sessions or foreign tenants. */
async function recordFailure(
  deps: ProcessorDeps,
  event: Pick<CompactionRequest, 'tenantId' | 'sessionId' | 'eventId' | 'trigger'>,
  strategy: string,
  message: string,
) {
  await deps.store.record({
    tenantId: event.tenantId,
    sessionId: event.sessionId,
    idempotencyKey: null,
    eventId: event.eventId,
    trigger: event.trigger,
    strategy,
    status: 'failed',
    reason: 'the job failed',
    error: message.slice(0, 2_000),
    durationMs: 0,
  });
}
