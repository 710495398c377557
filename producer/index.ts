/**
 * The producer: what agent services call when a run finishes. Validates the event with the shared
 * zod schema, then enqueues it on the `compaction` queue with the job id `jobIdOf(tenantId, eventId)`
 * (a duplicate enqueue is a no-op; two tenants' equal ids are two jobs) and per-session deduplication with `keepLastIfActive` (at most one active and
 * one waiting job per session; a burst coalesces).
 */
import { randomUUID } from 'node:crypto';
import type { PostgresPoolConfig, Queue, QueueEvents } from 'bullmq';
import { CompactionFailedError, ConfigError, InvalidInputError } from '../shared/contract/errors.ts';
import {
  COMPACTION_QUEUE,
  type CompactionJobResult,
  deduplicationIdOf,
  describeZodError,
  jobIdOf,
  jobOptionsFor,
  RUN_COMPLETED,
  type RunCompletedEvent,
  type RunCompletedInput,
  runCompletedEventSchema,
} from '../shared/protocol/events.ts';
import { type QueueEnvironment, queueSettingsOf } from '../shared/protocol/queue-backend.ts';
import { WORKER_STALE_AFTER_MS } from '../shared/protocol/queue-workers.ts';
import { ledgerRow } from './postgres/compactions.ts';
import { type Database, type Db, DEFAULT_SCHEMA, openDatabase } from './postgres/db.ts';
import type { CompactionRow } from './postgres/schema.ts';
import {
  DEFAULT_QUEUE_SCHEMA,
  postgresQueueBackend,
  type QueueBackend,
  redisQueueBackend,
} from './queue/backend.ts';
import { postgresTenantBacklog, redisTenantBacklog, type TenantBacklog } from './queue/tenant-backlog.ts';
import {
  assertClusterPrefix,
  connectRedis,
  DEFAULT_QUEUE_PREFIX,
  describeTarget,
  parseClusterNodes,
  type RedisClusterSeed,
  type RedisConnection,
  type RedisTarget,
} from './redis/redis.ts';
import { watchWorkers } from './worker-watch.ts';

export {
  CompactionFailedError,
  ConfigError,
  ContextLimitError,
  DatabaseError,
  IdempotencyKeyReusedError,
  InvalidInputError,
  SessionLimitError,
} from '../shared/contract/errors.ts';
export { SESSION_FORMATS, type SessionFormat } from '../shared/contract/session-format.ts';
export {
  DEFAULT_LIMITS,
  type Limits,
  type LimitsInput,
  resolveLimits,
  type SessionLimits,
} from '../shared/policy/limits.ts';
export {
  type CompactionJobResult,
  jobIdOf,
  type RunCompletedEvent,
  type RunCompletedInput,
  SESSION_COMPACTED,
  SESSION_EVENTS_QUEUE,
  type SessionCompactedEvent,
  sessionCompactedEventSchema,
} from '../shared/protocol/events.ts';
export {
  DEFAULT_DATABASE_URL,
  DEFAULT_REDIS_URL,
  type QueueEnvironment,
  type QueueSettings,
  queueSettingsOf,
} from '../shared/protocol/queue-backend.ts';
export {
  describePlace,
  type LiveWorker,
  mismatchOf,
  type QueuePlace,
  WORKER_HEARTBEAT_MS,
  WORKER_STALE_AFTER_MS,
} from '../shared/protocol/queue-workers.ts';
export type {
  RecalledMessage,
  RecallHit,
  RecallReadInput,
  RecallReadResult,
  RecallSearchInput,
  RecallSearchResult,
} from '../shared/recall/schemas.ts';
export {
  type AnyLoadedContext,
  type ContextNotice,
  type LoadContextInput,
  type LoadedAiSdkContext,
  type LoadedChatContext,
  type LoadedContext,
  type LoadedFormatContext,
  type LoadedResponsesContext,
  loadContext,
} from './context.ts';
export {
  APPEND_REQUEST_TTL_MS,
  type AppendIdempotency,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  pruneAppendRequests,
} from './idempotency.ts';
export {
  assertSchema,
  connectionOptions,
  type Database,
  type DatabaseOptions,
  type Db,
  DEFAULT_SCHEMA,
  openDatabase,
} from './postgres/db.ts';
export { liveQueueWorkers } from './postgres/queue-workers.ts';
export {
  DEFAULT_QUEUE_POOL_SIZE,
  DEFAULT_QUEUE_SCHEMA,
  migrateQueueSchema,
  type PostgresQueueTarget,
  type QueueBackend,
  type QueueBackendKind,
} from './queue/backend.ts';
export type { TenantBacklog } from './queue/tenant-backlog.ts';
export { type RecallTarget, readRecall, searchRecall } from './recall.ts';
export {
  DEFAULT_CLUSTER_QUEUE_PREFIX,
  DEFAULT_QUEUE_PREFIX,
  hashTagOf,
  parseClusterNodes,
  type RedisClusterSeed,
  type RedisNode,
} from './redis/redis.ts';
export {
  type AppendMessage,
  type AppendOptions,
  type AppendResult,
  appendMessages,
  appendToLiveSession,
  type ChatCompletionsMessage,
  type CreateSessionInput,
  createSession,
  liveSessionOf,
  type NativeMessage,
  type NewMessage,
  type ResponsesInputItem,
  SessionContinuedError,
  SessionExistsError,
} from './sessions.ts';
export { assertTools, MAX_SESSION_TOOLS, setSessionTools } from './tools.ts';
export {
  DEFAULT_TOLERANCE_S,
  type SignatureFailure,
  type VerifyOptions,
  verifyWebhookSignature,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookHeaders,
  WebhookSignatureError,
} from './webhook-signature.ts';

/**
 * Where a producer's queue is, as the workers' `COMPACTOR_QUEUE_BACKEND` says:
 * - Redis: one server by URL, or a Redis Cluster by its seed nodes (as
 *   `COMPACTOR_REDIS_CLUSTER_NODES` spells them, `host:port,host:port` or
 *   `redis://user:password@host:port` entries, or parsed); on a cluster the `prefix` must hold a
 *   hash tag, e.g. `{compactor}` (BullMQ's rule for clusters);
 * - Postgres: compactor's database, by postgres:// URL or node-postgres pool config
 *   (`{ connectionString, ssl, ... }`), whose schema `queueSchema` (the workers'
 *   `COMPACTOR_QUEUE_SCHEMA`, default `compactor_queue`) holds BullMQ's tables. The tenants' backlog
 *   counts live in compactor's schema (`schema`, default `compactor`), reached through `db` when
 *   given, else through a small pool of the producer's own on the same URL. BullMQ loads the `pg`
 *   driver for it.
 * - None of them: the queue the environment names, by the rule the workers follow
 *   ({@link queueSettingsOf}: `COMPACTOR_QUEUE_BACKEND`, else Redis when `REDIS_URL` or
 *   `COMPACTOR_REDIS_CLUSTER_NODES` is set, else Postgres at `DATABASE_URL` in
 *   `COMPACTOR_QUEUE_SCHEMA`; the prefix `COMPACTOR_QUEUE_PREFIX`). A producer started with the
 *   workers' environment enqueues where they listen. This is the one case where the client reads
 *   `process.env` (or `environment`, when given), once, in `createProducer`.
 * At most one of `redisUrl`, `redisCluster` and `postgres` is given.
 */
export type ProducerConnection =
  | { redisUrl: string; redisCluster?: undefined; postgres?: undefined }
  | { redisCluster: string | RedisClusterSeed; redisUrl?: undefined; postgres?: undefined }
  | {
      postgres: string | PostgresPoolConfig;
      /** BullMQ's schema; default `compactor_queue`. */
      queueSchema?: string | undefined;
      /** compactor's schema, where the backlog counts live; default `compactor`. */
      schema?: string | undefined;
      redisUrl?: undefined;
      redisCluster?: undefined;
    }
  | {
      redisUrl?: undefined;
      redisCluster?: undefined;
      postgres?: undefined;
      queueSchema?: undefined;
      schema?: undefined;
    };

export type ProducerOptions = ProducerConnection & {
  /**
   * BullMQ key prefix on Redis; must match the workers' (`compactor`, the default, or `{compactor}`
   * on a cluster). Not used on Postgres, where `queueSchema` is the namespace. Unset with no
   * connection option: `COMPACTOR_QUEUE_PREFIX`, as the workers read it.
   */
  prefix?: string;
  /**
   * The environment the queue rule reads when no connection option is given; default
   * `process.env`. Ignored when a connection is given.
   */
  environment?: QueueEnvironment;
  /**
   * ms a queue may go without a live worker (one whose row in the worker registry was renewed)
   * before an enqueue on it is reported by {@link onWarning}, once per producer; 0 turns the check
   * off. Default 60,000. The registry is read through `db`, the producer's own pool on Postgres,
   * or, with no connection option, a one-connection pool on `DATABASE_URL`: a producer given only
   * `redisUrl` or `redisCluster` and no `db` does not check.
   */
  noWorkerWarningAfterMs?: number;
  /** Receives that warning, one line (default `console.warn`). */
  onWarning?: (line: string) => void;
  /**
   * compactor's database (`openDatabase`). When given, `compactNow` reads the ledger row of a
   * settled compaction and returns it as `compaction`.
   */
  db?: Db;
};

/**
 * The connection a worker's configuration names, for {@link createProducer}: its database and queue
 * schema on the `postgres` backend; else its Redis (its cluster when it has one).
 */
export function connectionOf(config: {
  queueBackend?: 'redis' | 'postgres' | undefined;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  queueSchema?: string | undefined;
  redisUrl: string;
  redisCluster?: RedisClusterSeed | undefined;
}): ProducerConnection {
  if (config.queueBackend === 'postgres') {
    if (!config.databaseUrl)
      throw new ConfigError('connectionOf: the postgres queue backend needs databaseUrl');
    return { postgres: config.databaseUrl, queueSchema: config.queueSchema, schema: config.databaseSchema };
  }
  return config.redisCluster ? { redisCluster: config.redisCluster } : { redisUrl: config.redisUrl };
}

export interface EnqueueResult {
  /**
   * The job id (`jobIdOf(tenantId, eventId)`: `<tenant>~<eventId>`), or the id of the job this
   * event was coalesced into.
   */
  jobId: string;
  /**
   * True when the event was coalesced into another job of the same session (one already waiting).
   * A duplicate of an earlier eventId returns that job's id with `coalesced: false`; it is a no-op.
   */
  coalesced: boolean;
}

export interface Producer {
  /**
   * Enqueues `session.run.completed`. It does not look the session up: the producer needs no
   * database handle, and an agent service may write its sessions in a transaction of its own that
   * commits after this call. An event for a session the tenant does not have is failed for good by
   * the worker (no retry); the HTTP API and `compactor enqueue`, which read the database anyway,
   * refuse it when it is sent (404, exit 1).
   * @throws {InvalidInputError} naming the bad field; nothing is enqueued.
   * @throws {Error} when the queue's Redis or Postgres cannot be reached (fails fast; it does not
   *   queue in memory).
   */
  runCompleted(input: RunCompletedInput): Promise<EnqueueResult>;
  /**
   * Compacts a session now and waits for the outcome, for an agent about to overflow its window:
   * enqueues a manual `session.run.completed` (which skips the triggers) as a job of its own — not
   * coalesced into a waiting event's job, whose triggers might skip it — and resolves when the
   * worker has applied or skipped it. Correctness is the worker's as for any job: a concurrent
   * event for the session is applied at most once under its own idempotency key, and the lease
   * and the version fence serialise the two.
   * @param options.timeoutMs how long to wait, ms (default 60,000); then `{ state: 'running' }`
   *   with the job id, and the job goes on. 0 (or less): enqueue and answer `running` at once.
   * @throws {InvalidInputError} naming a bad field; nothing is enqueued.
   * @throws {CompactionFailedError} with the job's failure reason and id when it failed for good.
   * @throws {Error} when the queue's Redis or Postgres is down.
   */
  compactNow(target: CompactNowTarget, options?: { timeoutMs?: number }): Promise<CompactNowResult>;
  /** The underlying BullMQ queue (for Bull Board, counts, tests). */
  queue: Queue;
  /** The backend the queue is on (its classes make more queues and waiters on the same place). */
  queues: QueueBackend;
  /** The tenants' backlog counts that rank the jobs this producer adds (a sweep shares them). */
  backlog: TenantBacklog;
  close(): Promise<void>;
}

/** The session `compactNow` compacts, and optionally with which strategy. */
export type CompactNowTarget = Pick<RunCompletedInput, 'tenantId' | 'sessionId' | 'strategy'> & {
  /** Defaults to a new UUID; the job id and idempotency key, as for any event. */
  eventId?: string;
};

/** What `compactNow` saw: the job's result once it settled, or that it is still running. */
export type CompactNowResult =
  | {
      state: 'settled';
      jobId: string;
      result: CompactionJobResult;
      /**
       * The ledger row the job wrote (applied, skipped, ...), when the producer was given `db`;
       * else null, as it is while a batch summary is pending.
       */
      compaction: CompactionRow | null;
    }
  | { state: 'running'; jobId: string };

/** Validates an event without enqueueing it. @throws {InvalidInputError} naming the bad field. */
export function parseRunCompleted(input: unknown): RunCompletedEvent {
  const parsed = runCompletedEventSchema.safeParse(input);
  if (!parsed.success) throw new InvalidInputError(`invalid event: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/**
 * The Redis the options name.
 * @throws {ConfigError} with neither `redisUrl` nor `redisCluster`, bad seed nodes, or a cluster
 *   prefix without a hash tag.
 */
export function producerTarget(options: {
  redisUrl?: string | undefined;
  redisCluster?: string | RedisClusterSeed | undefined;
  prefix?: string | undefined;
}): RedisTarget {
  const { redisCluster, redisUrl } = options;
  if (redisCluster !== undefined) {
    const cluster =
      typeof redisCluster === 'string' ? parseClusterNodes(redisCluster, 'redisCluster') : redisCluster;
    if (cluster.nodes.length === 0) throw new ConfigError('redisCluster: no seed node');
    assertClusterPrefix(options.prefix ?? DEFAULT_QUEUE_PREFIX, 'prefix');
    return { cluster };
  }
  if (!redisUrl)
    throw new ConfigError(
      'createProducer: give redisUrl (one Redis), redisCluster (seed nodes) or postgres (the queue in Postgres)',
    );
  return { url: redisUrl };
}

/**
 * The options with their connection made explicit: as given, or by the shared queue rule from
 * the environment ({@link queueSettingsOf}), with the rule's database as `registryUrl` (where the
 * worker registry is read when the options give no `db`).
 * @throws {ConfigError} when the environment's `COMPACTOR_QUEUE_BACKEND` is not a backend.
 */
export function resolveProducerOptions(options: ProducerOptions): {
  options: ProducerOptions;
  registryUrl?: string;
  registrySchema?: string | undefined;
} {
  if (options.redisUrl !== undefined || options.redisCluster !== undefined || options.postgres !== undefined)
    return { options };
  const rule = queueSettingsOf(options.environment ?? process.env);
  const prefix = options.prefix ?? rule.prefix;
  const registry = { registryUrl: rule.databaseUrl, registrySchema: rule.databaseSchema };
  if (rule.backend === 'postgres') {
    return {
      options: {
        ...options,
        postgres: rule.databaseUrl,
        queueSchema: rule.queueSchema,
        schema: rule.databaseSchema,
        prefix,
      },
      ...registry,
    };
  }
  const redis =
    rule.redisClusterNodes !== undefined
      ? { redisCluster: rule.redisClusterNodes }
      : { redisUrl: rule.redisUrl };
  return { options: { ...options, ...redis, prefix }, ...registry };
}

/** What a producer enqueues through, on either backend. */
interface Wiring {
  queues: QueueBackend;
  backlog: TenantBacklog;
  /** compactor's database, when the wiring opened one (Postgres without `db`). */
  db?: Db;
  /** Resolves once the queue's store can take a job; rejects naming it when it cannot. */
  ready(): Promise<void>;
  /** Closes what the wiring opened itself (after the queue and the events are closed). */
  close(): Promise<void>;
}

/**
 * The Redis wiring: a connection that fails commands fast instead of buffering while offline (on a
 * cluster, a command whose primary just died fails once ioredis's redirections and retries are
 * spent, about a second and a half, before a replica may have taken over: the caller retries with
 * the same `eventId`, which BullMQ takes as the same job), and blocking connections of their own
 * for the events.
 */
function redisWiring(options: ProducerOptions): Wiring {
  const redisTarget = producerTarget(options);
  const prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
  const connection = connectRedis(redisTarget, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
  });
  connection.on('error', () => {
    // Reported to callers through the rejected command; avoid an unhandled 'error' event.
  });
  return {
    queues: redisQueueBackend({
      prefix,
      shared: connection,
      open: () => {
        const blocking = connectRedis(redisTarget, { maxRetriesPerRequest: null });
        blocking.on('error', () => {});
        return blocking;
      },
      where: describeTarget(redisTarget),
    }),
    // Its commands fail while the connection is not ready (no offline queue): each waits for it.
    backlog: readyFirst(redisTenantBacklog(connection, prefix), () => waitReady(connection)),
    ready: () => waitReady(connection),
    close: () =>
      connection.quit().then(
        () => undefined,
        () => connection.disconnect(),
      ),
  };
}

/** `backlog`, each call of which first waits for `ready`. */
function readyFirst(backlog: TenantBacklog, ready: () => Promise<void>): TenantBacklog {
  return {
    take: async (tenantId) => {
      await ready();
      return backlog.take(tenantId);
    },
    release: async (tenantId) => {
      await ready();
      return backlog.release(tenantId);
    },
  };
}

/**
 * The Postgres wiring: BullMQ's PostgreSQL backend in `queueSchema` (a connection attempt gives up
 * after 5 s, as on Redis), the backlog counts through `db` or a two-connection pool of its own.
 * @throws {ConfigError} with a pool config that has no `connectionString` and no `db`.
 */
function postgresWiring(options: ProducerOptions & { postgres: string | PostgresPoolConfig }): Wiring {
  const given =
    typeof options.postgres === 'string' ? { connectionString: options.postgres } : options.postgres;
  const queues = postgresQueueBackend({
    connection: { connectionTimeoutMillis: 5_000, ...given },
    schema: options.queueSchema ?? given.schema ?? DEFAULT_QUEUE_SCHEMA,
  });
  let own: Database | undefined;
  if (!options.db) {
    if (!given.connectionString)
      throw new ConfigError('createProducer: postgres as a pool config needs a connectionString, or give db');
    own = openDatabase(given.connectionString, { max: 2, schema: options.schema ?? DEFAULT_SCHEMA });
  }
  const db = options.db ?? (own as Database).db;
  return {
    queues,
    backlog: postgresTenantBacklog(db),
    db,
    // Nothing to wait for: a statement fails at once while Postgres is down, naming it.
    ready: async () => {},
    close: async () => {
      await own?.close();
    },
  };
}

/**
 * Opens a producer on Redis (`redisUrl`, `redisCluster`), Postgres (`postgres`), or, given none,
 * the queue the environment names by the workers' rule ({@link resolveProducerOptions}). Nothing
 * connects until the first call. After an enqueue it checks the worker registry and warns once
 * when no worker listens on its queue ({@link ProducerOptions.noWorkerWarningAfterMs}).
 * @throws {ConfigError} as {@link producerTarget}, or for a `postgres` pool config without a
 *   `connectionString` and without `db`, or a bad `COMPACTOR_QUEUE_BACKEND` in the environment.
 */
export function createProducer(given: ProducerOptions = {}): Producer {
  const resolved = resolveProducerOptions(given);
  const { options } = resolved;
  const wiring =
    options.postgres !== undefined
      ? postgresWiring({ ...options, postgres: options.postgres })
      : redisWiring(options);
  const { queues, backlog } = wiring;
  // The worker registry: through the caller's db, the wiring's, or one connection of our own.
  let registry: Database | undefined;
  const registryDb = options.db ?? wiring.db;
  const registryUrl = resolved.registryUrl;
  const watch =
    registryDb || registryUrl
      ? watchWorkers({
          place: queues.place,
          db: () => {
            if (registryDb) return registryDb;
            registry ??= openDatabase(registryUrl as string, {
              max: 1,
              schema: resolved.registrySchema ?? DEFAULT_SCHEMA,
            });
            return registry.db;
          },
          staleAfterMs: options.noWorkerWarningAfterMs ?? WORKER_STALE_AFTER_MS,
          warn: options.onWarning ?? ((line) => console.warn(line)),
        })
      : undefined;
  const link = queues.link({ shared: true });
  const queue = new queues.Queue(COMPACTION_QUEUE, {
    ...link.options,
    defaultJobOptions: jobOptionsFor(queues.kind),
  });
  queue.on('error', () => {});
  /**
   * Adds a compaction job at its tenant's fair priority (producer/redis/tenant-backlog.ts); a job
   * that was not added (coalesced into a waiting one, or the add failed) is counted out again.
   */
  const addJob = async (event: RunCompletedEvent, deduplicate: boolean) => {
    const ownId = jobIdOf(event.tenantId, event.eventId);
    const priority = await backlog.take(event.tenantId);
    const countOut = () => backlog.release(event.tenantId).catch(() => 0);
    try {
      const job = await queue.add(RUN_COMPLETED, event, {
        jobId: ownId,
        priority,
        ...(deduplicate ? { deduplication: { id: deduplicationIdOf(event), keepLastIfActive: true } } : {}),
      });
      const jobId = job.id ?? ownId;
      if (jobId !== ownId) await countOut();
      return { job, jobId, coalesced: jobId !== ownId };
    } catch (error) {
      await countOut();
      throw error;
    }
  };
  let closing: Promise<void> | undefined;
  // Made on the first compactNow: QueueEvents holds a blocking connection of its own.
  let events: QueueEvents | undefined;
  const eventsLink = { current: undefined as ReturnType<QueueBackend['link']> | undefined };
  return {
    queue,
    queues,
    backlog,
    async compactNow(target, waitOptions = {}) {
      const event = parseRunCompleted({ eventId: randomUUID(), ...target, trigger: 'manual' });
      const timeoutMs = waitOptions.timeoutMs ?? 60_000;
      await wiring.ready();
      if (timeoutMs <= 0) {
        const { jobId } = await addJob(event, false);
        watch?.afterEnqueue();
        return { state: 'running', jobId };
      }
      if (!events) {
        eventsLink.current = queues.link({ poolSize: 1 });
        events = new queues.QueueEvents(COMPACTION_QUEUE, eventsLink.current.options);
        events.on('error', () => {});
      }
      await events.waitUntilReady();
      const { job, jobId } = await addJob(event, false);
      watch?.afterEnqueue();
      try {
        const result = (await job.waitUntilFinished(events, timeoutMs)) as CompactionJobResult;
        const compaction =
          options.db && result.compactionId
            ? await ledgerRow(options.db, event.tenantId, result.compactionId)
            : null;
        return { state: 'settled', jobId, result, compaction };
      } catch (error) {
        if (error instanceof Error && /timed out before finishing/.test(error.message)) {
          return { state: 'running', jobId };
        }
        if (error instanceof Error && (await job.getState().catch(() => 'unknown')) === 'failed') {
          throw new CompactionFailedError(error.message, jobId);
        }
        throw error;
      }
    },
    async runCompleted(input) {
      const event = parseRunCompleted(input);
      await wiring.ready();
      const { jobId, coalesced } = await addJob(event, true);
      watch?.afterEnqueue();
      return { jobId, coalesced };
    },
    close: () => {
      closing ??= Promise.resolve(watch?.settled())
        .then(() => registry?.close())
        .catch(() => {})
        .then(() => events?.close())
        .catch(() => {})
        .then(() => eventsLink.current?.close())
        .then(() => queue.close())
        .catch(() => {})
        .then(() => link.close())
        .then(() => wiring.close())
        .catch(() => {})
        .then(() => undefined);
      return closing;
    },
  };
}

/**
 * Resolves once connected; rejects after the connect timeout with a message naming Redis. Callers
 * waiting at the same time share one wait (a burst of events adds one listener, not one each).
 */
function waitReady(connection: RedisConnection): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  let pending = waits.get(connection);
  if (!pending) {
    pending = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`Redis not reachable (status ${connection.status}); the event was not enqueued`));
      }, 5_000);
      const onReady = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        clearTimeout(timer);
        connection.off('ready', onReady);
        waits.delete(connection);
      };
      connection.on('ready', onReady);
    });
    waits.set(connection, pending);
  }
  return pending;
}

const waits = new WeakMap<RedisConnection, Promise<void>>();
