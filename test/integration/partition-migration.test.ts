/**
 * Migration 0015 converts an existing install: the history tables of the previous release, with
 * rows of several tenants in them, become hash-partitioned by tenant in the count asked for, every
 * row kept as it was; the ledger's and the other tables' keys gain tenant_id; the idempotency key
 * stays unique within its tenant. The count is fixed once made.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContext } from '../../producer/index.ts';
import { openDatabase } from '../../producer/postgres/db.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { loadConfig } from '../../worker/config/config.ts';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../worker/postgres/migrate.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor } from '../support/env.ts';

const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
const created: string[] = [];
let previousRelease: string;
/** How many migrations the release before lacks: 0015 and those after it. */
let laterMigrations = 0;

beforeAll(async () => {
  // The migrations of the release before: compactor's own, up to the one before 0015.
  previousRelease = await mkdtemp(path.join(tmpdir(), 'compactor-before-partitions-'));
  await cp(MIGRATIONS_FOLDER, previousRelease, { recursive: true });
  const journalPath = path.join(previousRelease, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
  const at = journal.entries.findIndex((e) => e.tag === '0015_tenant_partitions');
  expect(at).toBeGreaterThan(0);
  laterMigrations = journal.entries.length - at;
  await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
});

afterAll(async () => {
  for (const name of created) await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  await rm(previousRelease, { recursive: true, force: true });
});

async function newDatabase(): Promise<string> {
  const name = `compactor_partitions_${randomBytes(5).toString('hex')}`;
  await admin.unsafe(`create database "${name}"`);
  created.push(name);
  return databaseUrlFor(name);
}

const TENANTS = ['acme', 'globex', 'initech'];
const COMPACTION = (i: number) => `00000000-0000-4000-8000-00000000000${i}`;

/** Rows of every table that changes, as the previous release wrote them. */
async function seed(sql: postgres.Sql): Promise<void> {
  for (const [i, tenant] of TENANTS.entries()) {
    await sql`insert into sessions (tenant_id, id, last_seq, message_count, token_count, compaction_version)
              values (${tenant}, 's', 3, 2, 9, 1)`;
    await sql`insert into compactions (id, tenant_id, session_id, idempotency_key, trigger, strategy, status,
                cutoff_seq, compaction_version, messages_archived)
              values (${COMPACTION(i)}, ${tenant}, 's', ${`event:${tenant}:e1`}, 'event', 'slidingWindow',
                'applied', 1, 0, 2)`;
    await sql`insert into archived_messages (tenant_id, session_id, seq, role, kind, content, content_blocks,
                token_count, compaction_id, rewritten)
              values (${tenant}, 's', 0, 'system', 'text', 'be brief', '"be brief"', 2, ${COMPACTION(i)}, false),
                     (${tenant}, 's', 1, 'user', 'text', ${`fix ${tenant}'s parser`},
                      ${JSON.stringify([{ type: 'text', text: `fix ${tenant}'s parser` }])}, 4, ${COMPACTION(i)}, false)`;
    await sql`insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count,
                tool_use_ids, has_thinking, context_version)
              values (${tenant}, 's', 2, 'user', 'text', 'and the tests', '"and the tests"', 3, '{}', false, null),
                     (${tenant}, 's', 3, 'assistant', 'text', 'done', '"done"', 6, '{}', false, 1)`;
    await sql`insert into summary_batches (tenant_id, session_id, idempotency_key, expected_version, strategy, plan)
              values (${tenant}, 's', ${`sweep:${tenant}:s:v1`}, 1, '{}', '{}')`;
    await sql`insert into webhook_deliveries (tenant_id, event_id, attempt, url, duration_ms, delivered)
              values (${tenant}, ${COMPACTION(i)}, 1, 'https://example.com/hook', 12, true)`;
    await sql`insert into budget_reservations (tenant_id, session_id, cost_usd, expires_at)
              values (${tenant}, 's', 0.25, now() + interval '1 hour')`;
  }
}

/** Every row of the changed tables, in a stable order. */
async function contents(sql: postgres.Sql) {
  return {
    messages: await sql`select * from messages order by tenant_id, session_id, seq`,
    archived: await sql`select * from archived_messages order by tenant_id, compaction_id, seq`,
    compactions: await sql`select * from compactions order by tenant_id, id`,
    batches: await sql`select * from summary_batches order by tenant_id, idempotency_key`,
    deliveries: await sql`select * from webhook_deliveries order by tenant_id, event_id`,
    reservations: await sql`select * from budget_reservations order by tenant_id, session_id`,
  };
}

/** `after`'s rows with only the columns `before`'s rows of the same table have. */
function onColumnsOf<T extends Record<string, readonly Record<string, unknown>[]>>(after: T, before: T) {
  return Object.fromEntries(
    Object.entries(after).map(([table, rows]) => {
      const columns = Object.keys(before[table]?.[0] ?? rows[0] ?? {});
      return [table, rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])))];
    }),
  );
}

/** The primary and unique keys of compactor's tables (partitions left out), with their columns. */
async function keys(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ key: string }[]>`
    select c.relname || ': ' || pg_get_indexdef(x.indexrelid) as key
      from pg_index x join pg_class c on c.oid = x.indrelid join pg_namespace s on s.oid = c.relnamespace
     where s.nspname = current_schema() and x.indisunique and not c.relispartition
       and c.relname <> '__drizzle_migrations'
     order by 1`;
  return rows.map((r) => r.key.replace(/ ON (ONLY )?compactor\.\w+ USING btree/, ''));
}

async function partitionsOf(sql: postgres.Sql): Promise<Record<string, number>> {
  const rows = await sql<{ table: string; n: number }[]>`
    select c.relname as table, count(i.inhrelid)::int as n
      from pg_class c join pg_namespace s on s.oid = c.relnamespace
      left join pg_inherits i on i.inhparent = c.oid
     where s.nspname = current_schema() and c.relkind = 'p' group by 1 order by 1`;
  return Object.fromEntries(rows.map((r) => [r.table, r.n]));
}

describe('migration 0015 on an install of the previous release', () => {
  it('partitions the history in the count asked for, keeps every row, and puts tenant_id in every key', async () => {
    const url = await newDatabase();
    const before = await migrateDatabase(url, { folder: previousRelease });
    expect(before.partitions).toBe(0);
    const database = openDatabase(url, { max: 1 });
    const { sql } = database;
    try {
      await seed(sql);
      const rows = await contents(sql);
      expect(rows.messages).toHaveLength(6);
      expect(await keys(sql)).toEqual([
        'append_requests: CREATE UNIQUE INDEX append_requests_tenant_id_idempotency_key_pk (tenant_id, idempotency_key)',
        'archived_messages: CREATE UNIQUE INDEX archived_messages_compaction_id_seq_pk (compaction_id, seq)',
        'budget_reservations: CREATE UNIQUE INDEX budget_reservations_pkey (id)',
        'compaction_policies: CREATE UNIQUE INDEX compaction_policies_tenant_agent_key (tenant_id, agent_id) NULLS NOT DISTINCT',
        'compactions: CREATE UNIQUE INDEX compactions_idempotency_key_key (idempotency_key)',
        'compactions: CREATE UNIQUE INDEX compactions_pkey (id)',
        'messages: CREATE UNIQUE INDEX messages_tenant_id_session_id_seq_pk (tenant_id, session_id, seq)',
        'sessions: CREATE UNIQUE INDEX sessions_tenant_id_id_pk (tenant_id, id)',
        'summary_batches: CREATE UNIQUE INDEX summary_batches_idempotency_key_key (idempotency_key)',
        'summary_batches: CREATE UNIQUE INDEX summary_batches_pkey (id)',
        'webhook_deliveries: CREATE UNIQUE INDEX webhook_deliveries_pkey (id)',
        'webhooks: CREATE UNIQUE INDEX webhooks_pkey (tenant_id)',
      ]);

      const report = await migrateDatabase(url, { historyPartitions: 4 });
      // 0015 and the migrations after it.
      expect(report).toMatchObject({
        applied: laterMigrations,
        total: before.total + laterMigrations,
        partitions: 4,
      });

      // Every row kept as it was; columns a later migration adds (the ledger's payback ones) are null.
      const after = await contents(sql);
      expect(onColumnsOf(after, rows)).toEqual(rows);
      expect(after.compactions.every((r) => r.payback_inputs === null && r.measured_requests === null)).toBe(
        true,
      );
      expect(await partitionsOf(sql)).toEqual({ archived_messages: 4, messages: 4 });
      expect(await keys(sql)).toEqual([
        'api_keys: CREATE UNIQUE INDEX api_keys_tenant_id_id_pk (tenant_id, id)',
        'append_requests: CREATE UNIQUE INDEX append_requests_tenant_id_idempotency_key_pk (tenant_id, idempotency_key)',
        'archived_messages: CREATE UNIQUE INDEX archived_messages_tenant_id_compaction_id_seq_pk (tenant_id, compaction_id, seq)',
        'budget_reservations: CREATE UNIQUE INDEX budget_reservations_tenant_id_id_pk (tenant_id, id)',
        'claude_code_entries: CREATE UNIQUE INDEX claude_code_entries_tenant_id_session_id_subpath_seq_pk (tenant_id, session_id, subpath, seq)',
        'claude_code_entries: CREATE UNIQUE INDEX claude_code_entries_uuid_idx (tenant_id, session_id, subpath, uuid) WHERE (uuid IS NOT NULL)',
        'compaction_policies: CREATE UNIQUE INDEX compaction_policies_tenant_agent_key (tenant_id, agent_id) NULLS NOT DISTINCT',
        'compactions: CREATE UNIQUE INDEX compactions_tenant_id_id_pk (tenant_id, id)',
        'compactions: CREATE UNIQUE INDEX compactions_tenant_idempotency_key_key (tenant_id, idempotency_key)',
        'messages: CREATE UNIQUE INDEX messages_tenant_id_session_id_seq_pk (tenant_id, session_id, seq)',
        'queue_workers: CREATE UNIQUE INDEX queue_workers_pkey (id)',
        'rate_limits: CREATE UNIQUE INDEX rate_limits_pkey (key)',
        'session_leases: CREATE UNIQUE INDEX session_leases_tenant_id_session_id_pk (tenant_id, session_id)',
        'sessions: CREATE UNIQUE INDEX sessions_tenant_id_id_pk (tenant_id, id)',
        'summary_batches: CREATE UNIQUE INDEX summary_batches_tenant_id_id_pk (tenant_id, id)',
        'summary_batches: CREATE UNIQUE INDEX summary_batches_tenant_idempotency_key_key (tenant_id, idempotency_key)',
        'tenant_backlogs: CREATE UNIQUE INDEX tenant_backlogs_pkey (tenant_id)',
        'tenant_slots: CREATE UNIQUE INDEX tenant_slots_tenant_id_token_pk (tenant_id, token)',
        'tenant_worker_slots: CREATE UNIQUE INDEX tenant_worker_slots_tenant_id_slot_pk (tenant_id, slot)',
        'webhook_deliveries: CREATE UNIQUE INDEX webhook_deliveries_tenant_id_id_pk (tenant_id, id)',
        'webhooks: CREATE UNIQUE INDEX webhooks_pkey (tenant_id)',
      ]);

      // Each tenant's history is in one partition of each table, the same remainder in both.
      const placement = await sql<{ tenant_id: string; live: string[]; archived: string[] }[]>`
        select m.tenant_id,
               array(select distinct tableoid::regclass::text from messages x where x.tenant_id = m.tenant_id) as live,
               array(select distinct tableoid::regclass::text from archived_messages x where x.tenant_id = m.tenant_id) as archived
          from (select distinct tenant_id from messages) m order by 1`;
      expect(placement).toHaveLength(TENANTS.length);
      for (const p of placement) {
        expect(p.live).toHaveLength(1);
        expect(p.archived).toEqual([`archived_${p.live[0]}`]);
      }

      // The foreign key to sessions holds on the partitioned table: no message without its session.
      await expect(
        sql`insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count)
            values ('acme', 'nobody', 0, 'user', 'text', 'x', '"x"', 1)`,
      ).rejects.toMatchObject({ code: '23503' });
      // The idempotency key is still unique within its tenant.
      await expect(
        sql`insert into compactions (tenant_id, session_id, idempotency_key, trigger, strategy, status)
            values ('acme', 's', 'event:acme:e1', 'event', 'none', 'skipped')`,
      ).rejects.toMatchObject({ code: '23505', constraint_name: 'compactions_tenant_idempotency_key_key' });

      // The converted session reads as before.
      const context = await loadContext(database.db, { tenantId: 'globex', sessionId: 's' });
      expect(context.messages).toEqual([
        { role: 'user', content: 'and the tests' },
        { role: 'assistant', content: 'done' },
      ]);
    } finally {
      await database.close();
    }

    // The count is fixed: asking for another one changes nothing and says what to do.
    await expect(migrateDatabase(url, { historyPartitions: 8 })).rejects.toThrow(
      /the history of schema "compactor" is partitioned into 4 partitions per table, COMPACTOR_HISTORY_PARTITIONS asks for 8: .*set it to 4 or unset it/,
    );
    const again = await migrateDatabase(url);
    expect(again).toMatchObject({ applied: 0, partitions: 4 });
    expect((await migrateDatabase(url, { historyPartitions: 4 })).applied).toBe(0);
  });

  it('makes 16 partitions per table unless told otherwise', async () => {
    const url = await newDatabase();
    expect(await migrateDatabase(url)).toMatchObject({ partitions: 16 });
  });

  it('refuses a partition count out of range, naming it, before connecting', async () => {
    await expect(
      migrateDatabase('postgres://nobody@127.0.0.1:1/none', { historyPartitions: 0 }),
    ).rejects.toThrow(
      new InvalidInputError('invalid history partition count 0: use a whole number from 1 to 1024'),
    );
    expect(() => loadConfig({ COMPACTOR_HISTORY_PARTITIONS: '2000' })).toThrow(
      /COMPACTOR_HISTORY_PARTITIONS: must be at most 1024/,
    );
    expect(() => loadConfig({ COMPACTOR_HISTORY_PARTITIONS: 'many' })).toThrow(
      /COMPACTOR_HISTORY_PARTITIONS: must be a number of partitions/,
    );
    expect(loadConfig({ COMPACTOR_HISTORY_PARTITIONS: '32' }).historyPartitions).toBe(32);
    expect(loadConfig({}).historyPartitions).toBeUndefined();
  });
});
