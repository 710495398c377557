/**
 * Tells the agent service what happened: after each applied compaction, a `session.compacted` job
 * on the `session-events` queue (shared/protocol/events.ts), which the service consumes with a
 * BullMQ Worker of its own. The job id is the compaction id, so a job retried after the compaction
 * committed (its outcome then `duplicate`) publishes again without a second job. On Redis, publishes
 * asked for while one is in flight go together in one `addBulk` (worker/queue/grouped-add.ts).
 */
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import type { QueueBackend } from '../../../producer/queue/backend.ts';
import type { PaybackInputs } from '../../../shared/policy/payback.ts';
import {
  jobIdOf,
  keepCompletedFor,
  SESSION_COMPACTED,
  SESSION_EVENTS_QUEUE,
  type SessionCompactedEvent,
} from '../../../shared/protocol/events.ts';
import { groupedAdder } from '../grouped-add.ts';

/** Publishes `session.compacted`. */
export interface SessionEventsPublisher {
  /**
   * Publishes the event of an applied ledger row with the checkpoint it wrote (the caller reads it
   * from the session the history continues in; null for a compaction without a summary); other
   * rows are ignored.
   * @returns the event published, or null for a row that is not applied.
   */
  compacted(row: CompactionRow, checkpoint: unknown): Promise<SessionCompactedEvent | null>;
  close(): Promise<void>;
}

/** Published jobs kept as the compaction queue keeps its own (`keepCompletedFor`); failed ones a week. */
const jobOptionsOf = (queues: QueueBackend) => ({
  removeOnComplete: keepCompletedFor(queues.kind),
  removeOnFail: { age: 7 * 24 * 3600 },
});

/**
 * The most events left waiting for a consumer. A deployment with no service consuming the queue
 * would otherwise grow it in Redis without end (and Redis must run with `noeviction` for BullMQ):
 * past this many, the oldest waiting events are removed, as BullMQ keeps at most 10,000 completed.
 */
export const SESSION_EVENTS_MAX_WAITING = 10_000;
/** How many publishes between two looks at the backlog. */
const BACKLOG_CHECK_EVERY = 100;

/**
 * A publisher on the backend's `queues` (a shared Redis connection is not closed by it).
 * @param options.maxWaiting the backlog cap, default {@link SESSION_EVENTS_MAX_WAITING}.
 * @param options.poolSize the queue's pool on the `postgres` backend (default 3); ignored on Redis.
 */
export function createSessionEventsPublisher(
  queues: QueueBackend,
  options: { maxWaiting?: number; poolSize?: number } = {},
): SessionEventsPublisher {
  const maxWaiting = options.maxWaiting ?? SESSION_EVENTS_MAX_WAITING;
  // Published after an apply, before the job (or batch row) that applied it is finished: that
  // commit makes the add durable, and a finish lost with it publishes the compaction again.
  const link = queues.link({
    shared: true,
    asyncCommit: true,
    ...(options.poolSize ? { poolSize: options.poolSize } : {}),
  });
  const queue = new queues.Queue(SESSION_EVENTS_QUEUE, {
    ...link.options,
    defaultJobOptions: jobOptionsOf(queues),
  });
  queue.on('error', () => {});
  const grouped = queues.kind === 'redis' ? groupedAdder<SessionCompactedEvent>(queue) : null;
  const add = (event: SessionCompactedEvent, jobId: string) =>
    grouped
      ? grouped.add({ name: SESSION_COMPACTED, data: event, opts: { jobId } })
      : queue.add(SESSION_COMPACTED, event, { jobId });
  let published = 0;
  return {
    async compacted(row, checkpoint) {
      if (row.status !== 'applied') return null;
      const event = sessionCompactedOf(row, row.summary === null ? null : checkpoint);
      await add(event, jobIdOf(row.tenantId, row.id));
      if (published++ % BACKLOG_CHECK_EVERY === 0) {
        const waiting = await queue.getWaitingCount();
        // Oldest first (the tail of BullMQ's wait list).
        if (waiting > maxWaiting) await queue.clean(0, waiting - maxWaiting, 'wait');
      }
      return event;
    },
    close: () => queue.close().finally(() => link.close()),
  };
}

/** The event of an applied ledger row. */
export function sessionCompactedOf(row: CompactionRow, checkpoint: unknown): SessionCompactedEvent {
  return {
    compactionId: row.id,
    tenantId: row.tenantId,
    sessionId: row.sessionId,
    version: row.compactionVersion ?? 0,
    cutoffSeq: row.cutoffSeq,
    strategy: row.strategy,
    mode: row.mode,
    childSessionId: row.childSessionId,
    messagesBefore: row.messagesBefore,
    messagesAfter: row.messagesAfter,
    tokensBefore: row.tokensBefore,
    tokensAfter: row.tokensAfter,
    checkpoint: checkpoint ?? null,
    payback: paybackOf(row),
    appliedAt: row.createdAt.toISOString(),
  };
}

/** The predicted payback of a row, for the event; null when the row has none. */
function paybackOf(row: CompactionRow): SessionCompactedEvent['payback'] {
  const inputs = row.paybackInputs as PaybackInputs | null;
  if (inputs === null || row.paybackSavingsUsd === null || row.paybackCostUsd === null) return null;
  return {
    savingsUsd: row.paybackSavingsUsd,
    costUsd: row.paybackCostUsd,
    ratio: row.paybackRatio,
    requests: inputs.requests,
    horizon: inputs.horizon,
    tokensSavedPerRequest: inputs.tokensSavedPerRequest,
  };
}
