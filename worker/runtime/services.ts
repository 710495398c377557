/**
 * Opens what a compactor process talks to (Postgres, Redis, the summarizer) from a typed config,
 * and closes it all in one idempotent call that runs every step even if one fails.
 */

import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { type Database, openDatabase } from '../../producer/postgres/db.ts';
import {
  DEFAULT_QUEUE_SCHEMA,
  postgresQueueBackend,
  type QueueBackend,
  redisQueueBackend,
} from '../../producer/queue/backend.ts';
import {
  postgresTenantBacklog,
  redisTenantBacklog,
  type TenantBacklog,
} from '../../producer/queue/tenant-backlog.ts';
import {
  connectRedis,
  describeTarget,
  duplicateConnection,
  type RedisConnection,
  type RedisTarget,
} from '../../producer/redis/redis.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { extendModelPrices } from '../../shared/summary/pricing.ts';
import { type Config, queueBackendOfConfig, redisTargetOf } from '../config/config.ts';
import { tracedLlmCalls } from '../observability/tracing.ts';
import type { Budgets, Leases, Summarizers } from '../pipeline/ports.ts';
import { PostgresBudgets } from '../postgres/budgets.ts';
import { PostgresLeases } from '../postgres/lease.ts';
import { PolicyCache } from '../postgres/policy-cache.ts';
import { pingPostgres } from '../postgres/queries/health.ts';
import { PostgresReads } from '../postgres/reads.ts';
import { createPostgresTenantSlots } from '../postgres/tenant-slots.ts';
import { PostgresWrites } from '../postgres/writes.ts';
import { LeaseManager } from '../redis/lease.ts';
import { createTenantSlots, type TenantSlots, type TenantSlotsOptions } from '../redis/tenant-slots.ts';
import type { AnthropicBatches } from '../summarizers/anthropic.ts';
import { batchesFor, summarizerFor, summarizersFor } from '../summarizers/index.ts';
import { type ConnectionStateLog, queueStateLog } from './redis-state.ts';
import { runAll } from './run-all.ts';

export type { QueueBackend, TenantBacklog, TenantSlots, TenantSlotsOptions };
export { runAll };

export interface Services {
  config: Config;
  logger: Logger;
  database: Database;
  /**
   * Where the queues live, and the constructors and connections of every BullMQ object the process
   * makes (producer/queue/backend.ts): Redis or Postgres, as `config.queueBackend` says.
   */
  queues: QueueBackend;
  /**
   * On the `redis` backend: the shared connection for leases, backlog counts and tenant slots;
   * BullMQ-safe (`maxRetriesPerRequest: null`). A `Cluster` when the config names one: duplicate it
   * with `duplicateConnection` (producer/redis/redis.ts). Null on the `postgres` backend, where
   * those live in compactor's schema.
   */
  redis: RedisConnection | null;
  /**
   * Where every queue client and BullMQ object of the process reports its errors: an outage is
   * logged once when lost and once when restored (worker/runtime/redis-state.ts).
   */
  queueState: ConnectionStateLog;
  /** The tenants' backlog counts, which give compaction jobs their fair priority. */
  backlog: TenantBacklog;
  /** The tenants' worker slots (worker/redis/tenant-slots.ts, worker/postgres/tenant-slots.ts). */
  tenantSlots(options: TenantSlotsOptions): TenantSlots;
  /** The policies jobs read, cached and kept current by `LISTEN` (worker/postgres/policy-cache.ts). */
  policies: PolicyCache;
  /** The pipeline's read port: sessions and the ledger, the gate's policies from {@link policies}. */
  reads: PostgresReads;
  /** The pipeline's fenced-write port, on the same database. */
  writes: PostgresWrites;
  leases: Leases;
  /** The spend budgets: checks and reservations of paid summaries (worker/postgres/budgets.ts). */
  budgets: Budgets;
  /**
   * The summarizers this process can run: the primary one (`anthropic` with an API key, else
   * `extractive`), those a strategy may name (`summarizer`), and the offline `extractive` one that
   * stands in when a budget refuses a summary, a summary scores under `minFidelity` or a last
   * attempt falls back.
   */
  summarizers: Summarizers;
  /** Message Batches client (batch summaries for sweeps), when an Anthropic key is set. */
  batches: AnthropicBatches | null;
  /** Closes Redis (if any) and Postgres; every step runs, errors are logged. Memoized. */
  close(): Promise<void>;
}

export interface ServiceOverrides {
  /** Replaces the summarizers of the config: each one given replaces its slot (`named` whole). */
  summarizers?: Partial<Summarizers>;
  batches?: AnthropicBatches | null;
  /** Postgres pool size; default {@link poolSizeFor} the config. */
  poolSize?: number;
  /**
   * Whether the policy cache holds a LISTEN connection for policy changes; default true. A one-shot
   * command (`compact`, `restore`, `purge`) reads policies once or never: it passes false and reads
   * them per use, without the extra connection.
   */
  listenForPolicies?: boolean;
  /**
   * Opens the sockets of the process's Postgres connections, for a benchmark that counts what goes
   * over the wire (test/bench/wire-tap.ts): `database` those of compactor's pool (connected,
   * postgres.js's `socket`), `queue` those of BullMQ's pools on the `postgres` backend
   * (unconnected, node-postgres's `stream`). Default: the drivers connect.
   */
  sockets?: { database?: () => Socket; queue?: () => Socket };
}

/**
 * Postgres connections of a process unless `COMPACTOR_DB_POOL_SIZE` says otherwise, whatever its
 * concurrency (postgres.js's own default). A job holds a connection only while its statements run;
 * most of a summary's time is the LLM call. More connections than the database has cores to run
 * them make every statement slower: at 128 jobs in flight on a 2-core machine running Postgres
 * beside the worker (test/bench part 2), a pool of 32 against 10 cost 11–20 ms of Postgres CPU a
 * job against 7–12 (the archive statement 27 ms a call against 9, the same rows and pages), with no
 * more jobs a second. PostgreSQL's wiki ("Number Of Database Connections") sizes a server's active
 * connections at about twice its cores in all, and every worker process opens a pool of its own.
 */
export const DEFAULT_POOL_SIZE = 10;

/**
 * The Postgres pool of a process that runs compactions: `COMPACTOR_DB_POOL_SIZE` when set, else
 * {@link DEFAULT_POOL_SIZE}, shared by its jobs, the sweep service and the batch collector. With
 * fewer connections than jobs in flight, postgres.js queues a statement until a connection is free.
 */
export function poolSizeFor(config: Pick<Config, 'dbPoolSize'>): number {
  return config.dbPoolSize ?? DEFAULT_POOL_SIZE;
}

/** Opens the services lazily: nothing connects until first use. */
export function openServices(config: Config, logger: Logger, overrides: ServiceOverrides = {}): Services {
  // The operator's prices, for every cost this process computes (ledger, budgets, payback).
  extendModelPrices(config.modelPrices ?? {});
  const database = openDatabase(config.databaseUrl, {
    max: overrides.poolSize ?? poolSizeFor(config),
    schema: config.databaseSchema,
    ...(overrides.sockets?.database ? { socket: overrides.sockets.database } : {}),
  });
  let closing: Promise<void> | undefined;
  const coordination = coordinationOf(
    config,
    logger,
    database,
    () => closing !== undefined,
    overrides.sockets?.queue,
  );
  const { redis } = coordination;
  // Jobs read policies from this cache; policy writes NOTIFY it (worker/postgres/policy-cache.ts).
  const policies = new PolicyCache(
    database.db,
    overrides.listenForPolicies === false
      ? {}
      : {
          listen: database.sql,
          onListenError: (error) =>
            logger.warn({ err: error }, 'cannot LISTEN for policy changes; reading policies per job'),
        },
  );
  const reads = new PostgresReads(database.db, policies);
  return {
    config,
    logger,
    database,
    ...coordination,
    policies,
    reads,
    writes: new PostgresWrites(database.db, reads),
    budgets: new PostgresBudgets(database.db),
    summarizers: {
      // Each LLM request in its OpenTelemetry GenAI span (a no-op until the service registers an SDK).
      primary: overrides.summarizers?.primary ?? summarizerFor(config, tracedLlmCalls),
      named: overrides.summarizers?.named ?? summarizersFor(config, tracedLlmCalls),
      offline: overrides.summarizers?.offline ?? createExtractiveSummarizer(),
    },
    batches: overrides.batches !== undefined ? overrides.batches : batchesFor(config),
    close: () => {
      closing ??= runAll(logger, [
        async () => {
          await redis?.quit();
        },
        () => database.close(),
      ]);
      return closing;
    },
  };
}

/** What a process coordinates on: the queues, the leases, the tenants' counts and slots. */
type Coordination = Pick<Services, 'queues' | 'redis' | 'queueState' | 'backlog' | 'tenantSlots' | 'leases'>;

/**
 * The queue backend of `config` and what lives beside it: on `redis`, one shared ioredis
 * connection for leases, counts and slots (each BullMQ object duplicates it); on `postgres`,
 * BullMQ's PostgreSQL backend in `config.queueSchema` and the rest in compactor's schema on
 * `database`, whose pool errors the state log reports.
 */
function coordinationOf(
  config: Config,
  logger: Logger,
  database: Database,
  closed: () => boolean,
  queueSocket?: () => Socket,
): Coordination {
  if (queueBackendOfConfig(config) === 'postgres') {
    const queues = postgresQueueBackend({
      connection: queueSocket
        ? { connectionString: config.databaseUrl, stream: queueSocket }
        : config.databaseUrl,
      schema: config.queueSchema ?? DEFAULT_QUEUE_SCHEMA,
    });
    const queueState = queueStateLog(logger, queues.where, {
      dependency: 'Postgres',
      probe: () => untilAnswers(() => pingPostgres(database.sql), closed),
    });
    return {
      queues,
      redis: null,
      queueState,
      backlog: postgresTenantBacklog(database.db),
      tenantSlots: (options) => createPostgresTenantSlots(database.db, options),
      leases: new PostgresLeases(database.db, { ttlMs: config.leaseTtlMs }),
    };
  }
  const target = redisTargetOf(config);
  // The probe runs on a lost connection, after `redis` exists: it waits for the reconnection.
  const queueState = queueStateLog(logger, describeTarget(target), { probe: () => redis.ping() });
  const redis = createRedis(target, queueState);
  return {
    queues: redisQueueBackend({
      prefix: config.queuePrefix,
      shared: redis,
      open: () => duplicateConnection(redis),
      where: describeTarget(target),
    }),
    redis,
    queueState,
    backlog: redisTenantBacklog(redis, config.queuePrefix),
    tenantSlots: (options) => createTenantSlots(redis, options),
    leases: new LeaseManager(redis, { prefix: config.queuePrefix, ttlMs: config.leaseTtlMs }),
  };
}

/**
 * Resolves once `ping` does, trying every second (a Postgres pool fails a statement at once while
 * the server is down, where a Redis client waits for its reconnection); rejects once `closed()`.
 */
async function untilAnswers(ping: () => Promise<unknown>, closed: () => boolean): Promise<void> {
  for (;;) {
    if (closed()) throw new Error('closed');
    try {
      await ping();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
    }
  }
}

/**
 * An ioredis connection (a `Redis`, or a `Cluster` for a cluster target) as BullMQ wants it
 * (`maxRetriesPerRequest: null`: commands wait for a reconnect instead of failing), reporting its
 * errors and its readiness to `state`, which logs each change of state once.
 */
export function createRedis(target: RedisTarget, state: ConnectionStateLog): RedisConnection {
  const redis = connectRedis(target, { maxRetriesPerRequest: null, lazyConnect: false });
  state.watch(redis, 'Redis connection');
  redis.on('ready', () => state.ready());
  return redis;
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
