/**
 * The queue backends compactor runs on: BullMQ on Redis, or BullMQ's PostgreSQL backend. The names
 * are what `COMPACTOR_QUEUE_BACKEND` takes and what logs and `/readyz` call them.
 *
 * {@link queueSettingsOf} is the one rule that says, from an environment, which backend, URL and
 * prefix or schema the queues are on: the worker's configuration (worker/config/config.ts) and a
 * producer created without queue options (producer/index.ts) both call it, so the two sides of a
 * queue agree by construction.
 */
import { ConfigError } from '../contract/errors.ts';

/** The backends, as `COMPACTOR_QUEUE_BACKEND` spells them. */
export const QUEUE_BACKENDS = ['redis', 'postgres'] as const;

/** One of {@link QUEUE_BACKENDS}. */
export type QueueBackendKind = (typeof QUEUE_BACKENDS)[number];

/**
 * The Postgres schema BullMQ's tables live in on the `postgres` backend unless configured
 * otherwise (`COMPACTOR_QUEUE_SCHEMA`): apart from compactor's own schema, in the same database.
 */
export const DEFAULT_QUEUE_SCHEMA = 'compactor_queue';

/** The queue prefix of a single Redis when none is configured (unchanged, so queues are kept). */
export const DEFAULT_QUEUE_PREFIX = 'compactor';
/** The queue prefix of a Redis Cluster when none is configured: hash-tagged. */
export const DEFAULT_CLUSTER_QUEUE_PREFIX = '{compactor}';

/** compactor's database when `DATABASE_URL` is unset. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/compactor';
/** The Redis of the `redis` backend when `REDIS_URL` is unset (and `COMPACTOR_QUEUE_BACKEND=redis`). */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * The environment variables {@link queueSettingsOf} reads, as the worker's environment spells them.
 * Unset and empty count the same.
 */
export interface QueueEnvironment {
  /** Any other variable (`process.env` as it is): not read. */
  readonly [name: string]: string | undefined;
  readonly DATABASE_URL?: string | undefined;
  readonly COMPACTOR_SCHEMA?: string | undefined;
  readonly COMPACTOR_QUEUE_BACKEND?: string | undefined;
  readonly COMPACTOR_QUEUE_SCHEMA?: string | undefined;
  readonly COMPACTOR_QUEUE_PREFIX?: string | undefined;
  readonly REDIS_URL?: string | undefined;
  readonly COMPACTOR_REDIS_CLUSTER_NODES?: string | undefined;
}

/** Where an environment's queues are, by {@link queueSettingsOf}. */
export interface QueueSettings {
  /** `COMPACTOR_QUEUE_BACKEND`; unset: `redis` when a Redis is named, else `postgres`. */
  backend: QueueBackendKind;
  /** `DATABASE_URL`, default {@link DEFAULT_DATABASE_URL}: compactor's database (and the queue's on `postgres`). */
  databaseUrl: string;
  /** `COMPACTOR_SCHEMA`; undefined: the default (`compactor`). */
  databaseSchema: string | undefined;
  /** `COMPACTOR_QUEUE_SCHEMA`, default {@link DEFAULT_QUEUE_SCHEMA}: BullMQ's schema on `postgres`. */
  queueSchema: string;
  /** `REDIS_URL`, default {@link DEFAULT_REDIS_URL} (unused with a cluster or on `postgres`). */
  redisUrl: string;
  /** `COMPACTOR_REDIS_CLUSTER_NODES` as written (its parser is the Redis adapter's), or undefined. */
  redisClusterNodes: string | undefined;
  /**
   * `COMPACTOR_QUEUE_PREFIX`; unset: {@link DEFAULT_QUEUE_PREFIX}, or {@link DEFAULT_CLUSTER_QUEUE_PREFIX}
   * with a cluster. BullMQ's namespace on Redis (Postgres ignores it: {@link queueSchema} is).
   */
  prefix: string;
}

/**
 * The queue an environment names. The backend is `COMPACTOR_QUEUE_BACKEND` when set; else `redis`
 * when the environment names a Redis (`REDIS_URL` or `COMPACTOR_REDIS_CLUSTER_NODES`), else
 * `postgres`: a deployment that names its Redis stays on it, one with only Postgres needs no Redis.
 * Pure: the caller hands the environment in (the worker its parsed one, a producer `process.env`).
 * @throws {ConfigError} when `COMPACTOR_QUEUE_BACKEND` is neither `redis` nor `postgres`.
 */
export function queueSettingsOf(env: QueueEnvironment): QueueSettings {
  const set = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
  const backendName = set(env.COMPACTOR_QUEUE_BACKEND);
  if (backendName !== undefined && !(QUEUE_BACKENDS as readonly string[]).includes(backendName)) {
    throw new ConfigError(
      `COMPACTOR_QUEUE_BACKEND: must be ${QUEUE_BACKENDS.join(' or ')}, got "${backendName}"`,
    );
  }
  const redisUrl = set(env.REDIS_URL);
  const redisClusterNodes = set(env.COMPACTOR_REDIS_CLUSTER_NODES);
  const namesRedis = redisUrl !== undefined || redisClusterNodes !== undefined;
  return {
    backend: (backendName as QueueBackendKind | undefined) ?? (namesRedis ? 'redis' : 'postgres'),
    databaseUrl: set(env.DATABASE_URL) ?? DEFAULT_DATABASE_URL,
    databaseSchema: set(env.COMPACTOR_SCHEMA),
    queueSchema: set(env.COMPACTOR_QUEUE_SCHEMA) ?? DEFAULT_QUEUE_SCHEMA,
    redisUrl: redisUrl ?? DEFAULT_REDIS_URL,
    redisClusterNodes,
    prefix:
      set(env.COMPACTOR_QUEUE_PREFIX) ??
      (redisClusterNodes !== undefined ? DEFAULT_CLUSTER_QUEUE_PREFIX : DEFAULT_QUEUE_PREFIX),
  };
}
