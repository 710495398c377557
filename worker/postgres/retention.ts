/**
 * Retention in Postgres: drops a session's archived originals older than its policy's cutoff, in
 * bounded batches, and records what went in the ledger as one `expired` row per session per
 * retention pass (count, tokens, the compactions whose originals went, the cutoff). Each batch is
 * one transaction under the session row lock, so the ledger row always matches what is gone (a
 * crash between batches leaves a row counting the batches that committed), and a restore, which
 * takes the same lock, sees either all of a compaction's originals or the `expired` row naming it.
 *
 * Archived system messages are kept whatever their age: the agent's context restates them
 * (producer/context.ts), so dropping one would change what the agent is told.
 */

import type { Db, Tx } from '../../producer/postgres/db.ts';
import { ledgerTenant } from '../../producer/postgres/ledger-tenant.ts';
import { sql } from '../../producer/postgres/orm.ts';
import { type ExpiryRecord, expiryReason, retentionLabel } from '../../shared/policy/retention.ts';

/** What a retention pass dropped (or, on a dry run, would drop) from one session. */
export interface ExpiredTotals {
  /** Archived messages. */
  messages: number;
  /** Their estimated tokens. */
  tokens: number;
  /** The compactions whose archived originals went, ascending. */
  compactionIds: string[];
}

/** One session's retention, as {@link expireArchivedOriginals} runs it. */
export interface ExpireRequest {
  tenantId: string;
  sessionId: string;
  /** The policy's retention, days (for the ledger row's strategy and reason). */
  retentionDays: number;
  /** Messages archived before this instant are dropped (`retentionCutoff`). */
  before: Date;
  /** Most archived rows deleted per transaction. Default 1,000. */
  batchSize?: number;
  /** The id the session's `expired` ledger row gets (one per session per pass). */
  ledgerRowId: string;
}

/** Tenants with a policy (their own or an agent's) that sets `retentionDays`, in id order. */
export async function tenantsWithRetention(db: Db): Promise<string[]> {
  const rows = await db.execute<{ tenant_id: string }>(sql`
    select distinct tenant_id from compaction_policies
    where policy -> 'retentionDays' is not null and jsonb_typeof(policy -> 'retentionDays') = 'number'
    order by tenant_id`);
  return rows.map((r) => r.tenant_id);
}

/** A session as the retention pass reads it. */
export interface RetentionSession {
  id: string;
  agentId: string | null;
}

/**
 * Every session of one tenant, continued ones included (their archives age too), a page of at most
 * `pageSize` at a time, in id order (keyset over the primary key, never OFFSET).
 */
export async function* tenantSessionPages(
  db: Db,
  tenantId: string,
  pageSize: number,
): AsyncGenerator<RetentionSession[]> {
  let after: string | null = null;
  for (;;) {
    const rows: Array<{ id: string; agent_id: string | null }> = await db.execute(sql`
      select id, agent_id from sessions
      where tenant_id = ${tenantId} ${after === null ? sql`` : sql`and id > ${after}`}
      order by id
      limit ${pageSize}`);
    if (rows.length === 0) return;
    yield rows.map((r) => ({ id: r.id, agentId: r.agent_id }));
    after = (rows[rows.length - 1] as { id: string }).id;
    if (rows.length < pageSize) return;
  }
}

/** The archived rows of a session a retention pass may drop: older than `before`, not system. */
function expirable(tenantId: string, sessionId: string, before: Date) {
  return sql`tenant_id = ${tenantId} and session_id = ${sessionId}
    and archived_at < ${before.toISOString()}::timestamptz and role <> 'system'`;
}

/**
 * What {@link expireArchivedOriginals} would drop from the session now, without a lock or a write
 * (a dry run).
 */
export async function expirableTotals(
  db: Db,
  tenantId: string,
  sessionId: string,
  before: Date,
): Promise<ExpiredTotals> {
  const [row] = await db.execute<{ messages: number; tokens: string; ids: string[] }>(sql`
    select count(*)::int as messages, coalesce(sum(token_count), 0)::bigint as tokens,
      coalesce(array_agg(distinct compaction_id order by compaction_id)::text[], '{}') as ids
    from archived_messages where ${expirable(tenantId, sessionId, before)}`);
  return { messages: row?.messages ?? 0, tokens: Number(row?.tokens ?? 0), compactionIds: row?.ids ?? [] };
}

/**
 * Drops the session's archived originals from before `request.before`, `batchSize` rows per
 * transaction, each under the session row lock, and records them in one `expired` ledger row
 * (`request.ledgerRowId`), created by the first batch that drops something and added to by the
 * next ones. A session with nothing to drop costs one index probe, no lock and no ledger row.
 * @returns what was dropped (all zero and no row when nothing was due, or the session is gone).
 */
export async function expireArchivedOriginals(db: Db, request: ExpireRequest): Promise<ExpiredTotals> {
  const { tenantId, sessionId, before } = request;
  const batchSize = request.batchSize ?? 1_000;
  const total: ExpiredTotals = { messages: 0, tokens: 0, compactionIds: [] };
  const [probe] = await db.execute<{ due: boolean }>(sql`
    select exists (select 1 from archived_messages where ${expirable(tenantId, sessionId, before)}) as due`);
  if (!probe?.due) return total;
  const ids = new Set<string>();
  for (;;) {
    const batch = await db.transaction((tx) => expireBatch(tx, request, batchSize));
    if (batch === null) break;
    total.messages += batch.messages;
    total.tokens += batch.tokens;
    for (const id of batch.compactionIds) ids.add(id);
    if (batch.messages < batchSize) break;
  }
  total.compactionIds = [...ids].sort();
  return total;
}

/** One batch: lock, delete at most `batchSize` rows, add them to the ledger row. Null: no session. */
async function expireBatch(tx: Tx, request: ExpireRequest, batchSize: number): Promise<ExpiredTotals | null> {
  const { tenantId, sessionId, before, retentionDays } = request;
  const locked = await tx.execute(sql`
    select 1 from sessions where tenant_id = ${tenantId} and id = ${sessionId} for update`);
  if (locked.length === 0) return null;
  const [row] = await tx.execute<{ messages: number; tokens: string; ids: string[] }>(sql`
    with doomed as (
      select compaction_id, seq from archived_messages
      where ${expirable(tenantId, sessionId, before)}
      order by archived_at, compaction_id, seq
      limit ${batchSize}
    ), gone as (
      delete from archived_messages a using doomed d
      where a.tenant_id = ${tenantId} and a.compaction_id = d.compaction_id and a.seq = d.seq
      returning a.compaction_id, a.token_count
    ), batch as (
      select count(*)::int as messages, coalesce(sum(token_count), 0)::bigint as tokens,
        coalesce(array_agg(distinct compaction_id order by compaction_id), '{}'::uuid[]) as ids
      from gone
    ), ledger as (
      insert into compactions (id, tenant_id, session_id, trigger, strategy, status, reason,
        expired_messages, expired_tokens, expired_compaction_ids, expired_before)
      select ${request.ledgerRowId}::uuid, ${tenantId}, ${sessionId}, 'sweep', ${retentionLabel(retentionDays)},
        'expired', ${expiryReason(retentionDays, before)}, messages, tokens, ids, ${before.toISOString()}::timestamptz
      from batch where messages > 0
      on conflict (tenant_id, id) do update set
        expired_messages = compactions.expired_messages + excluded.expired_messages,
        expired_tokens = compactions.expired_tokens + excluded.expired_tokens,
        expired_compaction_ids = array(
          select distinct u from unnest(compactions.expired_compaction_ids || excluded.expired_compaction_ids) u
          order by u)
      returning 1
    )
    select messages, tokens, ids::text[] as ids from batch`);
  return { messages: row?.messages ?? 0, tokens: Number(row?.tokens ?? 0), compactionIds: row?.ids ?? [] };
}

/**
 * The latest `expired` ledger row of the session that names `compactionId` among the compactions
 * whose originals went, or null when none does.
 */
export async function expiryOf(
  db: Db | Tx,
  tenantId: string,
  sessionId: string,
  compactionId: string,
): Promise<ExpiryRecord | null> {
  const [row] = await db.execute<{ id: string; created_at: string | Date; reason: string | null }>(sql`
    select id, created_at, reason from compactions
    where tenant_id = ${ledgerTenant(tenantId)} and session_id = ${sessionId} and status = 'expired'
      and ${compactionId}::uuid = any(expired_compaction_ids)
    order by created_at desc
    limit 1`);
  if (!row) return null;
  return { id: row.id, createdAt: new Date(row.created_at), reason: row.reason };
}
