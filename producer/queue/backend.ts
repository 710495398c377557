/**
 * The queue backend: the one place that knows whether BullMQ runs on Redis or on its PostgreSQL
 * backend. Everything that makes a Queue, a Worker or a QueueEvents takes the constructors and the
 * connection options from a {@link QueueBackend}, so the queues, jobs and waiters have one code
 * path for both.
 *
 * - Redis: BullMQ's default classes on ioredis connections under the queue prefix (unchanged).
 * - Postgres: the classes `withBackend(createPostgresBackend)` binds (BullMQ 6.7), each object
 *   given a node-postgres pool config `{ connectionString, schema, max }`. BullMQ builds and owns
 *   that pool and one `LISTEN` connection per Worker or QueueEvents, and closes them with the
 *   object. All queues live in `schema` (BullMQ's namespace on Postgres: its `prefix` is ignored
 *   there); `compactor migrate` creates it ({@link migrateQueueSchema}). BullMQ loads the `pg`
 *   driver itself, only on this path.
 *
 * The Postgres classes are typed as BullMQ's default (Redis) classes: the queue API compactor uses
 * is the same on both backends; only `queue.backend` differs, which compactor reads nowhere.
 */
import {
  createPostgresBackend,
  PostgresConnection,
  type PostgresPoolConfig,
  Queue,
  QueueEvents,
  runMigrations,
  Worker,
  withBackend,
} from 'bullmq';
import { DEFAULT_QUEUE_SCHEMA, type QueueBackendKind } from '../../shared/protocol/queue-backend.ts';
import type { QueuePlace } from '../../shared/protocol/queue-workers.ts';
import { ASYNC_COMMIT_OPTIONS } from '../postgres/async-commit.ts';
import type { RedisConnection } from '../redis/redis.ts';

export { DEFAULT_QUEUE_SCHEMA, type QueueBackendKind };

/** The connection options of one BullMQ object, and how to let go of them when it is closed. */
export interface QueueLink {
  /** Spread into a Queue's, Worker's or QueueEvents's options. */
  readonly options: { connection: never; prefix?: string };
  /** Releases what the link opened (a Redis connection); call after closing the object. Never throws. */
  close(): Promise<void>;
}

/** What a link is for. */
export interface LinkOptions {
  /**
   * Redis: use the backend's shared connection (for queues that only add and read), not a new one.
   * Postgres: ignored (each object has its own pool, which BullMQ owns).
   */
  shared?: boolean;
  /** Postgres: most connections of the object's pool (default 3). Redis: ignored. */
  poolSize?: number;
  /**
   * Postgres: the object's commits do not wait for the WAL flush (`synchronous_commit = off`, see
   * producer/postgres/async-commit.ts), for a queue whose adds a later synchronous commit of the
   * same job makes durable. Redis: ignored. Default false.
   */
  asyncCommit?: boolean;
}

/** BullMQ's classes and connections for one backend. */
export interface QueueBackend {
  readonly kind: QueueBackendKind;
  /** Where the queues are, for logs (no password). */
  readonly where: string;
  /**
   * The queues' namespace (the prefix on Redis, BullMQ's schema on Postgres) and server: what the
   * worker registry records and producers compare (shared/protocol/queue-workers.ts).
   */
  readonly place: QueuePlace;
  readonly Queue: typeof Queue;
  readonly Worker: typeof Worker;
  readonly QueueEvents: typeof QueueEvents;
  /** Connection options for a new BullMQ object. */
  link(options?: LinkOptions): QueueLink;
}

/** Most connections of a BullMQ object's pool on Postgres unless a link asks for another number. */
export const DEFAULT_QUEUE_POOL_SIZE = 3;

/**
 * ms a pooled Postgres connection of a BullMQ object stays open unused: the queues that only add
 * now and then hold no connection between bursts.
 */
const IDLE_TIMEOUT_MS = 10_000;

/**
 * BullMQ on Redis: every link is a connection of its own made by `open` (a Worker's and a
 * QueueEvents's block on reads), closed with `close()`; a `shared` link is `shared`, left open.
 */
export function redisQueueBackend(options: {
  prefix: string;
  shared: RedisConnection;
  open: () => RedisConnection;
  where: string;
}): QueueBackend {
  return {
    kind: 'redis',
    where: options.where,
    place: { backend: 'redis', namespace: options.prefix, target: options.where },
    Queue,
    Worker,
    QueueEvents,
    link({ shared = false } = {}) {
      const connection = shared ? options.shared : options.open();
      return {
        options: { connection: connection as never, prefix: options.prefix },
        close: async () => {
          if (shared) return;
          await connection.quit().then(
            () => undefined,
            () => connection.disconnect(),
          );
        },
      };
    },
  };
}

/** Where BullMQ's PostgreSQL backend keeps the queues. */
export interface PostgresQueueTarget {
  /** postgres:// URL, or a node-postgres pool config (its `schema` and `max` are replaced). */
  connection: string | PostgresPoolConfig;
  /** The schema of BullMQ's tables (default {@link DEFAULT_QUEUE_SCHEMA}). */
  schema?: string;
  /** The application name the connections show in `pg_stat_activity` (default `compactor-queue`). */
  applicationName?: string;
}

/** BullMQ on Postgres: every link is a pool config, whose pool BullMQ builds, owns and closes. */
export function postgresQueueBackend(target: PostgresQueueTarget): QueueBackend {
  const bound = withBackend(createPostgresBackend);
  const base = poolConfigOf(target);
  return {
    kind: 'postgres',
    where: `${describePostgres(base.connectionString)} schema ${base.schema}`,
    place: { backend: 'postgres', namespace: base.schema, target: describePostgres(base.connectionString) },
    Queue: bound.Queue as unknown as typeof Queue,
    Worker: bound.Worker as unknown as typeof Worker,
    QueueEvents: bound.QueueEvents as unknown as typeof QueueEvents,
    link({ poolSize = DEFAULT_QUEUE_POOL_SIZE, asyncCommit = false } = {}) {
      const options = asyncCommit ? { options: withAsyncCommit(base.options) } : {};
      return {
        options: { connection: { ...base, max: poolSize, ...options } as never },
        close: async () => {},
      };
    },
  };
}

/**
 * The pool config every link of `target` starts from. Its connections show in `pg_stat_activity`
 * as `<application_name>-queue` when the URL names one (as compactor's own pool does), else as
 * `target.applicationName` (default `compactor-queue`): an operator, and a statement that looks
 * for a process's lock waits, tells BullMQ's connections from compactor's statements.
 */
function poolConfigOf(target: PostgresQueueTarget): PostgresPoolConfig & { schema: string } {
  const given =
    typeof target.connection === 'string' ? { connectionString: target.connection } : target.connection;
  const fallback = target.applicationName ?? 'compactor-queue';
  return {
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    application_name: fallback,
    ...given,
    ...(given.connectionString ? { connectionString: queueAppNamed(given.connectionString, fallback) } : {}),
    schema: target.schema ?? given.schema ?? DEFAULT_QUEUE_SCHEMA,
  };
}

/** libpq `options` (a config's own, if any) with every commit asynchronous. */
function withAsyncCommit(options: unknown): string {
  return typeof options === 'string' && options !== ''
    ? `${options} ${ASYNC_COMMIT_OPTIONS}`
    : ASYNC_COMMIT_OPTIONS;
}

/** The URL with `application_name` `<its own>-queue`, or `fallback` (a URL wins over the config's). */
function queueAppNamed(url: string, fallback: string): string {
  try {
    const u = new URL(url);
    const own = u.searchParams.get('application_name');
    u.searchParams.set('application_name', own ? `${own}-queue` : fallback);
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * Creates or updates BullMQ's tables in `target.schema` (BullMQ's own migrations, run in one
 * transaction under an advisory lock, so concurrent starters apply them once).
 * @returns the schema version the database is at.
 * @throws {Error} when the database cannot be reached, or holds a newer schema than this BullMQ.
 */
export async function migrateQueueSchema(target: PostgresQueueTarget): Promise<number> {
  const config = poolConfigOf(target);
  // BullMQ's connection loads `pg` and pins the schema; its migrations want one dedicated client.
  const connection = new PostgresConnection({ ...config, max: 1, skipMigrations: true });
  connection.on('error', () => {});
  try {
    const client = await connection.pool.connect();
    try {
      return await runMigrations(client, config.schema);
    } finally {
      client.release();
    }
  } finally {
    await connection.close();
  }
}

/** The URL without its password, for logs. */
function describePostgres(url: string | undefined): string {
  if (!url) return 'postgres (pool config)';
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    u.search = '';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
