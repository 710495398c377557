/**
 * compactor in its own Postgres schema: `migrate` creates every table and its own journal there,
 * beside an application that has its own `public.sessions` and its own (newer) drizzle journal, and
 * touches nothing of the application's; a worker then compacts in that database; an install from
 * before the schema is moved out of `public` with its data; several migrators at once are safe.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { drizzle, ormRequire } from '../../producer/postgres/orm.ts';

/** drizzle's migrator, from the same CommonJS copy of drizzle-orm as the rest (orm.ts). */
const { migrate } = ormRequire(
  'drizzle-orm/postgres-js/migrator',
) as typeof import('drizzle-orm/postgres-js/migrator');

import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession, loadContext } from '../../producer/index.ts';
import { assertSchema, openDatabase } from '../../producer/postgres/db.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import { MIGRATIONS_FOLDER, MIGRATIONS_TABLE, migrateDatabase } from '../../worker/postgres/migrate.ts';
import { startWorker } from '../../worker/queue/compaction/worker.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor } from '../support/env.ts';
import { loadCorpusSession, silentLogger, testConfig, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
const created: string[] = [];

afterAll(async () => {
  for (const name of created) await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

/** A fresh empty database of this file's own. */
async function newDatabase(): Promise<string> {
  const name = `compactor_schema_${randomBytes(5).toString('hex')}`;
  await admin.unsafe(`create database "${name}"`);
  created.push(name);
  return databaseUrlFor(name);
}

/** Every table the migrations create. */
const COMPACTOR_TABLES = [
  'api_keys',
  'append_requests',
  'archived_messages',
  'budget_reservations',
  'claude_code_entries',
  'compaction_policies',
  'compactions',
  'messages',
  'queue_workers',
  'rate_limits',
  'session_leases',
  'sessions',
  'summary_batches',
  'tenant_backlogs',
  'tenant_slots',
  'tenant_worker_slots',
  'webhook_deliveries',
  'webhooks',
];
/** The tables of the postgres queue backend's coordination (migration 0017). */
const COORDINATION_TABLES = [
  'rate_limits',
  'session_leases',
  'tenant_backlogs',
  'tenant_slots',
  'tenant_worker_slots',
];
/** The tables of the releases that kept compactor in public (migrations 0000 to 0007). */
const LEGACY_TABLES = COMPACTOR_TABLES.filter(
  (t) =>
    !t.startsWith('webhook') &&
    t !== 'append_requests' &&
    t !== 'budget_reservations' &&
    t !== 'api_keys' &&
    t !== 'queue_workers' &&
    t !== 'claude_code_entries' &&
    !COORDINATION_TABLES.includes(t),
);

/** The tables of `schema`, without the partitions of the partitioned ones. */
async function tablesIn(sql: postgres.Sql, schema: string): Promise<string[]> {
  const rows = await sql<{ t: string }[]>`
    select c.relname as t from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ${schema} and c.relkind in ('r', 'p') and not c.relispartition order by 1`;
  return rows.map((r) => r.t);
}

/** The application: its own `sessions` table and a drizzle journal newer than any of ours. */
async function seedApplication(sql: postgres.Sql): Promise<void> {
  await sql`create table public.sessions (id serial primary key, user_email text not null, expires_at timestamptz)`;
  await sql`insert into public.sessions (user_email) values ('ada@example.com'), ('alan@example.com')`;
  await sql`create schema drizzle`;
  await sql`create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`;
  await sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('app-0000', 1700000000000), ('app-0001', 4102444800000)`;
}

describe('migrate into an application’s database', () => {
  it('creates every compactor table in its own schema and touches nothing of the application', async () => {
    const url = await newDatabase();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await seedApplication(sql);
      const before = {
        sessions: await sql`select * from public.sessions order by id`,
        journal: await sql`select * from drizzle.__drizzle_migrations order by id`,
        public: await tablesIn(sql, 'public'),
      };

      const report = await migrateDatabase(url);
      expect(report).toMatchObject({ schema: 'compactor', moved: [] });
      expect(report.applied).toBe(report.total);
      expect(report.applied).toBeGreaterThanOrEqual(8);

      expect(await tablesIn(sql, 'compactor')).toEqual([MIGRATIONS_TABLE, ...COMPACTOR_TABLES].sort());
      expect(await tablesIn(sql, 'public')).toEqual(before.public);
      expect(await sql`select * from public.sessions order by id`).toEqual(before.sessions);
      expect(await sql`select * from drizzle.__drizzle_migrations order by id`).toEqual(before.journal);
      // compactor's helper function lives in its schema too, not in the application's.
      const functions = await sql<{ schema: string }[]>`
        select n.nspname as schema from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where p.proname = 'compactor_legacy_content'`;
      expect(functions).toEqual([{ schema: 'compactor' }]);

      const again = await migrateDatabase(url);
      expect(again).toEqual({
        schema: 'compactor',
        applied: 0,
        total: report.total,
        moved: [],
        partitions: 16,
      });
    } finally {
      await sql.end();
    }
  });

  it('runs a worker there: a session is compacted, and the application’s sessions table is not read', async () => {
    const url = await newDatabase();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    await seedApplication(sql);
    await sql.end();
    await migrateDatabase(url);

    const services = openServices(testConfig(url, ctx.prefix), silentLogger, {
      poolSize: 3,
      summarizers: { primary: createExtractiveSummarizer() },
    });
    const worker = startWorker(services, {});
    ctx.onTeardown(async () => {
      await worker.close();
      await services.close();
    });
    const database = openDatabase(url, { max: 2 });
    ctx.onTeardown(() => database.close());
    await assertSchema(database);
    const messages = await loadCorpusSession('sweagent__marshmallow-1867-fc');
    await createSession(database.db, { tenantId: 'app', sessionId: 'agent-1', messages });
    const eventId = randomUUID();
    await ctx.producer.runCompleted({
      eventId,
      tenantId: 'app',
      sessionId: 'agent-1',
      trigger: 'manual',
      strategy: { type: 'slidingWindow', maxMessages: 10 },
    });
    await waitFor(async () => {
      const state = await ctx.producer.queue.getJobState(jobIdOf('app', eventId));
      return state === 'completed' || state === 'failed' ? state : undefined;
    });
    const [ledger] = await database.sql<{ status: string }[]>`
      select status from compactions where tenant_id = 'app' and session_id = 'agent-1'`;
    expect(ledger?.status).toBe('applied');
    const context = await loadContext(database.db, { tenantId: 'app', sessionId: 'agent-1' });
    expect(context.messages.length).toBeLessThan(messages.length);
    const [app] = await database.sql<{ n: number }[]>`select count(*)::int as n from public.sessions`;
    expect(app?.n).toBe(2);
  });

  it('takes a schema of another name, and refuses a name it would have to quote', async () => {
    const url = await newDatabase();
    await migrateDatabase(url, { schema: 'agent_memory' });
    const database = openDatabase(url, { max: 1, schema: 'agent_memory' });
    try {
      await assertSchema(database);
      expect(await tablesIn(database.sql, 'agent_memory')).toContain('messages');
      expect(await tablesIn(database.sql, 'compactor')).toEqual([]);
      // The default schema of the same database is empty, and says what to do.
      const other = openDatabase(url, { max: 1 });
      await expect(assertSchema(other)).rejects.toThrow(
        /no compactor tables in schema "compactor" of database "compactor_schema_\w+"/,
      );
      await other.close();
    } finally {
      await database.close();
    }
    await expect(migrateDatabase(url, { schema: 'Agent Memory; drop table x' })).rejects.toThrow(
      /invalid schema name "Agent Memory; drop table x"/,
    );
  });

  it('is safe to run twice, and from two processes at once', async () => {
    const url = await newDatabase();
    const reports = await Promise.all([migrateDatabase(url), migrateDatabase(url)]);
    // One of the two applied everything; the other waited for the lock and found nothing to do.
    expect(reports.map((r) => r.applied).sort((a, b) => a - b)).toEqual([0, reports[0]?.total]);
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    expect(await tablesIn(sql, 'compactor')).toEqual([MIGRATIONS_TABLE, ...COMPACTOR_TABLES].sort());
    await sql.end();
  });
});

describe('an install from before the schema', () => {
  it('is moved out of public with its rows, its journal copied, and the later migrations applied', async () => {
    const url = await newDatabase();
    // Lay it out as earlier releases did: tables in public, journal in drizzle's default, shared
    // with the application (which has a row of its own there), up to a migration before the last.
    const folder = await mkdtemp(path.join(tmpdir(), 'compactor-legacy-'));
    ctx.onTeardown(() => rm(folder, { recursive: true, force: true }));
    await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
    const journalPath = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: Array<{ tag: string }> };
    const at = journal.entries.findIndex((e) => e.tag === '0006_native_content_blocks');
    await writeFile(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
    const legacy = postgres(url, { max: 1, onnotice: () => {} });
    await migrate(drizzle(legacy), { migrationsFolder: folder });
    await legacy`insert into drizzle.__drizzle_migrations (hash, created_at) values ('app-0000', 1700000000000)`;
    await legacy`insert into sessions (tenant_id, id, last_seq, message_count) values ('t', 'old', 1, 2)`;
    await legacy`insert into messages (tenant_id, session_id, seq, role, kind, content, token_count)
                 values ('t', 'old', 0, 'user', 'text', 'fix the parser', 4),
                        ('t', 'old', 1, 'assistant', 'text', 'done', 1)`;
    const sharedJournal = await legacy`select * from drizzle.__drizzle_migrations order by id`;
    await legacy.end();

    const report = await migrateDatabase(url);
    expect(report.moved).toEqual(LEGACY_TABLES);
    expect(report.total).toBe(journal.entries.length);
    expect(report.applied).toBe(journal.entries.length - at);

    const database = openDatabase(url, { max: 1 });
    const { sql } = database;
    try {
      expect(await tablesIn(sql, 'public')).toEqual([]);
      expect(await sql`select * from drizzle.__drizzle_migrations order by id`).toEqual(sharedJournal);
      const rows = await sql<{ seq: string; content: string; blocks: unknown }[]>`
        select seq::text, content, content_blocks as blocks from messages order by seq`;
      expect(rows).toEqual([
        { seq: '0', content: 'fix the parser', blocks: 'fix the parser' },
        { seq: '1', content: 'done', blocks: 'done' },
      ]);
      const context = await loadContext(database.db, { tenantId: 't', sessionId: 'old' });
      expect(context.messages).toEqual([
        { role: 'user', content: 'fix the parser' },
        { role: 'assistant', content: 'done' },
      ]);
    } finally {
      await database.close();
    }
    expect((await migrateDatabase(url)).applied).toBe(0);
  });
});
