/**
 * Creates the database a URL names when it does not exist yet, for the demo on a fresh server.
 * Production installs create their database themselves; `compactor migrate` never does.
 */
import postgres from 'postgres';

/**
 * Connects to the server's `postgres` maintenance database with the URL's credentials and runs
 * `CREATE DATABASE` for the URL's database when `pg_database` has no such name.
 * @returns true when it created the database, false when it was there.
 * @throws the connection or SQL error (a role without CREATEDB gets Postgres's 42501).
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (name === '' || name === 'postgres') return false;
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const sql = postgres(maintenance.toString(), { max: 1, onnotice: () => {} });
  try {
    const [found] = await sql`select 1 from pg_database where datname = ${name}`;
    if (found) return false;
    await sql`create database ${sql(name)}`.catch((error: { code?: string }) => {
      // Another process created it between the check and here.
      if (error.code !== '42P04') throw error;
    });
    return true;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
