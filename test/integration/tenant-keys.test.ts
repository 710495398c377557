/**
 * The invariant that lets compactor's schema be distributed by tenant (docs/distributed-postgres.md):
 * every primary key and every unique constraint or index includes `tenant_id`, and every foreign key
 * joins `tenant_id` to `tenant_id`. A distributed Postgres such as Citus can enforce a unique key
 * only when it holds the distribution column (each shard checks its own rows), and joins a foreign
 * key only within a shard group. Read from the catalog of a migrated database, not from the drizzle
 * objects, so a hand-written migration that breaks the rule fails here too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/fixtures.ts';

/**
 * Tables the rule does not apply to, and why. Nothing else may be listed: a new table of tenant
 * data must carry `tenant_id` in its keys.
 */
const EXCEPTIONS: Record<string, string> = {
  // The migrations journal (drizzle's): compactor's own bookkeeping, not tenant data. On Citus it
  // stays a local table on the coordinator, where migrations run.
  __drizzle_migrations: 'the migrations journal',
  // rate-limiter-flexible's counters (the API's request rates on the postgres queue backend): its
  // RateLimiterDrizzle writes these columns and keys a row by its `key`, which holds the tenant id.
  // Short-lived counters, not tenant data; on Citus a reference or local table.
  rate_limits: "rate-limiter-flexible's request counters",
  // The worker registry: one row per running worker process (where it listens), not tenant data.
  queue_workers: 'the worker registry',
};

/**
 * Tables without a primary key, and what identifies a row instead (it must hold `tenant_id` too,
 * which the unique-key check below asserts).
 */
const WITHOUT_PRIMARY_KEY: Record<string, string> = {
  // agent_id is null for the tenant's own policy, so it cannot be in a primary key.
  compaction_policies: 'unique (tenant_id, agent_id) nulls not distinct',
};

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
});

afterAll(async () => {
  await tdb.drop();
});

interface KeyRow {
  table: string;
  key: string;
  primary: boolean;
  columns: string[];
}

describe('keys a distributed Postgres can use', () => {
  it('every primary key and unique constraint or index includes tenant_id', async () => {
    const keys = await tdb.database.sql<KeyRow[]>`
      select c.relname as table, i.relname as key, x.indisprimary as primary,
             array(select a.attname::text from unnest(x.indkey) with ordinality k(attnum, n)
                   join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum order by k.n) as columns
        from pg_index x
        join pg_class c on c.oid = x.indrelid
        join pg_class i on i.oid = x.indexrelid
        join pg_namespace s on s.oid = c.relnamespace
       where s.nspname = current_schema() and x.indisunique
       order by 1, 2`;
    const checked = keys.filter((k) => !(k.table in EXCEPTIONS));
    // The catalog was read: the ledger's keys are among them (partitions' keys included).
    expect(checked.map((k) => `${k.table}.${k.key}`)).toEqual(
      expect.arrayContaining([
        'compactions.compactions_tenant_id_id_pk',
        'compactions.compactions_tenant_idempotency_key_key',
        'messages.messages_tenant_id_session_id_seq_pk',
        'archived_messages.archived_messages_tenant_id_compaction_id_seq_pk',
      ]),
    );
    const without = checked.filter((k) => !k.columns.includes('tenant_id'));
    expect(
      without.map((k) => `${k.table}.${k.key} (${k.columns.join(', ')})`),
      'keys without tenant_id',
    ).toEqual([]);
  });

  it('every table has a primary key, but for the listed ones', async () => {
    const tables = await tdb.database.sql<{ table: string; primary: boolean }[]>`
      select c.relname as table,
             exists (select 1 from pg_index x where x.indrelid = c.oid and x.indisprimary) as primary
        from pg_class c join pg_namespace s on s.oid = c.relnamespace
       where s.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
       order by 1`;
    expect(tables.length).toBeGreaterThanOrEqual(10);
    const missing = tables.filter((t) => !t.primary && !(t.table in EXCEPTIONS)).map((t) => t.table);
    expect(missing).toEqual(Object.keys(WITHOUT_PRIMARY_KEY));
  });

  it('every table of tenant data has tenant_id, not null', async () => {
    const tables = await tdb.database.sql<{ table: string; tenant: boolean }[]>`
      select c.relname as table,
             exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id'
                       and a.attnotnull and not a.attisdropped) as tenant
        from pg_class c join pg_namespace s on s.oid = c.relnamespace
       where s.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
       order by 1`;
    expect(tables.filter((t) => !t.tenant && !(t.table in EXCEPTIONS)).map((t) => t.table)).toEqual([]);
  });

  it('every foreign key joins tenant_id to tenant_id', async () => {
    const keys = await tdb.database.sql<{ table: string; key: string; pairs: string[] }[]>`
      select c.relname as table, k.conname as key,
             array(select a.attname || '=' || b.attname
                     from unnest(k.conkey, k.confkey) as p(own, other)
                     join pg_attribute a on a.attrelid = k.conrelid and a.attnum = p.own
                     join pg_attribute b on b.attrelid = k.confrelid and b.attnum = p.other) as pairs
        from pg_constraint k
        join pg_class c on c.oid = k.conrelid
        join pg_namespace s on s.oid = c.relnamespace
       where s.nspname = current_schema() and k.contype = 'f' and not c.relispartition
       order by 1, 2`;
    expect(keys.map((k) => k.key)).toContain('messages_tenant_id_session_id_sessions_tenant_id_id_fk');
    expect(keys.filter((k) => !k.pairs.includes('tenant_id=tenant_id')).map((k) => k.key)).toEqual([]);
  });
});
