/**
 * Undo, since every compaction must be reversible from the archive: puts the messages a compaction
 * archived back into the live history exactly (every column: same seq, native content, rendering,
 * role, kind, tool ids, tokens, pinned, created_at), removes the summary message it wrote, restores the checkpoint it replaced and
 * marks its ledger row `restored`. A message the compaction rewrote in place (`clearToolResults`,
 * `clearThinking`: its original archived with `rewritten` set) is still live at its seq in its
 * rewritten form; the restore replaces that live row with the archived original. One transaction under the session row lock; it bumps
 * `compaction_version`, so a compaction planned before the restore is fenced off. Idempotent:
 * restoring a restored compaction changes nothing. A compaction whose archived originals a retention
 * pass dropped is refused whole, never restored in part.
 */

import type { Db, Tx } from '../../producer/postgres/db.ts';
import { ledgerTenant } from '../../producer/postgres/ledger-tenant.ts';
import { and, eq, gt, sql } from '../../producer/postgres/orm.ts';
import { type CompactionRow, compactions, sessions } from '../../producer/postgres/schema.ts';
import { ArchiveExpiredError, InvalidInputError, printable } from '../../shared/contract/errors.ts';
import { expiredRestoreMessage } from '../../shared/policy/retention.ts';
import { lockSession } from './lock.ts';
import { MESSAGE_FIELDS } from './message-columns.ts';
import { expiryOf } from './retention.ts';

const FIELDS = sql.raw(MESSAGE_FIELDS);

export interface RestoreRequest {
  tenantId: string;
  sessionId: string;
  compactionId: string;
  /** Only report what would come back; write nothing. */
  dryRun?: boolean;
}

export interface RestoreResult {
  /** `restored` now, `already-restored` earlier (nothing done), or `dry-run`. */
  status: 'restored' | 'already-restored' | 'dry-run';
  row: CompactionRow;
  /** Seqs put back (or that would be), ascending. */
  restoredSeqs: number[];
  /** Seq of the summary message removed (or that would be), if the compaction wrote one. */
  removedSummarySeq: number | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Restores one compaction.
 * @throws {InvalidInputError} when the compaction id is malformed, is not one of this tenant's
 *   session's compactions, was not applied (skipped/failed rows moved nothing), or a later
 *   applied compaction still stands (restore that one first: its summary covers this one's).
 * @throws {ArchiveExpiredError} when a retention pass dropped the compaction's archived originals
 *   (the message says when and under which retention); nothing is written.
 * @throws {SessionNotFoundError} when the tenant has no such session.
 * @throws {Error} when the archive does not match the ledger (nothing is written).
 */
export async function restoreCompaction(db: Db, request: RestoreRequest): Promise<RestoreResult> {
  const { tenantId, sessionId, compactionId } = request;
  if (!UUID.test(compactionId)) throw new InvalidInputError(`compaction id "${compactionId}" is not a UUID`);
  return db.transaction(async (tx) => {
    const session = await lockSession(tx, tenantId, sessionId);
    const [row] = await tx
      .select()
      .from(compactions)
      .where(
        and(
          eq(compactions.id, compactionId),
          eq(compactions.tenantId, tenantId),
          eq(compactions.sessionId, sessionId),
        ),
      );
    if (!row) {
      throw new InvalidInputError(
        `compaction ${compactionId} not found for session "${sessionId}" of tenant "${tenantId}"`,
      );
    }
    if (row.status === 'restored') {
      return { status: 'already-restored', row, restoredSeqs: [], removedSummarySeq: null };
    }
    if (row.status === 'expired') {
      throw new InvalidInputError(
        `ledger row ${compactionId} records archived originals a retention pass dropped; it is not a compaction and cannot be restored`,
      );
    }
    if (row.status !== 'applied') {
      throw new InvalidInputError(
        `compaction ${compactionId} is ${row.status}: it moved nothing, so nothing to restore`,
      );
    }
    const expiry = await expiryOf(tx, tenantId, sessionId, compactionId);
    if (expiry) {
      throw new ArchiveExpiredError(expiredRestoreMessage(compactionId, expiry), compactionId, expiry.id);
    }
    await refuseIfLaterApplied(tx, row);
    const seqs = await archivedSeqs(tx, tenantId, compactionId);
    if (seqs.length !== row.messagesArchived) {
      throw new Error(
        `archive of compaction ${compactionId} holds ${seqs.length} messages, the ledger says ${row.messagesArchived}`,
      );
    }
    await refuseIfToolUseIdsLive(tx, row);
    const result = { restoredSeqs: seqs, removedSummarySeq: row.summarySeq };
    if (request.dryRun) return { status: 'dry-run', row, ...result };

    const removed = row.summarySeq === null ? { count: 0, tokens: 0 } : await removeSummary(tx, row);
    const replaced = await removeRewrittenVersions(tx, row);
    const back = await unarchive(tx, row);
    await tx
      .update(sessions)
      .set({
        messageCount: session.messageCount + back.count - removed.count - replaced.count,
        tokenCount: session.tokenCount + back.tokens - removed.tokens - replaced.tokens,
        compactionVersion: session.compactionVersion + 1,
        // The agent's last report measured the compacted context, which the restore undoes.
        reportedInputTokens: null,
        reportedTokenCount: null,
        updatedAt: sql`now()`,
        ...(row.summarySeq === null ? {} : { checkpoint: row.checkpointBefore }),
      })
      .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
    const [updated] = await tx
      .update(compactions)
      .set({ status: 'restored', restoredAt: sql`now()` })
      .where(and(eq(compactions.tenantId, tenantId), eq(compactions.id, compactionId)))
      .returning();
    return { status: 'restored', row: updated as CompactionRow, ...result };
  });
}

/**
 * Refuses a restore that would put a `tool_use` id back beside a live message holding the same id
 * (appended after the compaction archived the first): the restored context would repeat the id,
 * which the Messages API refuses. Rewritten originals are left out: their live version, which
 * holds the same ids, is what they replace.
 * @throws {InvalidInputError} naming the id and both seqs.
 */
async function refuseIfToolUseIdsLive(tx: Tx, row: CompactionRow): Promise<void> {
  const [clash] = await tx.execute<{ id: string; archived: string; live: string }>(sql`
    with archived as (
      select a.seq, unnest(a.tool_use_ids) as id from archived_messages a
      where a.tenant_id = ${row.tenantId} and a.compaction_id = ${row.id} and not a.rewritten
    ), live as (
      select m.seq, unnest(m.tool_use_ids) as id from messages m
      where m.tenant_id = ${row.tenantId} and m.session_id = ${row.sessionId}
    )
    select archived.id, archived.seq as archived, live.seq as live
    from archived join live using (id) limit 1`);
  if (!clash) return;
  throw new InvalidInputError(
    `compaction ${row.id} cannot be restored: its message at seq ${clash.archived} holds tool_use id ` +
      `"${printable(clash.id, 100)}", which the live message at seq ${clash.live} holds since; a request ` +
      'may hold each tool_use id once',
  );
}

async function archivedSeqs(tx: Tx, tenantId: string, compactionId: string): Promise<number[]> {
  const rows = await tx.execute<{ seq: string }>(
    sql`select seq from archived_messages
        where tenant_id = ${tenantId} and compaction_id = ${compactionId} order by seq`,
  );
  return rows.map((r) => Number(r.seq));
}

async function refuseIfLaterApplied(tx: Tx, row: CompactionRow): Promise<void> {
  const later = await tx
    .select({ id: compactions.id })
    .from(compactions)
    .where(
      and(
        eq(compactions.tenantId, ledgerTenant(row.tenantId)),
        eq(compactions.sessionId, row.sessionId),
        eq(compactions.status, 'applied'),
        gt(compactions.compactionVersion, row.compactionVersion ?? 0),
      ),
    )
    .orderBy(compactions.compactionVersion);
  if (later.length > 0) {
    throw new InvalidInputError(
      `compaction ${row.id} has later compactions still applied; restore them first, newest first: ` +
        later
          .map((l) => l.id)
          .reverse()
          .join(', '),
    );
  }
}

/** Deletes the summary message the compaction wrote; it must be there (no later compaction stands). */
async function removeSummary(tx: Tx, row: CompactionRow): Promise<{ count: number; tokens: number }> {
  const deleted = await tx.execute<{ token_count: number }>(sql`
    delete from messages
    where tenant_id = ${row.tenantId} and session_id = ${row.sessionId} and seq = ${row.summarySeq}
      and kind = 'summary'
    returning token_count`);
  if (deleted.length !== 1) {
    throw new Error(
      `summary message of compaction ${row.id} at seq ${row.summarySeq} is missing; nothing restored`,
    );
  }
  return { count: 1, tokens: Number(deleted[0]?.token_count ?? 0) };
}

/**
 * Deletes the live, rewritten versions of the messages the compaction rewrote in place, so their
 * archived originals can take their seqs back; each must be there (no later compaction stands).
 */
async function removeRewrittenVersions(
  tx: Tx,
  row: CompactionRow,
): Promise<{ count: number; tokens: number }> {
  const [expected] = await tx.execute<{ n: number }>(
    sql`select count(*)::int as n from archived_messages
        where tenant_id = ${row.tenantId} and compaction_id = ${row.id} and rewritten`,
  );
  const want = Number(expected?.n ?? 0);
  if (want === 0) return { count: 0, tokens: 0 };
  const deleted = await tx.execute<{ token_count: number }>(sql`
    delete from messages m
    using archived_messages a
    where a.tenant_id = ${row.tenantId} and a.compaction_id = ${row.id} and a.rewritten
      and m.tenant_id = a.tenant_id and m.session_id = a.session_id and m.seq = a.seq
    returning m.token_count`);
  if (deleted.length !== want) {
    throw new Error(
      `compaction ${row.id} rewrote ${want} messages in place, ${deleted.length} of them are live; nothing restored`,
    );
  }
  return { count: deleted.length, tokens: deleted.reduce((sum, d) => sum + Number(d.token_count), 0) };
}

/** Moves the compaction's archived messages back, set-based, exactly as they were. */
async function unarchive(tx: Tx, row: CompactionRow): Promise<{ count: number; tokens: number }> {
  const [moved] = await tx.execute<{ count: number; tokens: string }>(sql`
    with back as (
      delete from archived_messages where tenant_id = ${row.tenantId} and compaction_id = ${row.id}
      returning tenant_id, session_id, ${FIELDS}
    ), inserted as (
      insert into messages (tenant_id, session_id, ${FIELDS})
      select tenant_id, session_id, ${FIELDS}
      from back
      returning token_count
    )
    select count(*)::int as count, coalesce(sum(token_count), 0)::bigint as tokens from inserted`);
  return { count: Number(moved?.count ?? 0), tokens: Number(moved?.tokens ?? 0) };
}
