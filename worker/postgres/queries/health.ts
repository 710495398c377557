/** The readiness probe's statement (worker/observability/health.ts). */
import type postgres from 'postgres';

/** `select 1` on the pool: resolves once Postgres answers a statement. */
export async function pingPostgres(sql: postgres.Sql): Promise<void> {
  await sql`select 1`.execute();
}
