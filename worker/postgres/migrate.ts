/**
 * Applies the SQL migrations in `drizzle/`. Safe to run twice (drizzle records what it applied) and
 * safe when several processes run it at once: a Postgres advisory lock serialises them, so the
 * second waits and then finds nothing left to do.
 */
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';

/** The folder drizzle-kit generates into. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Arbitrary constant key of the advisory lock ("compactr" in ASCII). */
const MIGRATION_LOCK_KEY = 0x636f6d70616374;

/**
 * Migrates the database at `url` to the latest schema (of `folder`, by default compactor's own).
 * @throws the connection or SQL error, after releasing the lock.
 */
export async function migrateDatabase(url: string, folder = MIGRATIONS_FOLDER): Promise<void> {
  // One connection: the session-level advisory lock and the migration must share it.
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    try {
      await migrate(drizzle(sql), { migrationsFolder: folder });
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
