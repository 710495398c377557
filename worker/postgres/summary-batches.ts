/**
 * The `summary_batches` table: summaries queued for the next Message Batch, the batch each was
 * submitted in, and how each ended. The batch poller (worker/queue/batches/batches.ts) reads and moves
 * rows through these functions only.
 */

import type { Db } from '../../producer/postgres/db.ts';
import { and, eq, or, sql } from '../../producer/postgres/orm.ts';
import { sessions, summaryBatches } from '../../producer/postgres/schema.ts';
import type { QueuedSummary } from '../pipeline/pipeline.ts';

/** One queued, submitted or finished batch summary. */
export type SummaryBatchRow = typeof summaryBatches.$inferSelect;

/**
 * Queues a summary for the next batch (again, if an earlier batch request under this key failed).
 * @returns false when one is already queued, running or done under this idempotency key.
 */
export async function queueBatchedSummary(db: Db, item: QueuedSummary): Promise<boolean> {
  // A request whose batch failed may be queued again under the same key; a live one may not.
  const inserted = await db
    .insert(summaryBatches)
    .values({ ...item, strategy: item.strategy, plan: item.plan })
    .onConflictDoUpdate({
      target: [summaryBatches.tenantId, summaryBatches.idempotencyKey],
      set: {
        status: 'queued',
        batchId: null,
        reason: null,
        plan: item.plan,
        strategy: item.strategy,
        updatedAt: sql`now()`,
      },
      setWhere: sql`${summaryBatches.status} = 'failed'`,
    })
    .returning({ id: summaryBatches.id });
  return inserted.length > 0;
}

/** Queued rows, at most `limit`, in a stable order (custom ids map answers back anyway). */
export function queuedRows(db: Db, limit: number): Promise<SummaryBatchRow[]> {
  return db
    .select()
    .from(summaryBatches)
    .where(eq(summaryBatches.status, 'queued'))
    .orderBy(summaryBatches.tenantId, summaryBatches.sessionId)
    .limit(limit);
}

/** A row's primary key: its tenant and id. */
export interface SummaryBatchKey {
  tenantId: string;
  id: string;
}

/**
 * Marks rows as submitted in `batchId`. Each row is named by its full key, tenant included, so a
 * distributed Postgres routes each update to the tenant's shard.
 */
export async function markSubmitted(db: Db, keys: SummaryBatchKey[], batchId: string): Promise<void> {
  if (keys.length === 0) return;
  await db
    .update(summaryBatches)
    .set({ batchId, status: 'submitted', updatedAt: sql`now()` })
    .where(or(...keys.map((k) => and(eq(summaryBatches.tenantId, k.tenantId), eq(summaryBatches.id, k.id)))));
}

/** The ids of batches with rows still waiting for their results. */
export async function openBatchIds(db: Db): Promise<string[]> {
  const open = await db
    .selectDistinct({ batchId: summaryBatches.batchId })
    .from(summaryBatches)
    .where(eq(summaryBatches.status, 'submitted'));
  return open.flatMap(({ batchId }) => (batchId ? [batchId] : []));
}

/** The rows of `batchId` still waiting for their results. */
export function submittedRows(db: Db, batchId: string): Promise<SummaryBatchRow[]> {
  return db
    .select()
    .from(summaryBatches)
    .where(and(eq(summaryBatches.batchId, batchId), eq(summaryBatches.status, 'submitted')));
}

/** Records how a row ended; the row is named by its full key, tenant included. */
export async function finishRow(
  db: Db,
  key: SummaryBatchKey,
  status: 'applied' | 'skipped' | 'failed',
  reason: string | null,
): Promise<void> {
  await db
    .update(summaryBatches)
    .set({ status, reason, updatedAt: sql`now()` })
    .where(and(eq(summaryBatches.tenantId, key.tenantId), eq(summaryBatches.id, key.id)));
}

/** The session's compaction version and checkpoint, or undefined when it no longer exists. */
export async function sessionVersion(
  db: Db,
  tenantId: string,
  sessionId: string,
): Promise<{ version: number; checkpoint: unknown } | undefined> {
  const [session] = await db
    .select({ version: sessions.compactionVersion, checkpoint: sessions.checkpoint })
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
  return session;
}
