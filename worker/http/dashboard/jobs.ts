/**
 * Waiting for a compaction job to settle, so "compact now" can answer with what happened instead
 * of "enqueued". The dashboard owns one `QueueEvents` (a blocking connection of its own, to Redis or
 * Postgres as the queue backend says) on
 * the compaction queue and closes it on shutdown; every wait is bounded.
 */
import { Job, type Queue } from 'bullmq';
import { z } from 'zod';
import type { QueueBackend } from '../../../producer/queue/backend.ts';

/**
 * What a compaction job returns, as far as the dashboard reads it. Parsed, not trusted: it is JSON
 * from the queue, written by whichever worker version ran the job. `ledgerStatus` and `reason` say what
 * happened (`status` has meant different things across versions).
 */
export const jobResultSchema = z.object({
  status: z.string(),
  ledgerStatus: z.string(),
  compactionId: z.string().nullable(),
  messagesBefore: z.number().nullable(),
  messagesAfter: z.number().nullable(),
  reason: z.string().nullable(),
});

/** A compaction job's return value. */
export type JobResultView = z.infer<typeof jobResultSchema>;

/** Where a job stood when the wait ended. */
export type JobSettlement =
  /** Finished; `result` is null when its return value is not one this dashboard can read. */
  | { state: 'completed'; result: JobResultView | null }
  /** Failed for good (no attempt left, or an error retrying cannot fix). */
  | { state: 'failed'; error: string; attemptsMade: number }
  /**
   * Not finished when the wait ended: waiting, active, or delayed (a busy session, or a backoff
   * after a failed attempt, whose error `lastError` holds).
   */
  | { state: 'running'; jobState: string; attemptsMade: number; lastError: string | null }
  /** No such job any more (removed from Bull Board, or expired). */
  | { state: 'unknown' };

/** Waits for compaction jobs. */
export interface JobWaiter {
  /**
   * Waits up to `ttlMs` for job `jobId` to finish and says where it stands. Never throws for the
   * job's own failure; rejects only when the queue cannot be read (in time).
   */
  settle(jobId: string, ttlMs: number): Promise<JobSettlement>;
  /** Stops listening; closes the events connection. */
  close(): Promise<void>;
}

/**
 * A waiter on `queue`'s events, listening on a connection of its own made by `queues` (it blocks
 * on reads; the waiter closes it on close).
 */
export function createJobWaiter(queue: Queue, queues: QueueBackend): JobWaiter {
  const link = queues.link({ poolSize: 1 });
  const events = new queues.QueueEvents(queue.name, link.options);
  // Connection errors surface through the reads of a wait; an unhandled 'error' event would crash.
  events.on('error', () => {});
  let closing: Promise<void> | undefined;
  return {
    settle(jobId, ttlMs) {
      const settle = async (): Promise<JobSettlement> => {
        const job = await Job.fromId(queue, jobId);
        if (!job) return { state: 'unknown' };
        try {
          const value: unknown = await job.waitUntilFinished(events, ttlMs);
          return completed(value);
        } catch {
          // A timeout and a failure reject alike; the job's state tells them apart.
          return settlementOf(await Job.fromId(queue, jobId));
        }
      };
      // BullMQ's connections wait for the queue to come back rather than fail: the wait stays bounded.
      return withDeadline(settle(), ttlMs + READ_MARGIN_MS);
    },
    close: () => {
      closing ??= events
        .close()
        .catch(() => {})
        .then(() => link.close())
        .then(() => undefined);
      return closing;
    },
  };
}

/** Time for the reads around a wait (the job, its state), ms. */
const READ_MARGIN_MS = 5_000;

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the queue did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

function completed(value: unknown): JobSettlement {
  const parsed = jobResultSchema.safeParse(value);
  return { state: 'completed', result: parsed.success ? parsed.data : null };
}

async function settlementOf(job: Job | undefined): Promise<JobSettlement> {
  if (!job) return { state: 'unknown' };
  const state = await job.getState();
  if (state === 'completed') return completed(job.returnvalue);
  if (state === 'failed') {
    return { state: 'failed', error: job.failedReason || 'failed', attemptsMade: job.attemptsMade };
  }
  if (state === 'unknown') return { state: 'unknown' };
  return {
    state: 'running',
    // A job waiting its turn sits in BullMQ's prioritized set (every compaction job has a priority).
    jobState: state === 'prioritized' ? 'waiting' : state,
    attemptsMade: job.attemptsMade,
    lastError: job.failedReason || null,
  };
}
