/**
 * An integration test file's own resources, set up once for the file and torn down after it:
 *
 *     const ctx = useIntegration({ anthropic: true });
 *     it('compacts', async () => {
 *       ctx.startWorker({ concurrency: 2 });
 *       await ctx.producer.runCompleted(event);
 *     });
 *
 * `useIntegration` registers the file's `beforeAll` and `afterAll` itself, so a file states what it
 * needs instead of repeating how to open and close it. `beforeAll` clones a database from the
 * migrated template, picks a BullMQ prefix and, with `anthropic`, starts the fake Messages API; the
 * rest (producer, store, Redis client, services, workers) is made on first use, so a file opens only
 * what it touches. `afterAll` closes what was opened, users before what they use, then deletes the
 * prefix's Redis keys and drops the database, which fails if a connection leaked.
 *
 * This lives apart from `fixtures.ts` because that module is also loaded by unit tests and by the
 * tsx scripts (bench, soak, fidelity), which should not load the producer, BullMQ and the fake server.
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { createProducer, type Producer } from '../../producer/index.ts';
import { postgresQueueBackend, type QueueBackend, redisQueueBackend } from '../../producer/queue/backend.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { Config } from '../../worker/config/config.ts';
import { systemClock } from '../../worker/pipeline/clock.ts';
import {
  type CompactionOutcome,
  type CompactionRequest,
  type PipelineDeps,
  runCompaction,
} from '../../worker/pipeline/pipeline.ts';
import type { Leases, Summarizers } from '../../worker/pipeline/ports.ts';
import { PostgresLeases } from '../../worker/postgres/lease.ts';
import { PostgresReads } from '../../worker/postgres/reads.ts';
import { PostgresWrites } from '../../worker/postgres/writes.ts';
import {
  type CompactionWorker,
  startWorker,
  type WorkerOptions,
} from '../../worker/queue/compaction/worker.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { openServices, type ServiceOverrides, type Services } from '../../worker/runtime/services.ts';
import { REDIS_URL, type TestQueueBackend, testQueueBackend } from './env.ts';
import { type FakeAnthropicHandle, FakeAnthropicServer } from './fake-anthropic.ts';
import {
  cleanRedis,
  createTestDatabase,
  silentLogger,
  type TestDatabase,
  testConfig,
  testPrefix,
} from './fixtures.ts';

/**
 * Postgres connections of each services object a test opens: the files run side by side against
 * one server, and a test runs few statements at once.
 */
const TEST_POOL_SIZE = 3;

export interface IntegrationOptions {
  /** Starts the fake Messages API and sets the config's Anthropic key and base URL to it. */
  anthropic?: boolean;
  /** Overrides of the file's config, applied last. */
  config?: Partial<Config>;
}

/** What a worker started by {@link Integration.startWorker} runs on, and how. */
export interface TestWorkerOptions extends WorkerOptions, ServiceOverrides {
  /**
   * Services to run on, when the test needs them too (a metrics server on the worker's services);
   * by default the worker opens its own, with the overrides given here. The worker closes them.
   */
  services?: Services;
}

/**
 * The file's resources. Each throws when read before the file's `beforeAll` has run (at import or
 * collection time), since none exists yet.
 */
export interface Integration {
  /** The file's database, cloned from the migrated template. */
  readonly tdb: TestDatabase;
  /** The file's BullMQ prefix, under which all its Redis keys live. */
  readonly prefix: string;
  /** A config for the file's database and prefix (and the fake API, with `anthropic`). */
  readonly config: Config;
  /** A producer on the file's prefix, made on first use. */
  readonly producer: Producer;
  /** The reads of sessions and the ledger on the file's database, made on first use. */
  readonly reads: PostgresReads;
  /** The fenced writes on the file's database, made on first use. */
  readonly writes: PostgresWrites;
  /** A plain Redis client, made on first use. */
  readonly redis: Redis;
  /** The queue backend this file runs on (its vitest project's). */
  readonly backend: TestQueueBackend;
  /**
   * BullMQ's classes and connections on the file's backend (its prefix on Redis, its database's
   * queue schema on Postgres), made on first use: `new ctx.queues.Queue(name, ctx.queues.link().options)`.
   */
  readonly queues: QueueBackend;
  /** The per-session leases on the file's backend, made on first use. */
  readonly leases: Leases;
  /** A new queue `name` on the file's backend; closed in `afterAll`. */
  queue(name: string): Queue;
  /** The fake Messages API (only with `anthropic`). */
  readonly fake: FakeAnthropicServer;
  /** The fake API's URL and its `close` (only with `anthropic`). */
  readonly llm: FakeAnthropicHandle;
  /** The environment a `compactor` child process needs to work on the file's database and prefix. */
  readonly cliEnv: Record<string, string>;
  /** Opens services on the file's config; closed in `afterAll`. */
  services(overrides?: ServiceOverrides): Services;
  /** Starts a worker on the file's config; closed by {@link closeWorkers} or in `afterAll`. */
  startWorker(options?: TestWorkerOptions): CompactionWorker;
  /** Closes the workers started so far (for files whose tests each start their own). */
  closeWorkers(): Promise<void>;
  /**
   * Runs the pipeline once in this process, as `compactor compact` does: on the file's reads and writes, with
   * the extractive summarizer as the primary one (`deps.summarizers` replaces it slot by slot) and
   * no offline one; `trigger` defaults to `manual`, `idempotencyKey` to a new one.
   */
  compactInProcess(
    request: Pick<CompactionRequest, 'tenantId' | 'sessionId' | 'strategy'> &
      Partial<Pick<CompactionRequest, 'trigger' | 'idempotencyKey'>>,
    deps?: Partial<Omit<PipelineDeps, 'summarizers'>> & { summarizers?: Partial<Summarizers> },
  ): Promise<CompactionOutcome>;
  /**
   * Runs `close` at the start of `afterAll`, before anything above is closed: for what the file
   * opened on top of these resources (a server on a worker's services, child processes using the
   * database). Later registrations run first.
   */
  onTeardown(close: () => unknown): void;
}

/** Registers the file's set-up and teardown and returns its resources. Call once, at the top level. */
export function useIntegration(options: IntegrationOptions = {}): Integration {
  let tdb: TestDatabase | undefined;
  let prefix: string | undefined;
  let fake: FakeAnthropicServer | undefined;
  let llm: FakeAnthropicHandle | undefined;
  let config: Config | undefined;
  let producer: Producer | undefined;
  let reads: PostgresReads | undefined;
  let writes: PostgresWrites | undefined;
  let redis: Redis | undefined;
  let queues: QueueBackend | undefined;
  let leases: Leases | undefined;
  const backend = testQueueBackend();
  const services: Services[] = [];
  const opened: Array<{ queue: Queue; close(): Promise<void> }> = [];
  const workers: CompactionWorker[] = [];
  const teardowns: Array<() => unknown> = [];

  const ready = <T>(value: T | undefined, name: string): T => {
    if (value !== undefined) return value;
    throw new Error(
      `useIntegration: ${name} exists once the file's beforeAll has run; use it in a hook or a test`,
    );
  };
  const fakeApi = <T>(value: T | undefined, name: string): T => {
    if (!options.anthropic) throw new Error(`useIntegration: ${name} exists only with { anthropic: true }`);
    return ready(value, name);
  };

  const openTracked = (overrides: ServiceOverrides = {}): Services => {
    const opened = openServices(ctx.config, silentLogger, {
      ...overrides,
      poolSize: overrides.poolSize ?? TEST_POOL_SIZE,
    });
    services.push(opened);
    return opened;
  };

  const ctx: Integration = {
    get tdb() {
      return ready(tdb, 'tdb');
    },
    get prefix() {
      return ready(prefix, 'prefix');
    },
    get config() {
      config ??= testConfig(ctx.tdb.url, ctx.prefix, {
        ...(llm ? { anthropicApiKey: 'sk-test', anthropicBaseUrl: llm.url } : {}),
        ...options.config,
      });
      return config;
    },
    get producer() {
      producer ??= createProducer({
        ...(backend === 'postgres' ? { postgres: ctx.tdb.url } : { redisUrl: REDIS_URL }),
        prefix: ctx.prefix,
        db: ctx.tdb.database.db,
      });
      return producer;
    },
    get backend() {
      return backend;
    },
    get queues() {
      queues ??=
        backend === 'postgres'
          ? postgresQueueBackend({ connection: ctx.tdb.url })
          : redisQueueBackend({
              prefix: ctx.prefix,
              shared: ctx.redis,
              open: () => new Redis(REDIS_URL, { maxRetriesPerRequest: null }),
              where: REDIS_URL,
            });
      return queues;
    },
    get leases() {
      leases ??=
        backend === 'postgres'
          ? new PostgresLeases(ctx.tdb.database.db)
          : new LeaseManager(ctx.redis, { prefix: ctx.prefix });
      return leases;
    },
    get reads() {
      reads ??= new PostgresReads(ctx.tdb.database.db);
      return reads;
    },
    get writes() {
      writes ??= new PostgresWrites(ctx.tdb.database.db, ctx.reads);
      return writes;
    },
    get redis() {
      redis ??= new Redis(REDIS_URL);
      return redis;
    },
    get fake() {
      return fakeApi(fake, 'fake');
    },
    get llm() {
      return fakeApi(llm, 'llm');
    },
    get cliEnv() {
      return {
        DATABASE_URL: ctx.tdb.url,
        ...(backend === 'postgres' ? { COMPACTOR_QUEUE_BACKEND: 'postgres' } : { REDIS_URL }),
        COMPACTOR_QUEUE_PREFIX: ctx.prefix,
        COMPACTOR_LOG_LEVEL: 'warn',
      };
    },
    services: openTracked,
    queue(name) {
      const link = ctx.queues.link();
      const queue = new ctx.queues.Queue(name, link.options);
      queue.on('error', () => {});
      opened.push({ queue, close: link.close });
      return queue;
    },
    startWorker({ services: given, summarizers, batches, poolSize, ...workerOptions } = {}) {
      const on = given ?? openTracked({ summarizers, batches, poolSize });
      const worker = startWorker(on, workerOptions);
      workers.push(worker);
      return worker;
    },
    compactInProcess(
      { trigger = 'manual', idempotencyKey = `manual:${randomUUID()}`, ...request },
      { summarizers, ...deps } = {},
    ) {
      return runCompaction(
        {
          reads: ctx.reads,
          writes: ctx.writes,
          leases: ctx.leases,
          summarizers: { primary: createExtractiveSummarizer(), ...summarizers },
          clock: systemClock,
          logger: silentLogger,
          ...deps,
        },
        { ...request, trigger, idempotencyKey, eventId: null },
      );
    },
    async closeWorkers() {
      await Promise.all(workers.splice(0).map((w) => w.close()));
    },
    onTeardown(close) {
      teardowns.push(close);
    },
  };

  beforeAll(async () => {
    prefix = testPrefix();
    tdb = await createTestDatabase();
    if (options.anthropic) {
      fake = new FakeAnthropicServer();
      llm = await fake.start();
    }
  });

  afterAll(async () => {
    // Users go before what they use: the file's own closers, workers (they finish their jobs),
    // the producer and clients, the fake API, then the Redis keys and the database. Every step
    // runs even if one fails, so a failed close does not also leave the database and keys behind.
    const steps: Array<() => unknown> = [
      ...teardowns.splice(0).reverse(),
      () => ctx.closeWorkers(),
      () => producer?.close(),
      () => Promise.all(opened.splice(0).map((o) => o.queue.close().finally(() => o.close()))),
      () => Promise.all(services.splice(0).map((s) => s.close())),
      () => redis?.quit(),
      () => llm?.close(),
      () => (prefix ? cleanRedis(prefix) : undefined),
      // Last: dropping the database fails while any connection above is still open.
      () => tdb?.drop(),
    ];
    const errors: unknown[] = [];
    for (const step of steps) {
      try {
        await step();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1)
      throw new AggregateError(errors, `integration teardown: ${errors.length} steps failed`);
  });

  return ctx;
}
