/**
 * The Postgres half of the services, for a process that reads the ledger but runs no compaction
 * (`compactor history`): no Redis connection, so such a command works while Redis is down.
 */
import { type Database, openDatabase } from '../../producer/postgres/db.ts';
import type { Config } from '../config/config.ts';
import { PostgresReads } from '../postgres/reads.ts';

/** The reads of sessions and the ledger on their own pool; `close()` ends the pool. */
export interface StoreHandle {
  database: Database;
  reads: PostgresReads;
  close(): Promise<void>;
}

/**
 * Opens a pool of `poolSize` connections (default 1) to `config.databaseUrl` and the reads on it
 * (policies read by each gate's own statement: no cache). Nothing connects until the first query.
 */
export function openStore(
  config: Pick<Config, 'databaseUrl' | 'databaseSchema'>,
  options: { poolSize?: number } = {},
): StoreHandle {
  const database = openDatabase(config.databaseUrl, {
    max: options.poolSize ?? 1,
    schema: config.databaseSchema,
  });
  return { database, reads: new PostgresReads(database.db), close: () => database.close() };
}
