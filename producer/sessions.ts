/**
 * Writing sessions and messages, as agent services do: create a session with its transcript, or
 * append messages to a live one. Every write is scoped by tenant.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import {
  SessionContinuedError,
  SessionExistsError,
  SessionNotFoundError,
} from '../shared/contract/errors.ts';
import type { Kind, Role } from '../shared/contract/message.ts';
import { estimateMessageTokens } from '../shared/contract/tokens.ts';
import type { Db } from '../shared/postgres/db.ts';
import { messages, sessions } from '../shared/postgres/schema.ts';

/** Rows per INSERT: 11 columns × 2,000 = 22,000 parameters, well under Postgres' 65,535. */
export const INSERT_BATCH_ROWS = 2_000;

/** A message to store. `tokenCount` defaults to the estimate of shared/contract/tokens.ts. */
export interface NewMessage {
  seq: number;
  role: Role;
  kind: Exclude<Kind, 'summary'>;
  content: string;
  toolCallId?: string | null;
  toolName?: string | null;
  tokenCount?: number;
  pinned?: boolean;
  createdAt?: Date | null;
}

export { SessionContinuedError, SessionExistsError };

export interface CreateSessionInput {
  tenantId: string;
  sessionId: string;
  agentId?: string | null;
  /** Context window of the session's model, in tokens. */
  contextWindow?: number | null;
  messages: NewMessage[];
}

/**
 * Creates a session and stores its messages (seqs as given, strictly ascending) in one
 * transaction, in batches of {@link INSERT_BATCH_ROWS}.
 * @returns the number of messages and estimated tokens stored.
 * @throws {SessionExistsError} if the tenant already has this session id (nothing is written).
 */
export async function createSession(
  db: Db,
  input: CreateSessionInput,
): Promise<{ messageCount: number; tokenCount: number }> {
  const rows = input.messages.map((m) => toRow(input.tenantId, input.sessionId, m));
  const tokenCount = rows.reduce((sum, r) => sum + r.tokenCount, 0);
  const lastSeq = rows.length > 0 ? (rows[rows.length - 1]?.seq ?? -1) : -1;
  await db.transaction(async (tx) => {
    const created = await tx
      .insert(sessions)
      .values({
        id: input.sessionId,
        tenantId: input.tenantId,
        agentId: input.agentId ?? null,
        contextWindow: input.contextWindow ?? null,
        lastSeq,
        messageCount: rows.length,
        tokenCount,
      })
      .onConflictDoNothing()
      .returning({ id: sessions.id });
    if (created.length === 0) {
      throw new SessionExistsError(
        `session "${input.sessionId}" already exists for tenant "${input.tenantId}"; not imported again`,
      );
    }
    await insertBatches(tx, rows);
  });
  return { messageCount: rows.length, tokenCount };
}

/**
 * Appends messages to a live session, giving them the next seqs (`last_seq + 1`, ...), as an
 * agent does after a run. Takes the session row lock only for the counter update, so it waits for
 * at most one compaction's apply transaction. A session that continued in a child is frozen:
 * nothing is written into it.
 * @returns the seqs assigned, in order.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 * @throws {SessionContinuedError} naming the live session, if this one continued in a child.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function appendMessages(
  db: Db,
  tenantId: string,
  sessionId: string,
  newMessages: Array<Omit<NewMessage, 'seq'>>,
): Promise<number[]> {
  if (newMessages.length === 0) return [];
  const tokens = newMessages.map((m) => m.tokenCount ?? estimateMessageTokens(m.content));
  const total = tokens.reduce((a, b) => a + b, 0);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .update(sessions)
      .set({
        lastSeq: sql`${sessions.lastSeq} + ${newMessages.length}`,
        messageCount: sql`${sessions.messageCount} + ${newMessages.length}`,
        tokenCount: sql`${sessions.tokenCount} + ${total}`,
        updatedAt: sql`now()`,
      })
      .where(
        and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId), isNull(sessions.childSessionId)),
      )
      .returning({ lastSeq: sessions.lastSeq });
    if (!row) {
      const [frozen] = await tx
        .select({ child: sessions.childSessionId })
        .from(sessions)
        .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
      if (!frozen) throw new SessionNotFoundError(tenantId, sessionId);
      throw new SessionContinuedError(sessionId, await liveSessionOf(tx, tenantId, sessionId));
    }
    const first = row.lastSeq - newMessages.length + 1;
    const rows = newMessages.map((m, i) =>
      toRow(tenantId, sessionId, { ...m, seq: first + i, tokenCount: tokens[i] as number }),
    );
    await insertBatches(tx, rows);
    return rows.map((r) => r.seq);
  });
}

/**
 * Appends to the live session of `sessionId`'s lineage: the session itself, or the child it
 * continued in after a `newSession` compaction (followed again if that one transitions while we
 * write).
 * @returns where the messages went and their seqs. Enqueue the run's event for that session.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function appendToLiveSession(
  db: Db,
  tenantId: string,
  sessionId: string,
  newMessages: Array<Omit<NewMessage, 'seq'>>,
): Promise<{ sessionId: string; seqs: number[] }> {
  let target = sessionId;
  for (let hop = 0; ; hop++) {
    try {
      return { sessionId: target, seqs: await appendMessages(db, tenantId, target, newMessages) };
    } catch (error) {
      if (!(error instanceof SessionContinuedError) || hop >= 100) throw error;
      target = error.liveSessionId;
    }
  }
}

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

async function insertBatches(tx: Tx, rows: Array<typeof messages.$inferInsert>): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH_ROWS) {
    await tx.insert(messages).values(rows.slice(i, i + INSERT_BATCH_ROWS));
  }
}

function toRow(tenantId: string, sessionId: string, m: NewMessage) {
  return {
    tenantId,
    sessionId,
    seq: m.seq,
    role: m.role,
    kind: m.kind,
    content: m.content,
    toolCallId: m.toolCallId ?? null,
    toolName: m.toolName ?? null,
    tokenCount: m.tokenCount ?? estimateMessageTokens(m.content),
    pinned: m.pinned ?? false,
    createdAt: m.createdAt ?? undefined,
  } satisfies typeof messages.$inferInsert;
}

/**
 * The live session of a lineage: follows `child_session_id` from `sessionId` (a session that
 * continued in a child after a `newSession` compaction) to the newest descendant, in one query.
 * Agents call it to know where to append and what to load.
 * @returns the live session's id (`sessionId` itself when it never transitioned).
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function liveSessionOf(
  db: Pick<Db, 'execute'>,
  tenantId: string,
  sessionId: string,
): Promise<string> {
  const rows = await db.execute<{ id: string }>(sql`
    with recursive lineage(id, child, depth) as (
      select id, child_session_id, 0 from sessions where tenant_id = ${tenantId} and id = ${sessionId}
      union all
      select s.id, s.child_session_id, l.depth + 1
      from sessions s join lineage l on s.tenant_id = ${tenantId} and s.id = l.child
      where l.depth < 1000
    )
    select id from lineage order by depth desc limit 1`);
  const live = rows[0]?.id;
  if (!live) throw new SessionNotFoundError(tenantId, sessionId);
  return live;
}
