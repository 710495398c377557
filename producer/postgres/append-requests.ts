/**
 * The statements on `append_requests`: the idempotency keys of appends (producer/idempotency.ts
 * holds the rules around them). Every statement is scoped by tenant.
 */

import type { Db, Tx } from './db.ts';
import { and, eq, sql } from './orm.ts';
import { appendRequests } from './schema.ts';

/** The key's row after a claim, and whether this claim inserted it. */
export interface ClaimedAppendRequest {
  /** True when this transaction inserted the row (the key was free). */
  inserted: boolean;
  requestHash: string;
  sessionId: string;
  /** The first and last seq the key's append wrote; -1 while it is being written. */
  firstSeq: number;
  lastSeq: number;
}

/**
 * Inserts the key's row (seqs -1), or, when the tenant has the key already, returns that row locked:
 * an `INSERT … ON CONFLICT DO UPDATE` that waits for a concurrent transaction holding the same key
 * to end. The no-op update returns the existing row in the same statement, so nothing (a prune, a
 * purge) can remove it between finding the conflict and reading it; `xmax = 0` tells the insert.
 */
export async function claimAppendRequest(
  tx: Tx,
  claim: { tenantId: string; idempotencyKey: string; requestHash: string; sessionId: string },
): Promise<ClaimedAppendRequest | undefined> {
  const [row] = await tx
    .insert(appendRequests)
    .values({ ...claim, firstSeq: -1, lastSeq: -1 })
    .onConflictDoUpdate({
      target: [appendRequests.tenantId, appendRequests.idempotencyKey],
      set: { tenantId: sql`excluded.tenant_id` },
    })
    .returning({
      inserted: sql<boolean>`xmax = 0`,
      requestHash: appendRequests.requestHash,
      sessionId: appendRequests.sessionId,
      firstSeq: appendRequests.firstSeq,
      lastSeq: appendRequests.lastSeq,
    });
  return row;
}

/** Fills in where the append that claimed the tenant's `key` went. */
export async function recordAppendRequest(
  tx: Tx,
  tenantId: string,
  key: string,
  appended: { sessionId: string; firstSeq: number; lastSeq: number },
): Promise<void> {
  await tx
    .update(appendRequests)
    .set(appended)
    .where(and(eq(appendRequests.tenantId, tenantId), eq(appendRequests.idempotencyKey, key)));
}

/**
 * Deletes keys created more than `olderThanMs` ago, at most `limit` of them, oldest first.
 * @returns how many were deleted.
 */
export async function deleteAppendRequestsBefore(
  db: Pick<Db, 'execute'>,
  olderThanMs: number,
  limit: number,
): Promise<number> {
  const rows = await db.execute<{ n: number }>(sql`
    with gone as (
      delete from append_requests where (tenant_id, idempotency_key) in (
        select tenant_id, idempotency_key from append_requests
        where created_at < now() - make_interval(secs => ${olderThanMs / 1000})
        order by created_at limit ${limit}
      ) returning 1
    ) select count(*)::int as n from gone`);
  return rows[0]?.n ?? 0;
}
