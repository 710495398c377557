/**
 * The producer: what agent services call when a run finishes. Validates the event with the shared
 * zod schema, then enqueues it on the `compaction` queue with `jobId = eventId` (a duplicate
 * enqueue is a no-op) and per-session deduplication with `keepLastIfActive` (at most one active and
 * one waiting job per session; a burst coalesces).
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { InvalidInputError } from '../shared/contract/errors.ts';
import {
  COMPACTION_QUEUE,
  DEFAULT_JOB_OPTIONS,
  deduplicationIdOf,
  describeZodError,
  RUN_COMPLETED,
  type RunCompletedEvent,
  type RunCompletedInput,
  runCompletedEventSchema,
} from '../shared/contract/events.ts';

export { type ContextNotice, type LoadContextInput, type LoadedContext, loadContext } from './context.ts';
export {
  type AppendMessage,
  type AppendOptions,
  appendMessages,
  appendToLiveSession,
  type CreateSessionInput,
  createSession,
  liveSessionOf,
  type NativeMessage,
  type NewMessage,
  SessionContinuedError,
  SessionExistsError,
} from './sessions.ts';

export interface ProducerOptions {
  /** redis:// URL of the BullMQ Redis. */
  redisUrl: string;
  /** BullMQ key prefix; must match the workers'. */
  prefix: string;
}

export interface EnqueueResult {
  /** The job id (= eventId), or the id of the job this event was coalesced into. */
  jobId: string;
  /**
   * True when the event was coalesced into another job of the same session (one already waiting).
   * A duplicate of an earlier eventId returns that job's id with `coalesced: false`; it is a no-op.
   */
  coalesced: boolean;
}

export interface Producer {
  /**
   * Enqueues `session.run.completed`.
   * @throws {InvalidInputError} naming the bad field; nothing is enqueued.
   * @throws {Error} when Redis cannot be reached (fails fast; it does not queue in memory).
   */
  runCompleted(input: RunCompletedInput): Promise<EnqueueResult>;
  /** The underlying BullMQ queue (for Bull Board, counts, tests). */
  queue: Queue;
  close(): Promise<void>;
}

/** Validates an event without enqueueing it. @throws {InvalidInputError} naming the bad field. */
export function parseRunCompleted(input: unknown): RunCompletedEvent {
  const parsed = runCompletedEventSchema.safeParse(input);
  if (!parsed.success) throw new InvalidInputError(`invalid event: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** Opens a producer. Its Redis connection fails commands fast instead of buffering while offline. */
export function createProducer(options: ProducerOptions): Producer {
  const connection = new Redis(options.redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
  });
  connection.on('error', () => {
    // Reported to callers through the rejected command; avoid an unhandled 'error' event.
  });
  const queue = new Queue(COMPACTION_QUEUE, {
    connection,
    prefix: options.prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
  queue.on('error', () => {});
  let closing: Promise<void> | undefined;
  return {
    queue,
    async runCompleted(input) {
      const event = parseRunCompleted(input);
      await waitReady(connection);
      const job = await queue.add(RUN_COMPLETED, event, {
        jobId: event.eventId,
        deduplication: { id: deduplicationIdOf(event), keepLastIfActive: true },
      });
      const jobId = job.id ?? event.eventId;
      return { jobId, coalesced: jobId !== event.eventId };
    },
    close: () => {
      closing ??= queue
        .close()
        .catch(() => {})
        .then(() => connection.quit().catch(() => connection.disconnect()))
        .then(() => undefined);
      return closing;
    },
  };
}

/**
 * Resolves once connected; rejects after the connect timeout with a message naming Redis. Callers
 * waiting at the same time share one wait (a burst of events adds one listener, not one each).
 */
function waitReady(connection: Redis): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  let pending = waits.get(connection);
  if (!pending) {
    pending = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`Redis not reachable (status ${connection.status}); the event was not enqueued`));
      }, 5_000);
      const onReady = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        clearTimeout(timer);
        connection.off('ready', onReady);
        waits.delete(connection);
      };
      connection.on('ready', onReady);
    });
    waits.set(connection, pending);
  }
  return pending;
}

const waits = new WeakMap<Redis, Promise<void>>();
