/**
 * The Postgres adapter of the pipeline: snapshot reads, the apply transaction and ledger writes.
 * Correctness lives here, at write time: version fencing under a row lock and a unique idempotency
 * key, not the Redis lease, which can expire or be lost while a worker still runs. The lease saves
 * money; the fence keeps the data right.
 */
import { randomUUID } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import { FenceError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { Message, MessageMeta } from '../../shared/contract/message.ts';
import {
  type CompactPlan,
  type Plan,
  planCompaction,
  type SessionSnapshot,
} from '../../shared/planning/plan.ts';
import { type GateState, type Mode, type Policy, policySchema } from '../../shared/policy/policy.ts';
import { type Db, executePrepared, type Tx } from '../../shared/postgres/db.ts';
import {
  type CompactionRow,
  compactionPolicies,
  compactions,
  messages,
  sessions,
} from '../../shared/postgres/schema.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { type Checkpoint, checkpointSchema } from '../../shared/summary/checkpoint.ts';
import type { SummaryUsage } from '../../shared/summary/summarizer.ts';
import type {
  ApplyInput,
  ApplyResult,
  FencedWrites,
  Gate,
  LedgerContext,
  RecordInput,
  SessionReads,
  Snapshot,
  UnderLockInput,
} from '../pipeline/ports.ts';
import { insertLedgerRow, type LedgerValues, ledgerValues } from './ledger.ts';
import { type ApplyEffect, continueInChild, insertSummaryMessage } from './transition.ts';

/** The columns of a MessageMeta (no content): what planning reads. */
const META_COLUMNS = {
  seq: messages.seq,
  role: messages.role,
  kind: messages.kind,
  toolCallId: messages.toolCallId,
  toolName: messages.toolName,
  tokenCount: messages.tokenCount,
  pinned: messages.pinned,
};

// Qualified on purpose: drizzle renders columns of a one-table select unqualified, and inside the
// policy subqueries an unqualified tenant_id would resolve to the policy's own column.
const OUTER_TENANT = sql.raw('"sessions"."tenant_id"');
const OUTER_AGENT = sql.raw('"sessions"."agent_id"');

/**
 * The live messages' metadata up to the session row's `last_seq`, as one JSON array of
 * {@link MetaTuple}s (`[]` for none); `session` names the session row in the outer query.
 */
function metasOf(session: string): string {
  return `coalesce((select json_agg(json_build_array(m.seq, m.role, m.kind, m.tool_call_id, m.tool_name,
      m.token_count, m.pinned) order by m.seq)
    from messages m
    where m.tenant_id = ${session}.tenant_id and m.session_id = ${session}.id and m.seq <= ${session}.last_seq),
    '[]'::json)`;
}

/** One message's metadata as the snapshot query sends it: the columns of {@link META_COLUMNS}, in order. */
type MetaTuple = [number, Message['role'], Message['kind'], string | null, string | null, number, boolean];

function metaOf([seq, role, kind, toolCallId, toolName, tokenCount, pinned]: MetaTuple): MessageMeta {
  return { seq, role, kind, toolCallId, toolName, tokenCount, pinned };
}

/** Postgres operations of the pipeline, bound to one database. */
export class CompactionStore implements SessionReads, FencedWrites {
  private readonly prepared: ReturnType<typeof prepareQueries>;

  constructor(private readonly db: Db) {
    this.prepared = prepareQueries(db);
  }

  /**
   * Reads the session row and the metadata of its messages up to the row's `last_seq`, in one
   * statement (one snapshot of the database, one round trip; the metadata travels as one JSON
   * array). A compaction or restore committing afterwards bumps the version the snapshot carries,
   * and the apply's fence (and its count check) rejects the plan.
   * @throws {SessionNotFoundError} if the tenant has no such session.
   */
  async loadSnapshot(tenantId: string, sessionId: string): Promise<Snapshot> {
    const [session] = await this.prepared.snapshot.execute({ tenantId, sessionId });
    if (!session) throw new SessionNotFoundError(tenantId, sessionId);
    return {
      tenantId,
      sessionId,
      compactionVersion: session.compactionVersion,
      snapshotSeq: session.lastSeq,
      messageCount: session.messageCount,
      tokenCount: session.tokenCount,
      checkpoint: session.checkpoint === null ? null : checkpointSchema.parse(session.checkpoint),
      messages: session.metas.map(metaOf),
    };
  }

  /**
   * What the admission check needs, without locks, in one round trip: the session's counters,
   * lineage and storm guard, the agent's and tenant's policies, and whether `idempotencyKey` (if
   * given) is already used.
   * @throws {SessionNotFoundError} if the tenant has no such session.
   */
  async loadGate(tenantId: string, sessionId: string, idempotencyKey: string | null = null): Promise<Gate> {
    const [row] = await this.prepared.gate.execute({ tenantId, sessionId, idempotencyKey });
    if (!row) throw new SessionNotFoundError(tenantId, sessionId);
    const { agentPolicy, tenantPolicy, keyUsed, ...state } = row;
    return {
      keyUsed,
      state: { ...state, lastCompactedAt: state.lastCompactedAt ? state.lastCompactedAt.getTime() : null },
      agentPolicy: agentPolicy == null ? null : policySchema.parse(agentPolicy),
      tenantPolicy: tenantPolicy == null ? null : policySchema.parse(tenantPolicy),
    };
  }

  /** Loads the full messages of `seqs` (ascending). Seqs no longer live are simply absent. */
  async loadMessages(tenantId: string, sessionId: string, seqs: number[]): Promise<Message[]> {
    if (seqs.length === 0) return [];
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const seq of seqs) {
      if (seq < first) first = seq;
      if (seq > last) last = seq;
    }
    return this.prepared.messages.execute({ tenantId, sessionId, first, last, seqs: bigintArray(seqs) });
  }

  /**
   * The full messages of `seqs` (ascending) in pages of at most `pageSize` seqs, read one page at
   * a time as the consumer asks, so a long history is never in memory whole. Iterable again (each
   * pass reads again). Seqs no longer live are simply absent.
   */
  pagedMessages(
    tenantId: string,
    sessionId: string,
    seqs: number[],
    pageSize = MESSAGE_PAGE,
  ): AsyncIterable<Message[]> {
    const store = this;
    return {
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < seqs.length; i += pageSize) {
          yield await store.loadMessages(tenantId, sessionId, seqs.slice(i, i + pageSize));
        }
      },
    };
  }

  /** The ledger row holding `idempotencyKey`, if any. */
  async findByKey(idempotencyKey: string): Promise<CompactionRow | undefined> {
    const [row] = await this.prepared.byKey.execute({ idempotencyKey });
    return row;
  }

  /**
   * The apply transaction: lock the session row, honour the idempotency key, check the fence, move
   * the leaving messages to the archive set-based, write the summary message, update the counters
   * and the version, insert the ledger row.
   * @throws {SessionNotFoundError} if the session vanished.
   * @throws {FenceError} if the session changed since the snapshot (re-plan and retry).
   */
  async apply(input: ApplyInput): Promise<ApplyResult> {
    return this.db.transaction(async (tx) => {
      let session = await lockSession(tx, input.tenantId, input.sessionId, input.idempotencyKey);
      if (session.compactionVersion !== input.expectedVersion) {
        // Read again now that the lock is ours: if the statement waited for the lock, its view
        // predates the writer's commit, which may have used this very idempotency key.
        session = await lockSession(tx, input.tenantId, input.sessionId, input.idempotencyKey);
      }
      if (session.keyUsed) {
        const existing = await existingRow(tx, input.idempotencyKey);
        if (existing) return { status: 'duplicate', row: existing };
      }
      if (session.compactionVersion !== input.expectedVersion) {
        throw new FenceError(
          `session "${input.sessionId}" is at compaction version ${session.compactionVersion}, ` +
            `the plan was made at ${input.expectedVersion}`,
        );
      }
      return applyPlan(tx, input, session);
    });
  }

  /**
   * A compaction that needs no LLM call (`none`, `slidingWindow`), read, planned and applied in
   * one short transaction under the session's row lock. The lease exists so two workers do not
   * pay for the same summary; with no summary to pay for, the row lock alone serialises the work.
   * The messages and the idempotency key are read in the locking statement; when the version
   * differs from `seenVersion` they are read again under the lock, since a statement that waited
   * for the lock sees the database as it was before the writer committed. Appends (no version
   * bump) it does not see are never touched.
   * @returns the ledger row (`applied`, `skipped` with the plan's reason, or the key's earlier row).
   * @throws {SessionNotFoundError} if the tenant has no such session.
   * @throws {FenceError} if the session changed under the read (re-run it).
   */
  async compactUnderLock(input: UnderLockInput): Promise<ApplyResult & { plan: Plan | null }> {
    return this.db.transaction(async (tx) => {
      const started = input.now();
      const read = () =>
        lockSession(tx, input.tenantId, input.sessionId, input.idempotencyKey, { withMessages: true });
      let session = await read();
      // Changed since the gate (perhaps while the statement waited for the lock, so that its view
      // predates the writer's commit): read again now that the lock is ours.
      if (session.compactionVersion !== input.seenVersion) session = await read();
      input.onStage?.('snapshot', input.now() - started);
      if (session.keyUsed) {
        const existing = await existingRow(tx, input.idempotencyKey);
        if (existing) return { status: 'duplicate', row: existing, plan: null };
      }
      const snapshot = {
        tenantId: input.tenantId,
        sessionId: input.sessionId,
        compactionVersion: session.compactionVersion,
        snapshotSeq: session.lastSeq,
      };
      const planned = input.now();
      const plan = planCompaction(snapshot, session.messages, input.planStrategy);
      input.onStage?.('plan', input.now() - planned);
      const applying = input.now();
      try {
        if (plan.action === 'skip') {
          const stillOver = input.stillOverTrigger?.(session.messageCount, session.tokenCount) ?? false;
          if (stillOver) await setStormGuard(tx, input.tenantId, input.sessionId);
          const row = await insertLedgerRow(
            tx,
            unchangedRow(input, session, {
              status: 'skipped',
              reason: plan.reason,
              durationMs: Math.round(input.durationMs()),
            }),
          );
          if (!row) throw new Error(`ledger: the skip of "${input.idempotencyKey}" wrote no row`);
          return { status: 'applied', row, plan };
        }
        const applied = await applyPlan(
          tx,
          {
            ...input,
            plan,
            expectedVersion: session.compactionVersion,
            summary: null,
            durationMs: input.durationMs(),
          },
          session,
        );
        return { ...applied, plan };
      } finally {
        input.onStage?.('apply', input.now() - applying);
      }
    });
  }

  /**
   * Records a decision that changed nothing (`skipped`) under its idempotency key, or a `failed`
   * attempt (key null). A skip whose key is already used returns the existing row instead.
   */
  async record(input: RecordInput): Promise<ApplyResult> {
    if (input.stormGuard) await setStormGuard(this.db, input.tenantId, input.sessionId);
    const [session] = input.counts
      ? [input.counts]
      : await this.prepared.counters.execute({ tenantId: input.tenantId, sessionId: input.sessionId });
    if (!session) throw new SessionNotFoundError(input.tenantId, input.sessionId);
    const row = await insertLedgerRow(
      this.db,
      unchangedRow(input, session, {
        idempotencyKey: input.status === 'failed' ? null : input.idempotencyKey,
        status: input.status,
        reason: input.reason,
        error: input.error ?? null,
        summarizer: input.summarizer ?? null,
        ...usageColumns(input.usage),
        durationMs: Math.round(input.durationMs),
      }),
      { skipIfKeyUsed: true },
    );
    if (row) return { status: 'applied', row };
    const existing = input.idempotencyKey ? await this.findByKey(input.idempotencyKey) : undefined;
    if (!existing)
      throw new Error(`ledger: insert of "${input.idempotencyKey}" conflicted but no row holds it`);
    return { status: 'duplicate', row: existing };
  }

  /** @throws {SessionNotFoundError} unless the tenant has this session. */
  async assertSession(tenantId: string, sessionId: string): Promise<void> {
    const [row] = await this.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
    if (!row) throw new SessionNotFoundError(tenantId, sessionId);
  }

  /** The session's ledger, oldest first. Tenant-scoped. */
  async history(tenantId: string, sessionId: string): Promise<CompactionRow[]> {
    return this.db
      .select()
      .from(compactions)
      .where(and(eq(compactions.tenantId, tenantId), eq(compactions.sessionId, sessionId)))
      .orderBy(asc(compactions.createdAt), asc(compactions.id));
  }
}

/**
 * The write half of an apply, under the row lock, after the fence: archive (or continue in a child
 * session), write the summary, update the session row and insert the ledger row.
 */
async function applyPlan(tx: Tx, input: ApplyInput, session: LockedSession): Promise<ApplyResult> {
  const compactionId = randomUUID();
  const version = session.compactionVersion + 1;
  const effect =
    input.mode === 'newSession'
      ? await continueInChild(tx, input, session, version)
      : await compactInPlace(tx, input, session, compactionId);
  const stillOver = input.stillOverTrigger?.(effect.messagesAfter, effect.tokensAfter) ?? false;
  const { summary, plan } = input;
  const row = await insertLedgerRow(
    tx,
    ledgerValues({
      ...ledgerBase(input),
      id: compactionId,
      status: 'applied',
      reason: input.note ?? null,
      mode: input.mode ?? 'inPlace',
      childSessionId: effect.childSessionId,
      summarizer: summary?.summarizer ?? null,
      cutoffSeq: plan.cutoffSeq,
      summarySeq: summary ? plan.summarySeq : null,
      compactionVersion: version,
      messagesBefore: session.messageCount,
      messagesAfter: effect.messagesAfter,
      tokensBefore: session.tokenCount,
      tokensAfter: effect.tokensAfter,
      messagesArchived: effect.archived,
      summary: summary?.text ?? null,
      checkpointBefore: summary ? session.checkpoint : null,
      ...usageColumns(summary?.usage),
      durationMs: Math.round(input.durationMs),
    }),
    {
      session: {
        ...effect.session,
        childSessionId: effect.childSessionId,
        stormGuardSeq: stillOver ? session.lastSeq : null,
        compactionVersion: version,
      },
    },
  );
  if (!row) throw new Error(`ledger: the apply of "${input.idempotencyKey}" wrote no row`);
  return { status: 'applied', row };
}

/** Messages per page when the leaving messages are read in pages (their content can be large). */
const MESSAGE_PAGE = 2000;

const TENANT = sql.placeholder('tenantId');
const SESSION = sql.placeholder('sessionId');
const KEY = sql.placeholder('idempotencyKey');

/**
 * The store's fixed reads, built once and prepared: postgres.js then sends each in one round trip
 * and Postgres parses and plans it once per connection (see `executePrepared` in shared/postgres/db.ts).
 */
function prepareQueries(db: Db) {
  const ofSession = and(eq(sessions.tenantId, TENANT), eq(sessions.id, SESSION));
  return {
    gate: db
      .select({
        agentId: sessions.agentId,
        messageCount: sessions.messageCount,
        tokenCount: sessions.tokenCount,
        contextWindow: sessions.contextWindow,
        lastCompactedAt: sessions.lastCompactedAt,
        lastSeq: sessions.lastSeq,
        compactionVersion: sessions.compactionVersion,
        stormGuardSeq: sessions.stormGuardSeq,
        childSessionId: sessions.childSessionId,
        // The policies and the idempotency check ride along in the same round trip.
        agentPolicy: sql<unknown>`(select p.policy from ${compactionPolicies} p
          where p.tenant_id = ${OUTER_TENANT} and p.agent_id = ${OUTER_AGENT})`.mapWith(
          compactionPolicies.policy,
        ),
        tenantPolicy: sql<unknown>`(select p.policy from ${compactionPolicies} p
          where p.tenant_id = ${OUTER_TENANT} and p.agent_id is null)`.mapWith(compactionPolicies.policy),
        keyUsed: sql<boolean>`exists (select 1 from ${compactions} c where c.idempotency_key = ${KEY})`,
      })
      .from(sessions)
      .where(ofSession)
      .prepare('compactor_gate'),
    snapshot: db
      .select({
        compactionVersion: sessions.compactionVersion,
        lastSeq: sessions.lastSeq,
        messageCount: sessions.messageCount,
        tokenCount: sessions.tokenCount,
        checkpoint: sessions.checkpoint,
        metas: sql<MetaTuple[]>`${sql.raw(metasOf('"sessions"'))}`,
      })
      .from(sessions)
      .where(ofSession)
      .prepare('compactor_snapshot'),
    messages: db
      .select({ ...META_COLUMNS, content: messages.content })
      .from(messages)
      .where(
        and(
          eq(messages.tenantId, TENANT),
          eq(messages.sessionId, SESSION),
          // The range lets Postgres scan the primary key once instead of probing it per seq.
          sql`${messages.seq} between ${sql.placeholder('first')} and ${sql.placeholder('last')}`,
          sql`${messages.seq} = any(${sql.placeholder('seqs')}::bigint[])`,
        ),
      )
      .orderBy(asc(messages.seq))
      .prepare('compactor_messages'),
    counters: db
      .select({ messageCount: sessions.messageCount, tokenCount: sessions.tokenCount })
      .from(sessions)
      .where(ofSession)
      .prepare('compactor_counters'),
    byKey: db
      .select()
      .from(compactions)
      .where(eq(compactions.idempotencyKey, KEY))
      .prepare('compactor_by_key'),
  };
}

/**
 * `SELECT ... FOR UPDATE` of the session row: serialises applies, restores and appends of one
 * session. With `idempotencyKey`, `keyUsed` also says whether a ledger row holds it (same round trip).
 * @throws {SessionNotFoundError} when the tenant has no such session.
 */
export async function lockSession(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  idempotencyKey: string | null = null,
  options: { withMessages?: boolean } = {},
): Promise<LockedSession> {
  const [row] = await executePrepared<LockedRow>(tx, {
    sql: options.withMessages ? LOCK_SESSION_WITH_MESSAGES : LOCK_SESSION,
    params: [tenantId, sessionId, idempotencyKey],
  });
  if (!row) throw new SessionNotFoundError(tenantId, sessionId);
  return {
    messageCount: row.message_count,
    tokenCount: Number(row.token_count),
    compactionVersion: row.compaction_version,
    checkpoint: row.checkpoint,
    lastSeq: Number(row.last_seq),
    agentId: row.agent_id,
    contextWindow: row.context_window,
    keyUsed: row.key_used,
    messages: row.metas ? row.metas.map(metaOf) : [],
  };
}

// Fixed texts, prepared once per connection (built by hand: drizzle's builder cost more per call
// than the statement itself, bench part 1).
const LOCK_COLUMNS = `message_count, token_count, compaction_version, checkpoint, last_seq, agent_id, context_window,
    exists (select 1 from compactions c where c.idempotency_key = $3::text) as key_used`;
const LOCK_SESSION = `select ${LOCK_COLUMNS}
  from sessions where tenant_id = $1::text and id = $2::text for update`;
const LOCK_SESSION_WITH_MESSAGES = `select ${LOCK_COLUMNS}, ${metasOf('s')} as metas
  from sessions s where s.tenant_id = $1::text and s.id = $2::text for update of s`;

/** The row {@link LOCK_SESSION} returns, as postgres.js parses it (int8 as text). */
interface LockedRow {
  message_count: number;
  token_count: string;
  compaction_version: number;
  checkpoint: unknown;
  last_seq: string;
  agent_id: string | null;
  context_window: number | null;
  key_used: boolean;
  metas?: MetaTuple[];
}

/** The locked session row, as {@link lockSession} returns it. */
export interface LockedSession {
  messageCount: number;
  tokenCount: number;
  compactionVersion: number;
  /** The checkpoint JSON as stored (validated where it is used). */
  checkpoint: unknown;
  lastSeq: number;
  agentId: string | null;
  contextWindow: number | null;
  /** Whether a ledger row holds the idempotency key passed to {@link lockSession}. */
  keyUsed: boolean;
  /** With `withMessages`: the live messages' metadata up to `lastSeq`, ascending; else empty. */
  messages: MessageMeta[];
}

/** Sets the storm guard to the session's `last_seq`: it lifts once enough new messages arrive. */
async function setStormGuard(db: Db | Tx, tenantId: string, sessionId: string): Promise<void> {
  await db
    .update(sessions)
    .set({ stormGuardSeq: sql`${sessions.lastSeq}` })
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
}

async function existingRow(tx: Tx, key: string | null): Promise<CompactionRow | undefined> {
  if (key === null) return undefined;
  const [row] = await tx.select().from(compactions).where(eq(compactions.idempotencyKey, key));
  return row;
}

/** inPlace: archive the leaving messages, write the summary at its seq. */
async function compactInPlace(
  tx: Tx,
  input: ApplyInput,
  session: LockedSession,
  compactionId: string,
): Promise<ApplyEffect> {
  const moved = await archiveMessages(tx, input, compactionId);
  if (moved.count !== input.plan.leavingSeqs.length) {
    throw new FenceError(
      `session "${input.sessionId}": ${moved.count} of ${input.plan.leavingSeqs.length} planned messages ` +
        'could still leave; the snapshot is stale',
    );
  }
  const { summary, plan } = input;
  if (summary && plan.summarySeq !== null) {
    await insertSummaryMessage(tx, input.tenantId, input.sessionId, plan.summarySeq, summary);
  }
  const messagesAfter = session.messageCount - moved.count + (summary ? 1 : 0);
  const tokensAfter = session.tokenCount - moved.tokens + (summary?.tokenCount ?? 0);
  return {
    messagesAfter,
    tokensAfter,
    archived: moved.count,
    childSessionId: null,
    session: {
      messageCount: messagesAfter,
      tokenCount: tokensAfter,
      checkpoint: summary?.checkpoint ?? null,
    },
  };
}

/** Moves the planned seqs to the archive in one statement; pinned rows never match. */
async function archiveMessages(
  tx: Tx,
  input: ApplyInput,
  compactionId: string,
): Promise<{ count: number; tokens: number }> {
  const rows = await executePrepared<{ count: number; tokens: string }>(
    tx,
    sql`
    with moved as (
      delete from messages
      where tenant_id = ${input.tenantId} and session_id = ${input.sessionId}
        and seq = any(${bigintArray(input.plan.leavingSeqs)}::bigint[])
        and seq <= ${input.plan.cutoffSeq} and not pinned
      returning *
    ), archived as (
      insert into archived_messages (tenant_id, session_id, seq, role, kind, content, tool_call_id,
        tool_name, token_count, pinned, created_at, compaction_id)
      select tenant_id, session_id, seq, role, kind, content, tool_call_id,
        tool_name, token_count, pinned, created_at, ${compactionId}::uuid
      from moved
      returning token_count
    )
    select count(*)::int as count, coalesce(sum(token_count), 0)::bigint as tokens from archived`,
  );
  const first = rows[0];
  return { count: Number(first?.count ?? 0), tokens: Number(first?.tokens ?? 0) };
}

/** A ledger row for a decision that changed nothing: the session's counters before and after are equal. */
function unchangedRow(
  input: LedgerContext,
  counts: { messageCount: number; tokenCount: number },
  fields: Partial<LedgerValues> & Pick<LedgerValues, 'status' | 'reason'>,
): LedgerValues {
  return ledgerValues({
    ...ledgerBase(input),
    id: randomUUID(),
    messagesBefore: counts.messageCount,
    messagesAfter: counts.messageCount,
    tokensBefore: counts.tokenCount,
    tokensAfter: counts.tokenCount,
    messagesArchived: 0,
    ...fields,
  });
}

function ledgerBase(input: LedgerContext) {
  return {
    tenantId: input.tenantId,
    sessionId: input.sessionId,
    idempotencyKey: input.idempotencyKey,
    eventId: input.eventId,
    trigger: input.trigger,
    strategy: input.strategy,
  };
}

function usageColumns(usage: SummaryUsage | undefined) {
  if (!usage) return {};
  return {
    model: usage.model,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    costUsd: usage.costUsd,
    llmMs: Math.round(usage.llmMs),
  };
}

/** A bigint[] literal passed as one text parameter (keeps 100,000 seqs within one parameter). */
function bigintArray(values: number[]): string {
  return `{${values.join(',')}}`;
}
