/**
 * Tells the agent service what happened: after each applied compaction, a `session.compacted` job
 * on the `session-events` queue (shared/contract/events.ts), which the service consumes with a
 * BullMQ Worker of its own. The job id is the compaction id, so a job retried after the compaction
 * committed (its outcome then `duplicate`) publishes again without a second job.
 */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type postgres from 'postgres';
import {
  SESSION_COMPACTED,
  SESSION_EVENTS_QUEUE,
  type SessionCompactedEvent,
} from '../../shared/contract/events.ts';
import type { CompactionRow } from '../../shared/postgres/schema.ts';

/** Publishes `session.compacted`. */
export interface SessionEventsPublisher {
  /**
   * Publishes the event of an applied ledger row, with the checkpoint it wrote (read from the
   * session the history continues in); other rows are ignored.
   * @returns the event published, or null for a row that is not applied.
   */
  compacted(row: CompactionRow): Promise<SessionCompactedEvent | null>;
  close(): Promise<void>;
}

/** Published jobs kept a day (at most 10,000), as the compaction queue keeps its own. */
const JOB_OPTIONS = {
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * A publisher on `connection` (not closed by it) under the BullMQ key `prefix`; `sql` reads the
 * checkpoint.
 */
export function createSessionEventsPublisher(
  connection: Redis,
  prefix: string,
  sql: postgres.Sql,
): SessionEventsPublisher {
  const queue = new Queue(SESSION_EVENTS_QUEUE, { connection, prefix, defaultJobOptions: JOB_OPTIONS });
  queue.on('error', () => {});
  return {
    async compacted(row) {
      if (row.status !== 'applied') return null;
      const [session] = await sql<{ checkpoint: unknown }[]>`
        select checkpoint from sessions
        where tenant_id = ${row.tenantId} and id = ${row.childSessionId ?? row.sessionId}`;
      const checkpoint = row.summary === null ? null : (session?.checkpoint ?? null);
      const event = sessionCompactedOf(row, checkpoint);
      await queue.add(SESSION_COMPACTED, event, { jobId: row.id });
      return event;
    },
    close: () => queue.close(),
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
    appliedAt: row.createdAt.toISOString(),
  };
}
