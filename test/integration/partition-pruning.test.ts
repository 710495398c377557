/**
 * The hot path reads one partition of the history. `messages` and `archived_messages` are hash-
 * partitioned by tenant; this file runs the real code (append, `loadContext`, the pipeline's gate,
 * snapshot and message reads, the apply that archives, rewrites in place and writes the summary,
 * a restore) on a connection that records every statement it sends, then asks Postgres to
 * `EXPLAIN` each recorded statement that touches the history, with the parameters it was sent
 * with, and checks that the plan scans exactly one partition of each table: the tenant's own.
 *
 * Each statement is explained twice: as sent (the parameters known while planning, as for the
 * first executions of a prepared statement), and as a generic plan (`PREPARE` + `EXPLAIN EXECUTE`
 * under `plan_cache_mode = force_generic_plan`, what a prepared statement runs after its fifth
 * execution), where the pruning happens when the executor starts and the plan reports the rest
 * as `Subplans Removed`. A query changed into one that no longer names the tenant where it reads
 * the history (a join on a column instead, say) fails here. The ledger lookups of the leaving read,
 * the row lock and `loadContext` are planned here too, under statistics that saw none of the
 * tenant's ledger rows.
 */

import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendMessages, createSession, loadContext } from '../../producer/index.ts';
import type { Database } from '../../producer/postgres/db.ts';
import { connectionOptions } from '../../producer/postgres/db.ts';
import { drizzle } from '../../producer/postgres/orm.ts';
import * as schema from '../../producer/postgres/schema.ts';
import { DEFAULT_HISTORY_PARTITIONS } from '../../worker/config/partitions.ts';
import { listLedger } from '../../worker/postgres/queries/dashboard.ts';
import { PostgresReads } from '../../worker/postgres/reads.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { expiryOf } from '../../worker/postgres/retention.ts';
import { PostgresWrites } from '../../worker/postgres/writes.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { patient } from '../support/patience.ts';

const ctx = useIntegration();

/** A statement as the code sent it. */
interface Sent {
  query: string;
  params: unknown[];
}

/** A connection pool like `openDatabase`'s, recording every statement sent while `recording`. */
function recordingDatabase(url: string): Database & { sent: Sent[]; recording: boolean } {
  const out = { sent: [] as Sent[], recording: false };
  const sql = postgres(url, {
    max: 3,
    ...connectionOptions(),
    debug: (_connection, query, params) => {
      if (out.recording) out.sent.push({ query, params: [...params] });
    },
  });
  const db = drizzle(sql, { schema });
  return Object.assign(out, { db, sql, close: () => sql.end({ timeout: 5 }) });
}

/** A plan node of `EXPLAIN (FORMAT JSON)`, the fields read here. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Subplans Removed'?: number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** What a plan does with the history: the partitions it scans, by table, and what it prunes. */
interface HistoryAccess {
  /** Partitions scanned, per partitioned table (`messages` → `['messages_p3']`). */
  scanned: Record<string, string[]>;
  /**
   * Partitioned tables the statement writes (the insert, update or delete node names the parent;
   * an insert routes each new row to its partition as it goes).
   */
  written: string[];
  /** Sum of `Subplans Removed` over the plan (pruned when the executor started). */
  removed: number;
}

function historyAccess(plan: PlanNode): HistoryAccess {
  const out: HistoryAccess = { scanned: {}, written: [], removed: 0 };
  for (const node of nodesOf(plan)) {
    out.removed += node['Subplans Removed'] ?? 0;
    const relation = node['Relation Name'];
    if (!relation) continue;
    const partition = /^((?:archived_)?messages)_p\d+$/.exec(relation);
    if (partition?.[1]) {
      const list = out.scanned[partition[1]] ?? [];
      if (!list.includes(relation)) list.push(relation);
      out.scanned[partition[1]] = list;
    } else if (node['Node Type'] === 'ModifyTable' && /^(archived_)?messages$/.test(relation)) {
      out.written.push(relation);
    } else if (/^(archived_)?messages$/.test(relation)) {
      // The parent itself scanned: no pruning at all (a partitioned table is never scanned directly).
      out.scanned[relation] = [...(out.scanned[relation] ?? []), relation];
    }
  }
  return out;
}

/** Statements distinct by text, each with the first parameters it was sent with. */
function distinct(sent: readonly Sent[]): Sent[] {
  const seen = new Map<string, Sent>();
  for (const s of sent) if (!seen.has(s.query)) seen.set(s.query, s);
  return [...seen.values()];
}

/** Whether a statement's text reads or writes the history tables. */
const TOUCHES_HISTORY = /\b(archived_messages|messages)\b/;

/**
 * The plans of `sent` as sent (parameters known to the planner) and as a generic plan, in a
 * transaction rolled back (nothing runs: EXPLAIN without ANALYZE), after `before` ran in it.
 */
async function plansOf(
  sql: postgres.Sql,
  sent: Sent,
  before?: (conn: postgres.ReservedSql) => Promise<unknown>,
): Promise<{ custom: PlanNode; generic: PlanNode }> {
  const conn = await sql.reserve();
  try {
    await conn`begin`;
    await before?.(conn);
    const [custom] = await conn.unsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
      `explain (format json) ${sent.query}`,
      sent.params as postgres.ParameterOrJSON<never>[],
    );
    await conn`set local plan_cache_mode = force_generic_plan`;
    await conn.unsafe(`prepare compactor_pruning as ${sent.query}`);
    const [prepared] = await conn<{ types: string[] }[]>`
      select parameter_types::text[] as types from pg_prepared_statements where name = 'compactor_pruning'`;
    // EXECUTE's arguments are not typed when the EXPLAIN is parsed: pass them as literals, which
    // Postgres itself quotes from the values as sent.
    const literals: string[] = [];
    for (const [i, type] of (prepared?.types ?? []).entries()) {
      const [quoted] = await conn.unsafe<{ literal: string }[]>(
        `select quote_nullable($1::${type}) || '::${type}' as literal`,
        [sent.params[i]] as postgres.ParameterOrJSON<never>[],
      );
      literals.push(quoted?.literal ?? 'null');
    }
    const args = literals.length > 0 ? `(${literals.join(', ')})` : '';
    const [generic] = await conn.unsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
      `explain (format json) execute compactor_pruning${args}`,
    );
    if (!custom || !generic) throw new Error('EXPLAIN returned no plan');
    return { custom: custom['QUERY PLAN'][0].Plan, generic: generic['QUERY PLAN'][0].Plan };
  } finally {
    await conn`rollback`;
    // A prepared statement outlives the transaction.
    await conn`deallocate compactor_pruning`.catch(() => undefined);
    conn.release();
  }
}

const tenantId = 'acme';
const otherTenants = ['globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'tyrell'];
let recording: ReturnType<typeof recordingDatabase>;
/** The statements that touched the history, distinct by text, with the first parameters sent. */
let statements: Sent[];

beforeAll(async () => {
  const messages = await loadCorpusSession('minisweagent__pvlib-1854');
  // Other tenants' rows in other partitions (eight tenants over 16 partitions: several partitions hold rows).
  for (const other of otherTenants)
    await createSession(ctx.tdb.database.db, { tenantId: other, sessionId: 's', messages });
  await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'hot', messages });
  await ctx.tdb.database.sql`analyze`;

  recording = recordingDatabase(ctx.tdb.url);
  ctx.onTeardown(() => recording.close());
  const reads = new PostgresReads(recording.db);
  const writes = new PostgresWrites(recording.db, reads);
  const deps = { reads, writes };
  recording.recording = true;
  await appendMessages(recording.db, tenantId, 'hot', [
    { role: 'user', content: 'Now run the test suite again, please.' },
  ]);
  await loadContext(recording.db, { tenantId, sessionId: 'hot' });
  // Tool results cleared in place (archive the originals, rewrite the live rows), then a summary
  // (archive the leaving rows, write the summary), then a sliding window under the row lock.
  const cleared = await ctx.compactInProcess(
    {
      tenantId,
      sessionId: 'hot',
      strategy: {
        type: 'clearToolResults',
        keep: 5,
        clearAtLeast: 0,
        clearToolInputs: false,
        excludeTools: [],
      },
    },
    deps,
  );
  const summary = await ctx.compactInProcess(
    { tenantId, sessionId: 'hot', strategy: { type: 'summarize', keepRecent: 20, maxSummaryTokens: 2000 } },
    deps,
  );
  await ctx.compactInProcess(
    { tenantId, sessionId: 'hot', strategy: { type: 'slidingWindow', maxMessages: 10 } },
    deps,
  );
  await loadContext(recording.db, { tenantId, sessionId: 'hot' });
  recording.recording = false;
  expect([cleared.row?.status, summary.row?.status]).toEqual(['applied', 'applied']);

  statements = distinct(recording.sent).filter((s) => TOUCHES_HISTORY.test(s.query));
}, patient(60_000));

/** The partitions holding the tenant's rows, by table (`messages` → `['messages_p3']`). */
async function tenantPartitions(): Promise<Record<string, string[]>> {
  const [own] = await ctx.tdb.database.sql<{ messages: string; archived: string }[]>`
    select (select tableoid::regclass::text from messages where tenant_id = ${tenantId} limit 1) as messages,
           (select tableoid::regclass::text from archived_messages where tenant_id = ${tenantId} limit 1) as archived`;
  expect(own?.messages).toMatch(/^messages_p\d+$/);
  expect(own?.archived).toMatch(/^archived_messages_p\d+$/);
  return { messages: [own?.messages ?? '?'], archived_messages: [own?.archived ?? '?'] };
}

// Statistics taken while the ledger held another tenant's rows only, then this tenant's rows
// added unseen: every index that starts with tenant_id looks as cheap as the next.
async function staleStatistics(conn: postgres.ReservedSql): Promise<void> {
  await conn`delete from compactions`;
  await conn`
    insert into compactions (tenant_id, session_id, idempotency_key, trigger, strategy, status)
    select 'ledger-other', 'o' || g, 'o' || g, 'event', 'slidingWindow', 'skipped'
    from generate_series(1, 2000) g`;
  await conn`analyze compactions`;
  await conn`
    insert into compactions (tenant_id, session_id, idempotency_key, trigger, strategy, status)
    select ${tenantId}, 'many' || g, 'many' || g, 'event', 'slidingWindow', 'applied'
    from generate_series(1, 5000) g`;
}

/**
 * The indexes each plan of `sent` (as sent, then generic) reads `compactions` by, under
 * {@link staleStatistics}: one name per scan of the ledger, undefined for a scan of the table.
 */
async function ledgerIndexesOf(sent: Sent): Promise<(string | undefined)[][]> {
  const { custom, generic } = await plansOf(recording.sql, sent, staleStatistics);
  return [custom, generic].map((plan) =>
    nodesOf(plan)
      .filter((node) => node['Relation Name'] === 'compactions')
      .map((node) => node['Index Name']),
  );
}

/** A statement's text on one line, cut to `chars`, to name it in a failed assertion. */
const briefly = (sent: Sent, chars = 80) => sent.query.replace(/\s+/g, ' ').slice(0, chars);

describe('the hot path on a history partitioned by tenant', () => {
  it('partitions both tables by hash of tenant_id, into the default count', async () => {
    const rows = await ctx.tdb.database.sql<{ table: string; key: string; partitions: number }[]>`
      select c.relname as table, pg_get_partkeydef(c.oid) as key,
             (select count(*)::int from pg_inherits i where i.inhparent = c.oid) as partitions
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = current_schema() and c.relkind = 'p' order by 1`;
    expect(rows).toEqual([
      { table: 'archived_messages', key: 'HASH (tenant_id)', partitions: DEFAULT_HISTORY_PARTITIONS },
      { table: 'messages', key: 'HASH (tenant_id)', partitions: DEFAULT_HISTORY_PARTITIONS },
    ]);
  });

  it('ran every hot statement through the recording connection', () => {
    const texts = statements.map((s) => s.query);
    const has = (pattern: RegExp) => texts.some((t) => pattern.test(t));
    expect(has(/insert into "messages"/i), 'append').toBe(true);
    expect(has(/with recursive/i), 'loadContext').toBe(true);
    expect(has(/json_agg\(json_build_array\(m\.seq/), 'snapshot / lock with messages').toBe(true);
    expect(has(/\) as rewrites\s+from messages m/), 'leaving messages, none rewritten').toBe(true);
    expect(has(/with originals as/), 'leaving messages with originals').toBe(true);
    expect(has(/with moved as \(\s*delete from messages/), 'archive').toBe(true);
    expect(has(/originals as \(\s*insert into archived_messages/), 'rewrite in place').toBe(true);
  });

  it("scans only the tenant's partition, planned with the parameters and as a generic plan", async () => {
    const expected = await tenantPartitions();

    let scans = 0;
    let routedInserts = 0;
    for (const sent of statements) {
      const { custom, generic } = await plansOf(recording.sql, sent);
      for (const [kind, plan] of [
        ['custom', custom],
        ['generic', generic],
      ] as const) {
        const access = historyAccess(plan);
        const label = `${kind} plan of: ${briefly(sent, 160)}`;
        for (const [table, partitions] of Object.entries(access.scanned)) {
          expect(partitions, label).toEqual(expected[table]);
          scans += 1;
        }
        // A statement that writes new rows only (an append) reads no partition: each row goes to
        // its tenant's partition as it is inserted.
        if (Object.keys(access.scanned).length === 0) {
          expect(access.written.length, label).toBeGreaterThan(0);
          routedInserts += 1;
        }
        // In a generic plan, the tenant is a parameter: the other partitions go at executor start.
        if (kind === 'generic' && Object.keys(access.scanned).length > 0)
          expect(access.removed, label).toBeGreaterThan(0);
      }
    }
    expect(scans).toBeGreaterThan(statements.length);
    expect(routedInserts).toBeGreaterThan(0);
  });

  it('restores under the same rule: the archive is read by tenant and compaction', async () => {
    const [row] = await ctx.tdb.database.sql<{ id: string }[]>`
      select id from compactions where tenant_id = ${tenantId} and session_id = 'hot' and status = 'applied'
      order by compaction_version desc limit 1`;
    recording.sent.length = 0;
    recording.recording = true;
    const result = await restoreCompaction(recording.db, {
      tenantId,
      sessionId: 'hot',
      compactionId: row?.id ?? '',
    });
    recording.recording = false;
    expect(result.status).toBe('restored');
    const touching = recording.sent.filter((s) => TOUCHES_HISTORY.test(s.query));
    expect(touching.length).toBeGreaterThan(0);
    const expected = await tenantPartitions();
    for (const sent of touching) {
      const { custom, generic } = await plansOf(recording.sql, sent);
      for (const plan of [custom, generic])
        for (const [table, partitions] of Object.entries(historyAccess(plan).scanned))
          expect(partitions, `${table} in: ${briefly(sent, 160)}`).toEqual(expected[table]);
    }
  });

  it("reads the ledger for in-place rewrites by its own index, even when the statistics saw none of the tenant's rows", async () => {
    const sent = statements.find((s) => /\) as rewrites\s+from messages m/.test(s.query));
    if (!sent) throw new Error('the leaving read was not recorded');
    for (const indexes of await ledgerIndexesOf(sent)) expect(indexes).toEqual(['compactions_rewrites_idx']);
  });

  it("reads the ledger by session or key in the lock and loadContext, even when the statistics saw none of the tenant's rows", async () => {
    const lock = statements.find((s) => /key_used/.test(s.query) && /for update of s/.test(s.query));
    const context = statements.find((s) => /with recursive/.test(s.query));
    if (!lock || !context) throw new Error('the lock or loadContext was not recorded');
    // Each lookup reads by what it names (the key; the session; a compaction by its id): never
    // by the tenant alone, which here means all 5,000 of its ledger rows.
    const expected: [Sent, string[]][] = [
      [lock, ['compactions_tenant_idempotency_key_key']],
      [context, ['compactions_session_created_idx', 'compactions_tenant_id_id_pk']],
    ];
    for (const [sent, allowed] of expected)
      for (const indexes of await ledgerIndexesOf(sent)) {
        expect(indexes.length).toBeGreaterThan(0);
        for (const index of indexes) expect(index, briefly(sent)).toBeOneOf(allowed);
      }
  });

  it("reads a session's ledger in time order by the session, even when the statistics saw none of the tenant's rows", async () => {
    const [oldest] = await ctx.tdb.database.sql<{ id: string }[]>`
      select id from compactions where tenant_id = ${tenantId} and session_id = 'hot' and status = 'applied'
      order by compaction_version limit 1`;
    recording.sent.length = 0;
    recording.recording = true;
    const reads = new PostgresReads(recording.db);
    await reads.history(tenantId, 'hot');
    await listLedger(recording.db, tenantId, 'hot', { limit: 20 });
    await expiryOf(recording.db, tenantId, 'hot', '00000000-0000-4000-8000-000000000000');
    await new PostgresWrites(recording.db, reads).reportContextTokens({
      tenantId,
      sessionId: 'hot',
      eventId: 'payback-probe',
      inputTokens: 1_000,
      cacheReadTokens: 0,
    });
    // A restore of a compaction a later one builds on is refused after looking for the later ones.
    await expect(
      restoreCompaction(recording.db, { tenantId, sessionId: 'hot', compactionId: oldest?.id ?? '' }),
    ).rejects.toThrow(/later/);
    recording.recording = false;
    const ordered = distinct(recording.sent).filter(
      (s) =>
        /^\s*select\b/i.test(s.query) && /\bcompactions\b/.test(s.query) && /\border by\b/i.test(s.query),
    );
    // The history, the ledger page, the expiry record (also read by the restore), the payback
    // lookup and the restore's look for later compactions.
    expect(ordered).toHaveLength(5);
    for (const sent of ordered)
      for (const indexes of await ledgerIndexesOf(sent))
        expect(indexes, briefly(sent)).toEqual(['compactions_session_created_idx']);
  });
});
