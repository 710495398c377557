/**
 * The dashboard's reads of Postgres, every one scoped by tenant. Lists use keyset pagination
 * (`where key > last key of the previous page`, never OFFSET) with opaque cursors, and fetch one
 * row more than asked to know whether another page follows.
 */

import type { Db } from '../../../producer/postgres/db.ts';
import { ledgerTenant } from '../../../producer/postgres/ledger-tenant.ts';
import { and, asc, desc, eq, getTableColumns, gt, inArray, ne, sql } from '../../../producer/postgres/orm.ts';
import {
  archivedMessages,
  type CompactionRow,
  compactions,
  messages,
  type SessionRow,
  sessions,
} from '../../../producer/postgres/schema.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';

/** One page of a list and the cursor of the next (null on the last page). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** The latest ledger row of a session, as the session list shows it. */
export interface LastCompaction {
  id: string;
  status: CompactionRow['status'];
  trigger: CompactionRow['trigger'];
  strategy: string;
  tokensBefore: number | null;
  tokensAfter: number | null;
  createdAt: Date;
}

/** A session in the list: its size and its last compaction. */
export type SessionListItem = Pick<
  SessionRow,
  | 'id'
  | 'agentId'
  | 'messageCount'
  | 'tokenCount'
  | 'contextWindow'
  | 'compactionCount'
  | 'lastCompactedAt'
  | 'parentSessionId'
  | 'childSessionId'
  | 'createdAt'
  | 'updatedAt'
> & { lastCompaction: LastCompaction | null };

/** A ledger row without the summary text and the previous checkpoint (both session content). */
export type LedgerEntry = Omit<CompactionRow, 'summary' | 'checkpointBefore' | 'measuredEventIds'>;

/** One archived message: metadata always, `content` only when asked for. */
export interface ArchivedMessage {
  seq: number;
  role: string;
  kind: string;
  toolName: string | null;
  toolCallId: string | null;
  tokenCount: number;
  pinned: boolean;
  createdAt: Date;
  content?: string;
  /** The content's first characters, when a preview was asked for. */
  preview?: string;
  /** The content's length in characters, with a preview. */
  chars?: number;
}

/** Thrown for a cursor this API did not hand out. */
export class BadCursorError extends InvalidInputError {
  override name = 'BadCursorError';
}

/** Encodes a cursor (opaque to clients). */
export function encodeCursor(key: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor whose fields are all in `fields`, of the given types.
 * @throws {BadCursorError} when it is not one this API returned.
 */
export function decodeCursor<K extends string>(
  cursor: string,
  fields: Record<K, 'string' | 'number'>,
): Record<K, string & number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new BadCursorError('is not a cursor this API returned');
  }
  if (typeof parsed !== 'object' || parsed === null)
    throw new BadCursorError('is not a cursor this API returned');
  for (const [name, type] of Object.entries(fields)) {
    if (typeof (parsed as Record<string, unknown>)[name] !== type)
      throw new BadCursorError('is not a cursor this API returned');
  }
  return parsed as Record<K, string & number>;
}

/** A tenant's sessions in id order, `limit` per page, each with its latest ledger row. */
export async function listSessions(
  db: Db,
  tenantId: string,
  page: { limit: number; cursor?: string | undefined },
): Promise<Page<SessionListItem>> {
  const after = page.cursor ? decodeCursor(page.cursor, { id: 'string' }).id : undefined;
  const rows = await db
    .select({
      id: sessions.id,
      agentId: sessions.agentId,
      messageCount: sessions.messageCount,
      tokenCount: sessions.tokenCount,
      contextWindow: sessions.contextWindow,
      compactionCount: sessions.compactionCount,
      lastCompactedAt: sessions.lastCompactedAt,
      parentSessionId: sessions.parentSessionId,
      childSessionId: sessions.childSessionId,
      createdAt: sessions.createdAt,
      updatedAt: sessions.updatedAt,
    })
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), after === undefined ? undefined : gt(sessions.id, after)))
    .orderBy(asc(sessions.id))
    .limit(page.limit + 1);
  const items = rows.slice(0, page.limit);
  const last = await lastCompactions(
    db,
    tenantId,
    items.map((s) => s.id),
  );
  const next = rows.length > page.limit ? items[items.length - 1] : undefined;
  return {
    items: items.map((s) => ({ ...s, lastCompaction: last.get(s.id) ?? null })),
    nextCursor: next ? encodeCursor({ id: next.id }) : null,
  };
}

async function lastCompactions(
  db: Db,
  tenantId: string,
  ids: string[],
): Promise<Map<string, LastCompaction>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectDistinctOn([compactions.sessionId], {
      sessionId: compactions.sessionId,
      id: compactions.id,
      status: compactions.status,
      trigger: compactions.trigger,
      strategy: compactions.strategy,
      tokensBefore: compactions.tokensBefore,
      tokensAfter: compactions.tokensAfter,
      createdAt: compactions.createdAt,
    })
    .from(compactions)
    // A retention pass (`expired`) is no compaction: the list shows the last one that was.
    .where(
      and(
        eq(compactions.tenantId, tenantId),
        inArray(compactions.sessionId, ids),
        ne(compactions.status, 'expired'),
      ),
    )
    .orderBy(compactions.sessionId, desc(compactions.createdAt), desc(compactions.id));
  return new Map(rows.map(({ sessionId, ...row }) => [sessionId, row]));
}

/** The tenant's session, or null (unknown, or another tenant's: the caller cannot tell). */
export async function getSession(db: Db, tenantId: string, sessionId: string): Promise<SessionRow | null> {
  const [row] = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
  return row ?? null;
}

// The measured payback's list of counted event ids is bookkeeping (up to 200 ids a row), not news.
const {
  summary: _summary,
  checkpointBefore: _checkpointBefore,
  measuredEventIds: _measuredEventIds,
  ...ledgerColumns
} = getTableColumns(compactions);

/** A session's ledger, newest first, `limit` per page. */
export async function listLedger(
  db: Db,
  tenantId: string,
  sessionId: string,
  page: { limit: number; cursor?: string | undefined },
): Promise<Page<LedgerEntry>> {
  const after = page.cursor ? decodeCursor(page.cursor, { createdAt: 'string', id: 'string' }) : undefined;
  const rows = await db
    .select({ ...ledgerColumns, key: sql<string>`${compactions.createdAt}::text` })
    .from(compactions)
    .where(
      and(
        eq(compactions.tenantId, ledgerTenant(tenantId)),
        eq(compactions.sessionId, sessionId),
        after
          ? sql`(${compactions.createdAt}, ${compactions.id}) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`
          : undefined,
      ),
    )
    .orderBy(desc(compactions.createdAt), desc(compactions.id))
    .limit(page.limit + 1);
  const items = rows.slice(0, page.limit);
  const next = rows.length > page.limit ? items[items.length - 1] : undefined;
  return {
    items: items.map(({ key: _key, ...row }) => row),
    nextCursor: next ? encodeCursor({ createdAt: next.key, id: next.id }) : null,
  };
}

/** One compaction of the tenant's session, or null. */
export async function getCompaction(
  db: Db,
  tenantId: string,
  sessionId: string,
  compactionId: string,
): Promise<CompactionRow | null> {
  const [row] = await db
    .select()
    .from(compactions)
    .where(
      and(
        eq(compactions.id, compactionId),
        eq(compactions.tenantId, tenantId),
        eq(compactions.sessionId, sessionId),
      ),
    );
  return row ?? null;
}

/**
 * The messages a compaction archived, by seq, `limit` per page; `content` only when asked for, or
 * its first `preview` characters (cut by Postgres: a page of 100KB tool outputs stays small).
 */
export async function listArchived(
  db: Db,
  row: Pick<CompactionRow, 'id' | 'tenantId' | 'sessionId'>,
  page: { limit: number; cursor?: string | undefined; content: boolean; preview?: number | undefined },
): Promise<Page<ArchivedMessage> & { totalMessages: number; totalTokens: number }> {
  const after = page.cursor ? decodeCursor(page.cursor, { seq: 'number' }).seq : undefined;
  const scope = and(
    eq(archivedMessages.compactionId, row.id),
    eq(archivedMessages.tenantId, row.tenantId),
    eq(archivedMessages.sessionId, row.sessionId),
  );
  const rows = await db
    .select({
      seq: archivedMessages.seq,
      role: archivedMessages.role,
      kind: archivedMessages.kind,
      toolName: archivedMessages.toolName,
      toolCallId: archivedMessages.toolCallId,
      tokenCount: archivedMessages.tokenCount,
      pinned: archivedMessages.pinned,
      createdAt: archivedMessages.createdAt,
      ...(page.content ? { content: archivedMessages.content } : {}),
      ...(page.preview === undefined
        ? {}
        : {
            preview: sql<string>`left(${archivedMessages.content}, ${page.preview})`,
            chars: sql<number>`char_length(${archivedMessages.content})`,
          }),
    })
    .from(archivedMessages)
    .where(and(scope, after === undefined ? undefined : gt(archivedMessages.seq, after)))
    .orderBy(asc(archivedMessages.seq))
    .limit(page.limit + 1);
  const [totals] = await db
    .select({
      messages: sql<number>`count(*)::int`,
      tokens: sql<string>`coalesce(sum(${archivedMessages.tokenCount}), 0)::bigint`,
    })
    .from(archivedMessages)
    .where(scope);
  const items = rows.slice(0, page.limit);
  const next = rows.length > page.limit ? items[items.length - 1] : undefined;
  return {
    items,
    nextCursor: next ? encodeCursor({ seq: next.seq }) : null,
    totalMessages: Number(totals?.messages ?? 0),
    totalTokens: Number(totals?.tokens ?? 0),
  };
}

/** A live message as the session page lists it: metadata and a preview of its content. */
export interface LiveMessage {
  seq: number;
  role: string;
  kind: string;
  toolName: string | null;
  tokenCount: number;
  pinned: boolean;
  createdAt: Date;
  /** The content's first characters. */
  preview: string;
  /** The content's length in characters. */
  chars: number;
}

/** The session's live messages now: the last ones, and the totals over all of them. */
export interface LiveContext {
  /** The last `last` messages, by seq. */
  messages: LiveMessage[];
  totalMessages: number;
  totalTokens: number;
}

/**
 * The session's live history as stored: its last `last` messages (a backward scan of the primary
 * key, however long the session) with `preview` characters of content each, and the count and
 * token sum of all of them, read from the rows themselves rather than the session's counters.
 */
export async function liveContext(
  db: Db,
  tenantId: string,
  sessionId: string,
  options: { last: number; preview: number },
): Promise<LiveContext> {
  const scope = and(eq(messages.tenantId, tenantId), eq(messages.sessionId, sessionId));
  const [rows, [totals]] = await Promise.all([
    db
      .select({
        seq: messages.seq,
        role: messages.role,
        kind: messages.kind,
        toolName: messages.toolName,
        tokenCount: messages.tokenCount,
        pinned: messages.pinned,
        createdAt: messages.createdAt,
        preview: sql<string>`left(${messages.content}, ${options.preview})`,
        chars: sql<number>`char_length(${messages.content})`,
      })
      .from(messages)
      .where(scope)
      .orderBy(desc(messages.seq))
      .limit(options.last),
    db
      .select({
        messages: sql<number>`count(*)::int`,
        tokens: sql<string>`coalesce(sum(${messages.tokenCount}), 0)::bigint`,
      })
      .from(messages)
      .where(scope),
  ]);
  return {
    messages: rows.reverse(),
    totalMessages: Number(totals?.messages ?? 0),
    totalTokens: Number(totals?.tokens ?? 0),
  };
}

/** One tenant's totals on the landing page. */
export interface TenantTotals {
  tenantId: string;
  sessions: number;
  /** Live messages and tokens, from the sessions' counters. */
  messages: number;
  tokens: number;
  /** Ledger rows that changed a session: applied (and since restored). */
  compactions: number;
  failures: number;
  costUsd: number;
}

/**
 * Each tenant's totals, the biggest (by live tokens) first, `limit` of them; or one tenant's.
 * Two grouped scans joined per tenant: sizes from the sessions' counters, never from the messages.
 */
export async function tenantTotals(
  db: Db,
  options: { tenantId?: string | undefined; limit: number },
): Promise<TenantTotals[]> {
  const onlyS = options.tenantId === undefined ? sql`` : sql`where tenant_id = ${options.tenantId}`;
  const rows = await db.execute<{
    tenant_id: string;
    sessions: number;
    messages: string;
    tokens: string;
    compactions: number;
    failures: number;
    cost_usd: number;
  }>(sql`
    with s as (
      select tenant_id, count(*)::int as sessions, coalesce(sum(message_count), 0)::bigint as messages,
             coalesce(sum(token_count), 0)::bigint as tokens
      from sessions ${onlyS} group by tenant_id
    ), c as (
      select tenant_id,
             (count(*) filter (where status in ('applied', 'restored')))::int as compactions,
             (count(*) filter (where status = 'failed'))::int as failures,
             coalesce(sum(cost_usd), 0)::float8 as cost_usd
      from compactions ${onlyS} group by tenant_id
    )
    select coalesce(s.tenant_id, c.tenant_id) as tenant_id, coalesce(s.sessions, 0) as sessions,
           coalesce(s.messages, 0) as messages, coalesce(s.tokens, 0) as tokens,
           coalesce(c.compactions, 0) as compactions, coalesce(c.failures, 0) as failures,
           coalesce(c.cost_usd, 0) as cost_usd
    from s full join c on c.tenant_id = s.tenant_id
    order by coalesce(s.tokens, 0) desc, 1
    limit ${options.limit}`);
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    sessions: r.sessions,
    messages: Number(r.messages),
    tokens: Number(r.tokens),
    compactions: r.compactions,
    failures: r.failures,
    costUsd: r.cost_usd,
  }));
}

/** A session in a landing page's list. */
export type RankedSession = Pick<
  SessionRow,
  'tenantId' | 'id' | 'agentId' | 'messageCount' | 'tokenCount' | 'compactionCount' | 'lastCompactedAt'
>;

/** The biggest sessions by live tokens, of every tenant or of one, `limit` of them. */
export async function biggestSessions(
  db: Db,
  options: { tenantId?: string | undefined; limit: number },
): Promise<RankedSession[]> {
  return db
    .select({
      tenantId: sessions.tenantId,
      id: sessions.id,
      agentId: sessions.agentId,
      messageCount: sessions.messageCount,
      tokenCount: sessions.tokenCount,
      compactionCount: sessions.compactionCount,
      lastCompactedAt: sessions.lastCompactedAt,
    })
    .from(sessions)
    .where(options.tenantId === undefined ? undefined : eq(sessions.tenantId, options.tenantId))
    .orderBy(desc(sessions.tokenCount), asc(sessions.tenantId), asc(sessions.id))
    .limit(options.limit);
}

/** A session whose compactions failed recently. */
export interface FailingSession {
  tenantId: string;
  sessionId: string;
  /** Failed ledger rows since the window's start. */
  failures: number;
  lastFailedAt: Date;
  /** The latest failed row: its id (for its page) and error. */
  lastFailureId: string;
  lastError: string | null;
}

/**
 * Sessions with `failed` ledger rows since `since`, the most recently failing first, `limit` of
 * them, of every tenant or of one: one grouped read of the ledger's failed rows.
 */
export async function failingSessions(
  db: Db,
  options: { tenantId?: string | undefined; since: Date; limit: number },
): Promise<FailingSession[]> {
  const tenant = options.tenantId === undefined ? sql`` : sql`and tenant_id = ${options.tenantId}`;
  const rows = await db.execute<{
    tenant_id: string;
    session_id: string;
    failures: number;
    last_failed_ms: number;
    last_failure_id: string;
    last_error: string | null;
  }>(sql`
    select tenant_id, session_id, count(*)::int as failures,
           floor(extract(epoch from max(created_at)) * 1000)::float8 as last_failed_ms,
           (array_agg(id order by created_at desc))[1]::text as last_failure_id,
           (array_agg(error order by created_at desc))[1] as last_error
    from compactions
    where status = 'failed' and created_at >= ${options.since.toISOString()}::timestamptz ${tenant}
    group by tenant_id, session_id
    order by max(created_at) desc, tenant_id, session_id
    limit ${options.limit}`);
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    sessionId: r.session_id,
    failures: r.failures,
    lastFailedAt: new Date(r.last_failed_ms),
    lastFailureId: r.last_failure_id,
    lastError: r.last_error,
  }));
}
