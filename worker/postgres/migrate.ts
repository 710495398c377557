/**
 * Applies the SQL migrations in `drizzle/` inside compactor's own Postgres schema (default
 * `compactor`), with a migrations journal of its own in that schema, so compactor can share an
 * application's database without touching the application's tables or its drizzle history.
 *
 * Safe to run twice (the journal records what was applied) and safe when several processes run it
 * at once: a Postgres advisory lock serialises them, so the second waits and then finds nothing
 * left to do.
 *
 * Earlier releases kept their tables in `public` and their journal in drizzle's default
 * `drizzle.__drizzle_migrations`, shared with the application. The first run of this version moves
 * such an install into the schema (see {@link moveLegacyInstall}).
 */
import { readFileSync } from 'node:fs';
import { drizzle, ormRequire } from '../../producer/postgres/orm.ts';

/** drizzle's migrator, from the same CommonJS copy of drizzle-orm as the rest (orm.ts). */
const { migrate } = ormRequire(
  'drizzle-orm/postgres-js/migrator',
) as typeof import('drizzle-orm/postgres-js/migrator');

import postgres from 'postgres';
import { connectionOptions, DEFAULT_SCHEMA } from '../../producer/postgres/db.ts';
import { DatabaseError } from '../../shared/contract/errors.ts';
import type { Config } from '../config/config.ts';
import { packagePath } from '../config/package-files.ts';
import {
  assertPartitionCount,
  DEFAULT_HISTORY_PARTITIONS,
  PARTITIONS_SETTING,
} from '../config/partitions.ts';

/** The folder drizzle-kit generates into. */
export const MIGRATIONS_FOLDER = packagePath('drizzle');

/** compactor's migrations journal, a table in compactor's own schema. */
export const MIGRATIONS_TABLE = '__drizzle_migrations';

/** Arbitrary constant key of the advisory lock ("compactr" in ASCII). */
const MIGRATION_LOCK_KEY = 0x636f6d70616374;

/**
 * The tables and functions releases that kept compactor in `public` created (migrations 0000 to
 * 0007). Only these are ever moved: anything else in `public` belongs to the application.
 */
const LEGACY_TABLES = [
  'sessions',
  'messages',
  'archived_messages',
  'compactions',
  'compaction_policies',
  'summary_batches',
] as const;
const LEGACY_FUNCTIONS = ['compactor_legacy_content(text, text, text, text)'] as const;

export interface MigrateOptions {
  /** Migrations folder (drizzle-kit's layout). Default: compactor's own, {@link MIGRATIONS_FOLDER}. */
  folder?: string;
  /** The schema to migrate. Default {@link DEFAULT_SCHEMA}. */
  schema?: string;
  /**
   * Hash partitions of `messages` and of `archived_messages` (`COMPACTOR_HISTORY_PARTITIONS`), 1 to
   * 1024. Used by the migration that partitions them (0015): unset, it makes
   * {@link DEFAULT_HISTORY_PARTITIONS}. Once the tables are partitioned the count is fixed: a run
   * that asks for another count is refused before it changes anything; unset, any count is fine.
   */
  historyPartitions?: number;
}

/** The {@link MigrateOptions} a process's config asks for: its schema and its partition count. */
export function migrateOptionsOf(
  config: Pick<Config, 'databaseSchema' | 'historyPartitions'>,
): MigrateOptions {
  return { schema: config.databaseSchema, historyPartitions: config.historyPartitions };
}

/** What a migration run did. */
export interface MigrateReport {
  schema: string;
  /** Migrations applied by this run (0 when the schema was already current). */
  applied: number;
  /** Migrations the journal records in all, after this run. */
  total: number;
  /** Tables moved from `public` by this run (empty unless it found a pre-schema install). */
  moved: string[];
  /** Hash partitions of `messages` (and of `archived_messages`) after this run; 0 before migration 0015. */
  partitions: number;
}

/**
 * Migrates the database at `url` to the latest schema: creates the schema when missing, moves a
 * pre-schema install out of `public`, then applies the migrations the schema's journal lacks.
 * @throws {InvalidInputError} when `options.schema` is not a valid schema name, or
 *   `options.historyPartitions` not a whole number from 1 to 1024.
 * @throws {DatabaseError} when a pre-schema install is found but its journal rows are missing, or
 *   when the history is already partitioned into another count than `options.historyPartitions`.
 * @throws the connection or SQL error, after releasing the lock.
 */
export async function migrateDatabase(url: string, options: MigrateOptions = {}): Promise<MigrateReport> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const folder = options.folder ?? MIGRATIONS_FOLDER;
  const wanted = options.historyPartitions;
  if (wanted !== undefined) assertPartitionCount(wanted);
  // One connection: the session-level advisory lock, the setting and the migration must share it.
  const sql = postgres(url, { max: 1, ...connectionOptions(schema, 'compactor-migrate') });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    try {
      const moved = await moveLegacyInstall(sql, schema, folder);
      const existing = await partitionCount(sql, schema);
      if (wanted !== undefined && existing > 0 && existing !== wanted)
        throw new DatabaseError(
          `the history of schema "${schema}" is partitioned into ${existing} partitions per table, ` +
            `COMPACTOR_HISTORY_PARTITIONS asks for ${wanted}`,
          {
            hint: `the count is fixed when the tables are first partitioned: set it to ${existing} or unset it (nothing was changed)`,
            code: null,
          },
        );
      await sql`select set_config(${PARTITIONS_SETTING}, ${String(wanted ?? DEFAULT_HISTORY_PARTITIONS)}, false)`;
      const before = await journalCount(sql, schema);
      await migrate(drizzle(sql), {
        migrationsFolder: folder,
        migrationsSchema: schema,
        migrationsTable: MIGRATIONS_TABLE,
      });
      const total = await journalCount(sql, schema);
      return { schema, applied: total - before, total, moved, partitions: await partitionCount(sql, schema) };
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The hash partitions of `schema.messages`; 0 when it is not (yet) partitioned or not there. */
async function partitionCount(sql: postgres.Sql, schema: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(i.inhrelid)::int as n
      from pg_inherits i join pg_partitioned_table p on p.partrelid = i.inhparent
     where i.inhparent = to_regclass(${`${schema}.messages`})`;
  return row?.n ?? 0;
}

async function journalCount(sql: postgres.Sql, schema: string): Promise<number> {
  const [row] = await sql<{ journal: string | null }[]>`
    select to_regclass(${`${schema}.${MIGRATIONS_TABLE}`})::text as journal`;
  if (!row?.journal) return 0;
  const [count] = await sql<
    { n: number }[]
  >`select count(*)::int as n from ${sql(schema)}.${sql(MIGRATIONS_TABLE)}`;
  return count?.n ?? 0;
}

/**
 * Moves an install made before compactor had its own schema: when `schema` has no journal yet and
 * `public` holds compactor's tables (`sessions`, `messages`, `archived_messages` and `compactions`
 * with its `idempotency_key`), then in one transaction each of {@link LEGACY_TABLES} present is
 * moved with `ALTER TABLE … SET SCHEMA` (indexes, constraints and data go with it; nothing is
 * copied), the helper functions likewise, and compactor's rows of the shared drizzle journal (those
 * whose `created_at` is one of our migrations' timestamps) are copied into the schema's own journal.
 * The shared journal itself is left as it was: it is the application's history too.
 * @returns the tables moved, or `[]` when there was nothing to move.
 * @throws {DatabaseError} when the tables are there but the shared journal has none of our rows
 *   (the migrations could not tell what was applied).
 */
async function moveLegacyInstall(sql: postgres.Sql, schema: string, folder: string): Promise<string[]> {
  const [state] = await sql<
    { journal: string | null; target: string | null; legacy: boolean; shared: string | null }[]
  >`
    select to_regclass(${`${schema}.${MIGRATIONS_TABLE}`})::text as journal,
           to_regclass(${`${schema}.sessions`})::text as target,
           to_regclass('public.sessions') is not null
             and to_regclass('public.messages') is not null
             and to_regclass('public.archived_messages') is not null
             and exists (select 1 from information_schema.columns
                          where table_schema = 'public' and table_name = 'compactions'
                            and column_name = 'idempotency_key') as legacy,
           to_regclass('drizzle.__drizzle_migrations')::text as shared`;
  if (!state || state.journal || !state.legacy || (state.target && schema !== 'public')) return [];
  const ours = migrationTimestamps(folder);
  return sql.begin(async (tx) => {
    const rows = state.shared
      ? await tx<{ hash: string; created_at: string }[]>`
          select hash, created_at::text from drizzle.__drizzle_migrations
           where created_at = any(${ours}::bigint[]) order by created_at`
      : [];
    if (rows.length === 0)
      throw new DatabaseError(
        `compactor's tables are in schema "public" but drizzle.__drizzle_migrations records none of its migrations`,
        { hint: 'restore that journal, or move the tables by hand', code: null },
      );
    await tx`create schema if not exists ${tx(schema)}`;
    const present = await tx<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relname = any(${[...LEGACY_TABLES]})`;
    // Configured to stay in `public`: only the journal moves.
    const moved = schema === 'public' ? [] : present.map((r) => r.name).sort();
    for (const table of moved) await tx`alter table ${tx('public')}.${tx(table)} set schema ${tx(schema)}`;
    for (const fn of schema === 'public' ? [] : LEGACY_FUNCTIONS) {
      const [found] = await tx<
        { found: string | null }[]
      >`select to_regprocedure(${`public.${fn}`})::text as found`;
      if (found?.found) await tx.unsafe(`alter function public.${fn} set schema ${schema}`);
    }
    await tx`create table ${tx(schema)}.${tx(MIGRATIONS_TABLE)} (id serial primary key, hash text not null, created_at bigint)`;
    for (const row of rows)
      await tx`insert into ${tx(schema)}.${tx(MIGRATIONS_TABLE)} (hash, created_at) values (${row.hash}, ${row.created_at})`;
    return moved;
  });
}

/** The `when` (ms) of every migration in `folder`'s drizzle journal, as drizzle records them. */
function migrationTimestamps(folder: string): string[] {
  const journal = JSON.parse(readFileSync(`${folder}/meta/_journal.json`, 'utf8')) as {
    entries: { when: number }[];
  };
  return journal.entries.map((e) => String(e.when));
}

/** How far a schema's migrations are: recorded in its journal, and shipped with this release. */
export interface MigrationStatus {
  /** Migrations the schema's journal records (0: never migrated). */
  applied: number;
  /** Migrations in the folder ({@link MIGRATIONS_FOLDER} by default). */
  shipped: number;
}

/**
 * Reads the schema's journal (no lock, no write), for `compactor doctor`.
 * @throws the connection error when Postgres cannot be reached.
 */
export async function migrationStatus(
  sql: postgres.Sql,
  schema: string = DEFAULT_SCHEMA,
  folder: string = MIGRATIONS_FOLDER,
): Promise<MigrationStatus> {
  return { applied: await journalCount(sql, schema), shipped: migrationTimestamps(folder).length };
}
