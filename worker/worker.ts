/**
 * The compaction worker: a BullMQ Worker on the `compaction` queue running the processor.
 * `close()` stops taking jobs and waits for the active ones (graceful); `close(true)` does not wait.
 */
import { Worker } from 'bullmq';
import { COMPACTION_QUEUE } from '../shared/events.ts';
import { createExtractiveSummarizer } from '../shared/extractive.ts';
import type { Strategy } from '../shared/strategy.ts';
import { type QueuedSummary, queueBatchedSummary } from './batches.ts';
import { createProcessor, type JobResult } from './processor.ts';
import { runAll, type Services } from './services.ts';

export interface WorkerOptions {
  /** Jobs processed at once by this process. Default 4. */
  concurrency?: number;
  defaultStrategy?: Strategy;
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
  const processor = createProcessor({
    store: services.store,
    leases: services.leases,
    summarizer: services.summarizer,
    fallbackSummarizer: createExtractiveSummarizer(),
    batching: batchingOf(services),
    now: () => performance.now(),
    logger: services.logger,
    defaultStrategy: options.defaultStrategy,
    worker: () => worker,
    signal: abort.signal,
  });
  // BullMQ does not close a connection it was given; this one is ours to quit on close.
  const connection = services.redis.duplicate();
  worker = new Worker<unknown, JobResult>(COMPACTION_QUEUE, processor, {
    connection,
    prefix: services.config.queuePrefix,
    concurrency,
    lockDuration: services.config.lockDurationMs,
    stalledInterval: services.config.stalledIntervalMs,
    maxStalledCount: 2,
  });
  worker.on('error', (error) => services.logger.error({ err: error.message }, 'worker error'));
  worker.on('failed', (job, error) =>
    services.logger.warn(
      { jobId: job?.id, attemptsMade: job?.attemptsMade, err: error.message },
      'job failed',
    ),
  );
  const w = worker;
  let closing: Promise<void> | undefined;
  return {
    worker: w,
    close: (force = false) => {
      if (force) abort.abort(new Error('worker forced to stop'));
      closing ??= runAll(services.logger, [
        () => w.close(force),
        () => connection.quit(),
        () => services.close(),
      ]);
      return closing;
    },
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
