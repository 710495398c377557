/**
 * Deletion, for a user's "delete my data" request: removes sessions with everything compactor holds
 * of them — live and archived messages, ledger rows, batch rows, the idempotency keys of appends,
 * the log of webhook deliveries that told of their compactions, the transcript lines the Claude Agent
 * SDK's session store kept — in one transaction. A session is purged with its whole lineage (the sessions it continued from
 * and in, after `newSession` compactions), since each holds copies of the same conversation.
 */

import type { Db } from '../../producer/postgres/db.ts';
import { sql } from '../../producer/postgres/orm.ts';
import { InvalidInputError, SessionNotFoundError } from '../../shared/contract/errors.ts';

/** What to purge: a session (and its lineage), or every session of the tenant. */
export interface PurgeRequest {
  tenantId: string;
  /** Absent: every session of the tenant. */
  sessionId?: string;
}

/** Rows deleted, per table. */
export interface PurgeResult {
  sessions: string[];
  messages: number;
  archivedMessages: number;
  compactions: number;
  summaryBatches: number;
  /** Idempotency keys of the HTTP API's appends to these sessions. */
  appendRequests: number;
  /** Webhook delivery attempts of these sessions' compactions. */
  webhookDeliveries: number;
  /** Transcript lines the Claude Agent SDK's session store kept of these sessions. */
  claudeCodeEntries: number;
}

/**
 * Purges one session's lineage, or a whole tenant. Locks the session rows first, so a compaction
 * applying at the same moment either finishes before (and its rows go too) or finds no session.
 * @throws {SessionNotFoundError} when a session is named and the tenant has no such session.
 * @throws {InvalidInputError} when the tenant id is empty.
 */
export async function purgeSessions(db: Db, request: PurgeRequest): Promise<PurgeResult> {
  const { tenantId, sessionId } = request;
  if (tenantId === '') throw new InvalidInputError('tenant id: must not be empty');
  return db.transaction(async (tx) => {
    const targets = sessionId === undefined ? sql`true` : sql`id in (select id from lineage)`;
    const locked = await tx.execute<{ id: string }>(sql`
      with recursive up(id, parent, depth) as (
        select id, parent_session_id, 0 from sessions where tenant_id = ${tenantId} and id = ${sessionId ?? null}
        union all
        select s.id, s.parent_session_id, u.depth + 1
        from sessions s join up u on s.tenant_id = ${tenantId} and s.id = u.parent where u.depth < 1000
      ), root as (
        select id from up order by depth desc limit 1
      ), lineage(id, depth) as (
        select id, 0 from root
        union all
        select s.id, l.depth + 1
        from sessions s join lineage l on s.tenant_id = ${tenantId} and s.parent_session_id = l.id
        where l.depth < 1000
      )
      select id from sessions where tenant_id = ${tenantId} and ${targets} order by id for update`);
    const ids = locked.map((r) => r.id);
    if (sessionId !== undefined && ids.length === 0) throw new SessionNotFoundError(tenantId, sessionId);
    const count = async (table: string) => {
      const [row] = await tx.execute<{ n: number }>(sql`
        with gone as (
          delete from ${sql.identifier(table)}
          where tenant_id = ${tenantId} and session_id = any(${`{${ids.map(quote).join(',')}}`}::text[])
          returning 1
        ) select count(*)::int as n from gone`);
      return row?.n ?? 0;
    };
    const idList = `{${ids.map(quote).join(',')}}`;
    const [deliveries] = await tx.execute<{ n: number }>(sql`
      with gone as (
        delete from webhook_deliveries
        where tenant_id = ${tenantId} and event_id in (
          select id from compactions where tenant_id = ${tenantId} and session_id = any(${idList}::text[]))
        returning 1
      ) select count(*)::int as n from gone`);
    const result = {
      sessions: ids,
      messages: await count('messages'),
      archivedMessages: await count('archived_messages'),
      compactions: await count('compactions'),
      summaryBatches: await count('summary_batches'),
      appendRequests: await count('append_requests'),
      webhookDeliveries: deliveries?.n ?? 0,
      claudeCodeEntries: await count('claude_code_entries'),
    };
    await tx.execute(sql`
      delete from sessions where tenant_id = ${tenantId}
        and id = any(${`{${ids.map(quote).join(',')}}`}::text[])`);
    return result;
  });
}

/** An element of a text[] literal, quoted so commas, quotes and backslashes in ids stay inside it. */
function quote(id: string): string {
  return `"${id.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
