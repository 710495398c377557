/**
 * The fenced writes of the pipeline, over Postgres. Correctness lives here, at write time: every
 * write locks the session row, honours the idempotency key (a key already in the ledger returns
 * its row and changes nothing) and checks the version fence (a plan made at another version is
 * rejected), then executes the change's effects and writes the ledger row and the session's
 * counters in one transaction. The Redis lease only saves money.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../../producer/postgres/db.ts';
import { and, eq, sql } from '../../producer/postgres/orm.ts';
import { type CompactionRow, compactions, sessions } from '../../producer/postgres/schema.ts';
import { FenceError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import { overTrigger } from '../../shared/policy/policy.ts';
import { checkpointSchema } from '../../shared/summary/checkpoint.ts';
import type {
  Change,
  ContextReport,
  Decision,
  FencedWrites,
  LockedRead,
  NoChange,
  Snapshot,
  WriteResult,
} from '../pipeline/ports.ts';
import { releaseReservation } from './budgets.ts';
import { type EffectFacts, executeEffects, foreseenFacts } from './effects.ts';
import { appliedRow, insertLedgerRow, unchangedRow } from './ledger.ts';
import { type LockedSession, lockSession } from './lock.ts';
import { measurePayback } from './payback.ts';
import { contentsOf, type PostgresReads } from './reads.ts';

/** Fenced writes bound to one database. */
export class PostgresWrites implements FencedWrites {
  constructor(
    private readonly db: Db,
    private readonly reads: PostgresReads,
  ) {}

  async apply(change: Change): Promise<WriteResult> {
    const { tenantId, sessionId, idempotencyKey } = change.entry;
    return this.db.transaction(async (tx) => {
      let locked = await lockSession(tx, tenantId, sessionId, idempotencyKey);
      if (locked.compactionVersion !== change.expectedVersion) {
        // Read again now that the lock is ours: if the statement waited for the lock, its view
        // predates the writer's commit, which may have used this very idempotency key.
        locked = await lockSession(tx, tenantId, sessionId, idempotencyKey);
      }
      const earlier = locked.keyUsed ? await existingRow(tx, tenantId, idempotencyKey) : undefined;
      if (earlier) return { status: 'duplicate', row: earlier };
      if (locked.compactionVersion !== change.expectedVersion) {
        throw new FenceError(
          `session "${sessionId}" is at compaction version ${locked.compactionVersion}, ` +
            `the plan was made at ${change.expectedVersion}`,
        );
      }
      return writeChange(tx, change, locked);
    });
  }

  async applyUnderLock(read: LockedRead, decide: (snapshot: Snapshot) => Decision): Promise<WriteResult> {
    const { tenantId, sessionId, idempotencyKey } = read;
    return this.db.transaction(async (tx) => {
      const lock = () => lockSession(tx, tenantId, sessionId, idempotencyKey, { withMessages: true });
      let locked = await lock();
      // Changed since the gate (perhaps while the statement waited for the lock, so that its view
      // predates the writer's commit): read again now that the lock is ours.
      if (locked.compactionVersion !== read.seenVersion) locked = await lock();
      const earlier = locked.keyUsed ? await existingRow(tx, tenantId, idempotencyKey) : undefined;
      if (earlier) return { status: 'duplicate', row: earlier };
      // Chosen before the plan, so a plan may name its compaction in what it writes.
      const compactionId = randomUUID();
      const contentSeqs = read.contentSeqs?.(locked.messages) ?? [];
      const decision = decide({
        tenantId,
        sessionId,
        compactionVersion: locked.compactionVersion,
        snapshotSeq: locked.lastSeq,
        format: locked.format,
        messageCount: locked.messageCount,
        tokenCount: locked.tokenCount,
        checkpoint: locked.checkpoint === null ? null : checkpointSchema.parse(locked.checkpoint),
        messages: locked.messages,
        compactionId,
        ...(read.contentSeqs ? { contents: await contentsOf(tx, tenantId, sessionId, contentSeqs) } : {}),
      });
      if ('change' in decision) return writeChange(tx, decision.change, locked, compactionId);
      const written = await writeNoChange(tx, decision.noChange, locked);
      if (!written) throw new Error(`ledger: the skip of "${idempotencyKey}" wrote no row`);
      return written;
    });
  }

  async reportContextTokens(report: ContextReport): Promise<void> {
    const { tenantId, sessionId, inputTokens } = report;
    await this.db.transaction(async (tx) => {
      const updated = await tx
        .update(sessions)
        .set({ reportedInputTokens: inputTokens, reportedTokenCount: sql`${sessions.tokenCount}` })
        .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)))
        .returning({ id: sessions.id });
      if (updated.length > 0) await measurePayback(tx, report);
    });
  }

  async record(noChange: NoChange): Promise<WriteResult> {
    const { tenantId, sessionId, idempotencyKey } = noChange.entry;
    const counts = noChange.counts ?? (await this.reads.loadCounters(tenantId, sessionId));
    if (!counts) throw new SessionNotFoundError(tenantId, sessionId);
    const { reservationId } = noChange;
    const written = reservationId
      ? await this.db.transaction(async (tx) => {
          await releaseReservation(tx, tenantId, reservationId);
          return writeNoChange(tx, noChange, counts);
        })
      : await writeNoChange(this.db, noChange, counts);
    if (written) return written;
    const existing = idempotencyKey ? await this.reads.findByKey(tenantId, idempotencyKey) : undefined;
    if (!existing) throw new Error(`ledger: insert of "${idempotencyKey}" conflicted but no row holds it`);
    return { status: 'duplicate', row: existing };
  }
}

/**
 * The write half of an apply, under the row lock, after the fence: the effects, then the session
 * row and the ledger row in one statement. When what the effects will do is known beforehand
 * ({@link foreseenFacts}), that statement is sent with them, in one round trip, and what they did
 * is checked against it after.
 */
async function writeChange(
  tx: Tx,
  change: Change,
  locked: LockedSession,
  id: string = randomUUID(),
): Promise<WriteResult> {
  const where = { tenantId: change.entry.tenantId, sessionId: change.entry.sessionId };
  const foreseen = change.reservationId ? null : foreseenFacts(change.effects, locked);
  if (foreseen) {
    const [done, written] = await Promise.allSettled([
      executeEffects(tx, where, change.effects, locked, id),
      writeLedger(tx, change, locked, foreseen, id),
    ]);
    // An effect's failure (a fence) is the one to tell; the rollback undoes what the ledger wrote.
    if (done.status === 'rejected') throw done.reason;
    if (written.status === 'rejected') throw written.reason;
    if (!sameFacts(done.value, foreseen))
      throw new Error(
        `apply of "${change.entry.idempotencyKey}": the effects did not do what the plan foresaw`,
      );
    return { status: 'applied', row: written.value, checkpoint: foreseen.written };
  }
  const facts = await executeEffects(tx, where, change.effects, locked, id);
  // The summary's real cost (the ledger row) replaces its reservation in this transaction.
  if (change.reservationId) await releaseReservation(tx, where.tenantId, change.reservationId);
  return {
    status: 'applied',
    row: await writeLedger(tx, change, locked, facts, id),
    checkpoint: facts.written,
  };
}

/** The session row after an apply that did `facts`, and its ledger row, in one statement. */
async function writeLedger(
  tx: Tx,
  change: Change,
  locked: LockedSession,
  facts: EffectFacts,
  id: string,
): Promise<CompactionRow> {
  const version = locked.compactionVersion + 1;
  const { guard } = change;
  const stillOver =
    guard !== null &&
    overTrigger(guard.triggers, guard.contextWindow, facts.messagesAfter, facts.tokensAfter);
  const row = await insertLedgerRow(tx, appliedRow(id, change, locked, facts, version), {
    session: {
      ...facts.session,
      childSessionId: facts.childSessionId,
      stormGuardSeq: stillOver ? locked.lastSeq : null,
      compactionVersion: version,
    },
  });
  if (!row) throw new Error(`ledger: the apply of "${change.entry.idempotencyKey}" wrote no row`);
  return row;
}

/** Whether two reports of the effects agree on every count the ledger and the session take. */
function sameFacts(a: EffectFacts, b: EffectFacts): boolean {
  return (
    a.messagesAfter === b.messagesAfter &&
    a.tokensAfter === b.tokensAfter &&
    a.archived === b.archived &&
    a.blocksCleared === b.blocksCleared &&
    a.childSessionId === b.childSessionId &&
    a.session.messageCount === b.session.messageCount &&
    a.session.tokenCount === b.session.tokenCount &&
    a.session.checkpoint === b.session.checkpoint
  );
}

/**
 * A ledger row that changes no message (and the storm guard, when asked).
 * @returns null when the row's idempotency key is already used (nothing written).
 */
async function writeNoChange(
  db: Db | Tx,
  noChange: NoChange,
  counts: { messageCount: number; tokenCount: number },
): Promise<WriteResult | null> {
  const { tenantId, sessionId } = noChange.entry;
  if (noChange.stormGuard) {
    await db
      .update(sessions)
      .set({ stormGuardSeq: sql`${sessions.lastSeq}` })
      .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
  }
  const row = await insertLedgerRow(db, unchangedRow(noChange, counts), { skipIfKeyUsed: true });
  return row ? { status: noChange.status, row } : null;
}

/** The tenant's ledger row holding `key` (keys are unique per tenant), if any. */
async function existingRow(tx: Tx, tenantId: string, key: string | null): Promise<CompactionRow | undefined> {
  if (key === null) return undefined;
  const [row] = await tx
    .select()
    .from(compactions)
    .where(and(eq(compactions.tenantId, tenantId), eq(compactions.idempotencyKey, key)));
  return row;
}
