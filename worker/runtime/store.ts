/**
 * The Postgres half of the services, for a process that reads the ledger but runs no compaction
 * (`compactor history`): no Redis connection, so such a command works while Redis is down.
 */
import { type Database, openDatabase } from '../../producer/postgres/db.ts';
import type { Config } from '../config/config.ts';
import { CompactionStore } from '../postgres/store.ts';

/** A store on its own pool; `close()` ends the pool. */
export interface StoreHandle {
  database: Database;
  store: CompactionStore;
  close(): Promise<void>;
}

/**
 * Opens a pool of `poolSize` connections (default 1) to `config.databaseUrl` and the store on it.
 * Nothing connects until the first query.
 */
export function openStore(
  config: Pick<Config, 'databaseUrl' | 'databaseSchema'>,
  options: { poolSize?: number } = {},
): StoreHandle {
  const database = openDatabase(config.databaseUrl, {
    max: options.poolSize ?? 1,
    schema: config.databaseSchema,
  });
  return { database, store: new CompactionStore(database.db), close: () => database.close() };
}
