/**
 * The statements of the client's writes on `sessions` (producer/sessions.ts, producer/tools.ts
 * hold the rules around them). Every statement is scoped by tenant.
 */
import type { ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { SessionFormat } from '../../shared/contract/session-format.ts';
import type { SessionLimits } from '../../shared/policy/limits.ts';
import type { Db, Tx } from './db.ts';
import { and, eq, isNull, sql } from './orm.ts';
import { sessions } from './schema.ts';
import { limitSql } from './session-limits.ts';

/**
 * Inserts a session row unless the tenant has one with that id.
 * @returns whether it was inserted (false: the session exists, nothing was written).
 */
export async function insertSession(tx: Tx, session: typeof sessions.$inferInsert): Promise<boolean> {
  const created = await tx
    .insert(sessions)
    .values(session)
    .onConflictDoNothing()
    .returning({ id: sessions.id });
  return created.length > 0;
}

/**
 * Counts an append into the session row (its `last_seq`, message and token counters, `updated_at`)
 * if the session is live and stays within its tenant's size limits and its read limit
 * `maxContextTokens` (`defaults` where its policy sets none), in one statement: the row lock it takes orders concurrent appends, and each checks
 * the limits on the counts the one before it left.
 * @returns the session's new `last_seq` and its format; undefined when no row changed (no such session, a session
 *   continued in a child, or a limit it would pass).
 */
export async function countAppendIn(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  adding: { messages: number; tokens: number },
  defaults: SessionLimits,
): Promise<{ lastSeq: number; format: SessionFormat } | undefined> {
  const [row] = await tx
    .update(sessions)
    .set({
      lastSeq: sql`${sessions.lastSeq} + ${adding.messages}`,
      messageCount: sql`${sessions.messageCount} + ${adding.messages}`,
      tokenCount: sql`${sessions.tokenCount} + ${adding.tokens}`,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(sessions.tenantId, tenantId),
        eq(sessions.id, sessionId),
        isNull(sessions.childSessionId),
        sql`${sessions.messageCount} + ${adding.messages} <= ${limitSql(tenantId, 'maxSessionMessages', defaults.maxSessionMessages)}`,
        sql`${sessions.tokenCount} + ${adding.tokens} <= ${limitSql(tenantId, 'maxSessionTokens', defaults.maxSessionTokens)}`,
        // Never past what a read returns (shared/policy/limits.ts).
        sql`${sessions.tokenCount} + ${adding.tokens} <= ${limitSql(tenantId, 'maxContextTokens', defaults.maxContextTokens)}`,
      ),
    )
    .returning({ lastSeq: sessions.lastSeq, format: sessions.format });
  return row;
}

/** The session's child (null while it is live) and its message and token counts; undefined if the tenant has no such session. */
export async function sessionCounts(
  tx: Tx,
  tenantId: string,
  sessionId: string,
): Promise<{ child: string | null; messages: number; tokens: number } | undefined> {
  const [found] = await tx
    .select({
      child: sessions.childSessionId,
      messages: sessions.messageCount,
      tokens: sessions.tokenCount,
    })
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
  return found;
}

/** The session's format (`sessions.format`); undefined when the tenant has no such session. */
export async function sessionFormatOf(
  db: Pick<Db, 'select'>,
  tenantId: string,
  sessionId: string,
): Promise<SessionFormat | undefined> {
  const [found] = await db
    .select({ format: sessions.format })
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
  return found?.format;
}

/**
 * Sets the session's declared tools (null clears them).
 * @returns whether the tenant has the session (false: nothing was written).
 */
export async function updateSessionTools(
  db: Db,
  tenantId: string,
  sessionId: string,
  tools: ToolUnion[] | null,
): Promise<boolean> {
  const updated = await db
    .update(sessions)
    .set({ tools, updatedAt: new Date() })
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)))
    .returning({ id: sessions.id });
  return updated.length > 0;
}

/**
 * The newest session of `sessionId`'s lineage: follows `child_session_id` (at most 1,000 hops) in
 * one recursive query.
 * @returns its id (`sessionId` itself when it never continued in a child); undefined if the tenant
 *   has no such session.
 */
export async function newestOfLineage(
  db: Pick<Db, 'execute'>,
  tenantId: string,
  sessionId: string,
): Promise<string | undefined> {
  const rows = await db.execute<{ id: string }>(sql`
    with recursive lineage(id, child, depth) as (
      select id, child_session_id, 0 from sessions where tenant_id = ${tenantId} and id = ${sessionId}
      union all
      select s.id, s.child_session_id, l.depth + 1
      from sessions s join lineage l on s.tenant_id = ${tenantId} and s.id = l.child
      where l.depth < 1000
    )
    select id from lineage order by depth desc limit 1`);
  return rows[0]?.id;
}
