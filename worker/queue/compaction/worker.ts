/**
 * The compaction worker: a BullMQ Worker on the `compaction` queue running the processor.
 * `close()` stops taking jobs and waits for the active ones (graceful); `close(true)` does not wait.
 */
import type { Job, Worker } from 'bullmq';
import { printable } from '../../../shared/contract/errors.ts';
import { COMPACTION_QUEUE, RUN_COMPLETED, SWEEP_COMPACTION } from '../../../shared/protocol/events.ts';
import type { Strategy } from '../../../shared/strategies/index.ts';
import { instrumentSummarizer, type WorkerMetrics } from '../../observability/metrics.ts';
import { tracingObserver } from '../../observability/tracing.ts';
import { systemClock } from '../../pipeline/clock.ts';
import type { PipelineObserver, Stage, Summarizers } from '../../pipeline/ports.ts';
import { runAll, type Services } from '../../runtime/services.ts';
import { registerQueueWorker } from '../../runtime/worker-registry.ts';
import { type QueuedSummary, queueBatchedSummary } from '../batches/batches.ts';
import { createAppliedHooks } from '../session-events/applied-hooks.ts';
import { createProcessor, type JobResult } from './processor.ts';

export interface WorkerOptions {
  /** Jobs processed at once by this process. Default 4. */
  concurrency?: number;
  defaultStrategy?: Strategy;
  /** Receives each pipeline stage's duration, ms (benchmarks). */
  onStage?: (stage: Stage, ms: number) => void;
  /** Counts jobs, LLM calls, lease conflicts and fence rejections (worker/observability/metrics.ts). */
  metrics?: WorkerMetrics;
  /**
   * The queues this process takes jobs from, as the worker registry records them (default:
   * `compaction`; `compactor worker` adds its webhook and sweep queues).
   */
  listensOn?: string[];
}

export interface CompactionWorker {
  worker: Worker<unknown, JobResult>;
  /** Stops the worker (waiting for active jobs unless `force`), then closes the services. Memoized. */
  close(force?: boolean): Promise<void>;
}

/**
 * Starts a worker on `services`.
 * @throws {Error} if `concurrency` is not a positive integer.
 */
export function startWorker(services: Services, options: WorkerOptions = {}): CompactionWorker {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const abort = new AbortController();
  let worker: Worker<unknown, JobResult> | undefined;
  const { metrics } = options;
  // session.compacted, and the tenant's webhook when it has one.
  const applied = createAppliedHooks(services, { poolSize: queuePoolSizeFor(concurrency) });
  const tenantSlots = services.tenantSlots({
    prefix: services.config.queuePrefix,
    maxActive: services.config.tenantMaxActiveJobs ?? Math.ceil(concurrency / 4),
    activeWindowMs: services.config.tenantActiveWindowMs,
    maxActiveOf: async (tenantId) =>
      (await services.policies.get(tenantId, null)).tenant?.limits?.maxActiveJobs,
  });
  const processor = createProcessor({
    onApplied: (row, checkpoint) => applied.onApplied(row, checkpoint),
    reads: services.reads,
    writes: services.writes,
    leases: services.leases,
    summarizers: instrumentAll(services.summarizers, metrics),
    budgets: services.budgets,
    observer: observerOf(metrics, options.onStage),
    metrics,
    batching: batchingOf(services),
    clock: systemClock,
    logger: services.logger,
    defaultStrategy: options.defaultStrategy,
    worker: () => worker,
    signal: abort.signal,
    tenantSlots,
  });
  // BullMQ does not close a Redis connection it was given; the link closes it after the worker.
  const link = services.queues.link({ poolSize: queuePoolSizeFor(concurrency) });
  worker = new services.queues.Worker<unknown, JobResult>(COMPACTION_QUEUE, processor, {
    ...link.options,
    concurrency,
    lockDuration: services.config.lockDurationMs,
    stalledInterval: services.config.stalledIntervalMs,
    maxStalledCount: 2,
  });
  // A finished job leaves its tenant's backlog, which ranks the tenant's next jobs.
  const countOut = (job: Job | undefined) => {
    const tenantId = (job?.data as { tenantId?: unknown } | undefined)?.tenantId;
    if (!job?.opts.priority || typeof tenantId !== 'string') return;
    services.backlog
      .release(tenantId)
      .catch((error: unknown) =>
        services.logger.warn({ err: error, tenantId }, 'tenant backlog count failed'),
      );
  };
  worker.on('completed', (job) => countOut(job));
  // Where this worker listens, for producers and `compactor doctor` to compare with theirs.
  const registered = registerQueueWorker(services, options.listensOn ?? [COMPACTION_QUEUE]);
  services.queueState.watch(worker, 'worker');
  worker.on('failed', (job, error) => {
    // attemptsMade already counts this attempt; an UnrecoverableError is never retried.
    const final = !job || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    metrics?.jobFailed(final, triggerOf(job), job?.processedOn ? (Date.now() - job.processedOn) / 1000 : 0);
    if (final) countOut(job);
    services.logger.warn(
      { jobId: job?.id, ...idsOf(job?.data), attemptsMade: job?.attemptsMade, final, err: error },
      'job failed',
    );
  });
  const w = worker;
  let closing: Promise<void> | undefined;
  return {
    worker: w,
    close: (force = false) => {
      if (force) abort.abort(new Error('worker forced to stop'));
      closing ??= runAll(services.logger, [
        () => w.close(force),
        // After the jobs: their slots' releases held back for a next take that will not come.
        () => tenantSlots.flush(),
        () => registered.close(),
        () => applied.close(),
        () => link.close(),
        () => services.close(),
      ]);
      return closing;
    },
  };
}

/** Most connections {@link queuePoolSizeFor} gives one BullMQ object's pool on Postgres. */
export const MAX_QUEUE_POOL_SIZE = 10;

/**
 * The connections of the compaction Worker's BullMQ pool on the `postgres` queue backend, and of
 * the session-events queue's the worker publishes on: one per job at once plus one (the Worker's
 * lock renewals and stalled checks), at most {@link MAX_QUEUE_POOL_SIZE}. A job holds one of
 * each for a single statement (BullMQ's complete-and-claim-next; the `session.compacted` job's
 * insert), about a millisecond, so ten serve 128 jobs: jobs that end together (an LLM's answers
 * arrive in waves) queue for a few milliseconds, which Postgres's cores would make them wait
 * anyway. On Redis the sizes are ignored.
 */
export function queuePoolSizeFor(concurrency: number): number {
  return Math.min(concurrency + 1, MAX_QUEUE_POOL_SIZE);
}

/** What started a job, for metrics: `event`, `manual`, `sweep`, or `unknown` (a malformed job). */
function triggerOf(job: Job | undefined): string {
  if (job?.name === SWEEP_COMPACTION) return 'sweep';
  if (job?.name !== RUN_COMPLETED) return 'unknown';
  const trigger = (job.data as { trigger?: unknown } | null)?.trigger;
  return trigger === 'manual' ? 'manual' : 'event';
}

/** The tenant and session ids of a job's (untrusted) data, made printable, for the logs. */
function idsOf(data: unknown): { tenantId?: string; sessionId?: string } {
  if (typeof data !== 'object' || data === null) return {};
  const { tenantId, sessionId } = data as Record<string, unknown>;
  return {
    ...(typeof tenantId === 'string' ? { tenantId: printable(tenantId, 200) } : {}),
    ...(typeof sessionId === 'string' ? { sessionId: printable(sessionId, 200) } : {}),
  };
}

/** Batch summaries for sweeps, when the services have a Message Batches client. */
function batchingOf(services: Services) {
  const { batches } = services;
  if (!batches) return undefined;
  return {
    fits: (input: Parameters<typeof batches.fits>[0]) => batches.fits(input),
    queue: (item: QueuedSummary) => queueBatchedSummary(services.database.db, item),
  };
}

/** Each summarizer, counted by the metrics when there are any. */
function instrumentAll(summarizers: Summarizers, metrics: WorkerMetrics | undefined): Summarizers {
  if (!metrics) return summarizers;
  const { primary, named, offline } = summarizers;
  return {
    primary: instrumentSummarizer(primary, metrics),
    named:
      named &&
      Object.fromEntries(
        Object.entries(named).map(([name, s]) => [name, s && instrumentSummarizer(s, metrics)]),
      ),
    offline: offline && instrumentSummarizer(offline, metrics),
  };
}

/**
 * What the pipeline tells the worker: each event goes to the job's span (worker/observability/
 * tracing.ts; nothing without a tracer), the metrics count fence rejections, budget refusals and
 * fidelity scores, and `onStage` (benchmarks) gets each stage's duration.
 */
function observerOf(metrics: WorkerMetrics | undefined, onStage: WorkerOptions['onStage']): PipelineObserver {
  const traced = tracingObserver();
  return {
    observe(event) {
      traced.observe(event);
      switch (event.type) {
        case 'stage':
          onStage?.(event.stage, event.ms);
          break;
        case 'fenceRejected':
          metrics?.fenceRejected();
          break;
        case 'fidelity':
          metrics?.summaryFidelity(event.summarizer, event.score);
          break;
        case 'budgetExceeded':
          metrics?.budgetExceeded(event.action, event.limit);
          break;
      }
    },
  };
}
