/**
 * What `compactor doctor` looks at, read with short timeouts: the database and its migrations, the
 * queue backend the configuration names, each queue's waiting, active and failed jobs, and the
 * live workers of the worker registry. Reads only; every connection it opens is closed before it
 * returns, whatever answered.
 */
import { openDatabase } from '../../producer/postgres/db.ts';
import { liveQueueWorkers } from '../../producer/postgres/queue-workers.ts';
import { postgresQueueBackend, type QueueBackend, redisQueueBackend } from '../../producer/queue/backend.ts';
import { connectRedis, describeTarget } from '../../producer/redis/redis.ts';
import { DEFAULT_QUEUE_SCHEMA } from '../../shared/protocol/queue-backend.ts';
import type { LiveWorker } from '../../shared/protocol/queue-workers.ts';
import { type Config, queueBackendOfConfig, redisTargetOf } from '../config/config.ts';
import { type MigrationStatus, migrationStatus } from '../postgres/migrate.ts';
import { redactUrl } from './services.ts';

/** ms each probe may take before it counts as unreachable. */
export const DOCTOR_TIMEOUT_MS = 5_000;

/** A queue's job counts, or why they could not be read. */
export type QueueCounts =
  | { name: string; waiting: number; active: number; failed: number }
  | { name: string; error: string };

/** What {@link inspectInstall} found. */
export interface InstallReport {
  /** The database, without its password, and compactor's schema. */
  database: { url: string; schema: string };
  /** The database's answer: its migrations, or the error that stopped the read. */
  migrations: MigrationStatus | { error: string };
  /** The queue backend and namespace the configuration names. */
  queues: QueueBackend['place'];
  counts: QueueCounts[];
  /** The registry's live workers; an error when it could not be read. */
  workers: LiveWorker[] | { error: string };
}

/**
 * Reads what {@link InstallReport} holds for `config`, each probe given {@link DOCTOR_TIMEOUT_MS}.
 * @param queueNames the queues to count.
 * @param staleAfterMs the registry's staleness window, ms.
 */
export async function inspectInstall(
  config: Config,
  queueNames: string[],
  staleAfterMs: number,
): Promise<InstallReport> {
  const schema = config.databaseSchema;
  const database = openDatabase(config.databaseUrl, { max: 1, schema, applicationName: 'compactor-doctor' });
  const { queues, close: closeQueues } = queueBackendFor(config);
  try {
    const [migrations, workers, counts] = await Promise.all([
      settle(migrationStatus(database.sql, schema)),
      settle(liveQueueWorkers(database.db, staleAfterMs)),
      Promise.all(queueNames.map((name) => countJobs(queues, name))),
    ]);
    return {
      database: { url: redactUrl(config.databaseUrl), schema },
      migrations,
      queues: queues.place,
      counts,
      workers,
    };
  } finally {
    await Promise.all([database.close(1).catch(() => {}), closeQueues()]);
  }
}

/** The queue backend of `config`, on connections that give up instead of waiting for a server. */
function queueBackendFor(config: Config): { queues: QueueBackend; close(): Promise<void> } {
  if (queueBackendOfConfig(config) === 'postgres') {
    return {
      queues: postgresQueueBackend({
        connection: { connectionString: config.databaseUrl, connectionTimeoutMillis: DOCTOR_TIMEOUT_MS },
        schema: config.queueSchema ?? DEFAULT_QUEUE_SCHEMA,
        applicationName: 'compactor-doctor',
      }),
      close: async () => {},
    };
  }
  const target = redisTargetOf(config);
  const opened: Array<ReturnType<typeof connectRedis>> = [];
  const open = () => {
    const connection = connectRedis(target, { maxRetriesPerRequest: 1, connectTimeout: DOCTOR_TIMEOUT_MS });
    connection.on('error', () => {});
    opened.push(connection);
    return connection;
  };
  return {
    queues: redisQueueBackend({
      prefix: config.queuePrefix,
      shared: open(),
      open,
      where: describeTarget(target),
    }),
    close: async () => {
      for (const connection of opened) connection.disconnect();
    },
  };
}

/** One queue's counts, or the error (a timeout included) that stopped the read. */
async function countJobs(queues: QueueBackend, name: string): Promise<QueueCounts> {
  const link = queues.link({ shared: true, poolSize: 1 });
  const queue = new queues.Queue(name, link.options);
  queue.on('error', () => {});
  try {
    const counts = await withTimeout(queue.getJobCounts('waiting', 'active', 'failed', 'prioritized'));
    return {
      name,
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      failed: counts.failed ?? 0,
    };
  } catch (error) {
    return { name, error: (error as Error).message };
  } finally {
    await withTimeout(queue.close()).catch(() => {});
    await link.close();
  }
}

/** `promise`'s value, or its error's message. */
async function settle<T>(promise: Promise<T>): Promise<T | { error: string }> {
  try {
    return await withTimeout(promise);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** `promise`, or a rejection naming the timeout after {@link DOCTOR_TIMEOUT_MS}. */
function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${DOCTOR_TIMEOUT_MS / 1000} s`)),
      DOCTOR_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
