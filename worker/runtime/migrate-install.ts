/**
 * Migrates what an install keeps in Postgres: compactor's tables in its schema
 * (worker/postgres/migrate.ts) and, on the `postgres` queue backend, BullMQ's tables in the queue
 * schema (BullMQ's own migrations, producer/queue/backend.ts). `compactor migrate`, `compactor
 * worker` and the demo all start here, so an install never runs with one migrated and not the other.
 */
import { migrateQueueSchema } from '../../producer/queue/backend.ts';
import { DEFAULT_QUEUE_SCHEMA } from '../../shared/protocol/queue-backend.ts';
import { type Config, queueBackendOfConfig } from '../config/config.ts';
import { type MigrateReport, migrateDatabase, migrateOptionsOf } from '../postgres/migrate.ts';

/** What {@link migrateInstall} did. */
export interface InstallReport extends MigrateReport {
  /** BullMQ's schema and the version it is at, on the `postgres` backend; else null. */
  queue: { schema: string; version: number } | null;
}

/**
 * Applies compactor's migrations, then (postgres backend) BullMQ's. Both are safe to repeat and to
 * run from several processes at once (each under an advisory lock).
 * @throws {DatabaseError} as `migrateDatabase`; BullMQ's errors (a schema newer than this BullMQ).
 */
export async function migrateInstall(
  config: Pick<
    Config,
    'databaseUrl' | 'databaseSchema' | 'historyPartitions' | 'queueBackend' | 'queueSchema'
  >,
): Promise<InstallReport> {
  const report = await migrateDatabase(config.databaseUrl, migrateOptionsOf(config));
  if (queueBackendOfConfig(config) !== 'postgres') return { ...report, queue: null };
  const schema = config.queueSchema ?? DEFAULT_QUEUE_SCHEMA;
  const version = await migrateQueueSchema({
    connection: config.databaseUrl,
    schema,
    applicationName: 'compactor-migrate',
  });
  return { ...report, queue: { schema, version } };
}
