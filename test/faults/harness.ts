/**
 * Shared pieces of the fault-injection suite, which shows that each event takes effect exactly once
 * and no message is lost under crashes, stalls and restarts. Each scenario gets its own tenant,
 * BullMQ prefix, fake Messages API (behind a gate that can hold requests: a slow LLM on demand)
 * and, when it asks, its own redis-server; the real `compactor worker` CLI runs as child processes
 * with short lock / stall / lease timings and a Postgres `application_name` of its own, so the test
 * can find its backends; every scenario ends with compactor's invariants checked on the database
 * ({@link Scenario.expectInvariants}): nothing lost, one effect per idempotency key, tool pairs
 * whole, pinned messages live.
 *
 * Each test file calls {@link faultSuite} once at top level: one database per file (cloned from the
 * template), every scenario cleaned up after its test (processes, connections, servers, keys).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type postgres from 'postgres';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { createProducer, createSession, type Producer } from '../../producer/index.ts';
import { and, asc, eq } from '../../producer/postgres/orm.ts';
import { type CompactionRow, compactions } from '../../producer/postgres/schema.ts';
import {
  migrateQueueSchema,
  postgresQueueBackend,
  type QueueBackend,
  redisQueueBackend,
} from '../../producer/queue/backend.ts';
import { connectRedis, type RedisConnection } from '../../producer/redis/redis.ts';
import { estimateMessageTokens } from '../../shared/contract/tokens.ts';
import { COMPACTION_QUEUE, idempotencyKeyOf, jobIdOf, RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { type AuditReport, audit, violations } from '../../worker/postgres/audit.ts';
import type { JobResult } from '../../worker/queue/compaction/processor.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { REDIS_URL, type TestQueueBackend, testQueueBackend } from '../support/env.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import {
  cleanRedis,
  createTestDatabase,
  loadCorpusSession,
  type TestDatabase,
  testPrefix,
  waitFor,
} from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';
import { freePort } from '../support/ports.ts';
import { type Child, killAllChildren, startCompactor } from '../support/processes.ts';
import type { RedisCluster } from '../support/redis-cluster.ts';

/**
 * Short BullMQ lock / stalled-check / lease timings, so a dead worker's job is recovered in seconds;
 * scheduled sweeps off, so every job of a scenario is one the test enqueued.
 *
 * The durations are an idle machine's, times the slowdown measured in this run (patience.ts): a
 * live worker renews its job's lock every half lock duration from a timer on its event loop, and a
 * loop starved past that on a loaded machine loses the lock, so the stalled check hands the job to
 * a second run, which finds the event applied and answers `duplicate`. Exactly-once holds either
 * way; but a test about one fault would then see another it did not inject.
 */
export function fastTimings() {
  return {
    COMPACTOR_LOCK_DURATION_MS: String(patient(2000)),
    COMPACTOR_STALLED_INTERVAL_MS: String(patient(1000)),
    COMPACTOR_LEASE_TTL_MS: String(patient(2000)),
    COMPACTOR_SWEEP_EVERY_MS: '0',
  };
}

/** The corpus session most scenarios compact: 163 messages, tool pairs, a pinned system prompt. */
export const CORPUS = 'minisweagent__pvlib-1854';

/** An LLM summary (through the fake Messages API) keeping the newest 12 messages. */
export const SUMMARIZE: Strategy = { type: 'summarize', keepRecent: 12, maxSummaryTokens: 2_000 };

/** Waits generously: stalled-job recovery takes lock duration + two stalled checks. */
export const SETTLE_MS = 45_000;

/** One line of a worker's JSON log (pino, on stderr). */
export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** A `compactor worker` child process. */
export type WorkerProcess = Child & {
  /** Its Postgres `application_name`: find its backends with {@link Scenario.backends}. */
  appName: string;
  /** The DATABASE_URL it was given. */
  databaseUrl: string;
  /** Its JSON log lines so far. */
  logs(): LogLine[];
  /** Lines of its stderr that are not JSON log lines (raw error dumps). */
  rawStderr(): string[];
};

/** A Postgres backend of `pg_stat_activity`. */
export interface Backend {
  pid: number;
  state: string | null;
  waitEventType: string | null;
  waitEvent: string | null;
  query: string;
}

/** A lock held by the test in its own transaction, on a reserved connection. */
export interface Hold {
  /** Ends the transaction (default rollback) and returns the connection. Idempotent. */
  release(how?: 'rollback' | 'commit'): Promise<void>;
}

/** The session row locked `FOR UPDATE`: the agent appending messages while a compaction waits. */
export interface RowHold extends Hold {
  /** Appends messages inside the held transaction, as `appendMessages` would; they count on commit. */
  append(contents: string[]): Promise<number[]>;
}

/** What one expected original message looks like. */
interface Expected {
  md5: string;
  pinned: boolean;
}

export interface ScenarioOptions {
  /** Run against this redis-server instead of the machine's Redis; the scenario destroys it. */
  redis?: RedisServer;
  /**
   * Run against this Redis Cluster (its seed nodes, a hash-tagged prefix `{t…}`); the scenario
   * destroys it.
   */
  cluster?: RedisCluster;
}

export interface WorkerOptions {
  /** `--concurrency`. Default 1. */
  concurrency?: number;
  /** Overrides DATABASE_URL (before the application name is added). */
  databaseUrl?: string;
  /** Overrides REDIS_URL. */
  redisUrl?: string;
  /** More environment (wins over the defaults). */
  env?: Record<string, string>;
}

/** Registers the per-file hooks (database, cleanup) and hands out scenarios. Call once at top level. */
export function faultSuite() {
  let tdb: TestDatabase | undefined;
  const scenarios: Scenario[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterEach(async () => {
    for (const s of scenarios.splice(0)) await s.cleanup();
  });
  afterAll(async () => {
    await killAllChildren();
    await tdb?.drop();
  });
  return {
    /** A fresh, isolated scenario; cleaned up after the test. */
    async scenario(options: ScenarioOptions = {}): Promise<Scenario> {
      if (!tdb) throw new Error('faultSuite: no database (beforeAll failed?)');
      const s = await Scenario.create(tdb, options);
      scenarios.push(s);
      return s;
    },
  };
}

/** One isolated fault scenario: tenant, prefix, fake LLM, producer, workers, and the checks. */
export class Scenario {
  readonly tenantId = `tenant-${randomBytes(4).toString('hex')}`;
  /** The BullMQ prefix: `t…`, or `{t…}` (hash-tagged) on a cluster. */
  readonly prefix: string;
  /** The Redis the scenario's workers, queue and producer use (unused on a cluster). */
  readonly redisUrl: string;
  /** Jobs, straight adds and reads (a connection that waits for Redis instead of failing). */
  readonly queue: Queue;
  /** Raw Redis (leases, CLIENT LIST / KILL): a `Cluster` on a cluster. */
  readonly redis: RedisConnection;
  /** The producer agent services use (fails fast when Redis is away). */
  readonly producer: Producer;
  /** The queue backend the scenario runs on (its vitest project's). */
  readonly backend: TestQueueBackend = testQueueBackend();
  /**
   * On the postgres backend, BullMQ's schema of this scenario alone (`q_<prefix>`, in the file's
   * database; dropped with the scenario), as the prefix keeps scenarios apart on Redis.
   */
  readonly queueSchema: string;
  private readonly expected = new Map<string, Map<number, Expected>>();
  private readonly workers: WorkerProcess[] = [];
  private readonly cleanups: Array<() => Promise<unknown>> = [];
  private workerCount = 0;

  private constructor(
    readonly tdb: TestDatabase,
    readonly fake: FakeAnthropicServer,
    private readonly fakeClose: () => Promise<void>,
    /** Workers call the LLM through this gate: hold requests with {@link LlmGate.hold}. */
    readonly gate: LlmGate,
    /** The scenario's own redis-server, if it has one (destroyed with the scenario). */
    readonly redisServer: RedisServer | undefined,
    /** The scenario's own Redis Cluster, if it has one (destroyed with the scenario). */
    readonly cluster: RedisCluster | undefined,
    prefix: string,
  ) {
    this.prefix = prefix;
    this.queueSchema = `q_${this.prefix.replace(/[{}]/g, '')}`;
    this.redisUrl = redisServer?.url ?? REDIS_URL;
    const target = cluster
      ? { cluster: { nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) } }
      : { url: this.redisUrl };
    this.redis = connectRedis(target, { maxRetriesPerRequest: null });
    this.redis.on('error', () => {});
    const onPostgres = this.backend === 'postgres';
    const queues: QueueBackend = onPostgres
      ? postgresQueueBackend({ connection: tdb.url, schema: this.queueSchema })
      : redisQueueBackend({
          prefix: this.prefix,
          shared: this.redis,
          open: () => {
            const connection = connectRedis(target, { maxRetriesPerRequest: null });
            connection.on('error', () => {});
            return connection;
          },
          where: this.redisUrl,
        });
    const link = queues.link();
    this.queue = new queues.Queue(COMPACTION_QUEUE, link.options);
    this.queue.on('error', () => {});
    this.producer = createProducer(
      onPostgres
        ? { postgres: tdb.url, queueSchema: this.queueSchema, db: tdb.database.db }
        : cluster
          ? { redisCluster: cluster.seed, prefix: this.prefix }
          : { redisUrl: this.redisUrl, prefix: this.prefix },
    );
    // Closing must not wait on a Redis the test stopped: bounded, then the sockets are dropped.
    this.cleanups.push(
      () => within(5_000, this.producer.close()),
      async () => {
        await within(5_000, this.queue.close());
        await within(5_000, link.close());
        this.redis.disconnect();
      },
    );
  }

  static async create(tdb: TestDatabase, options: ScenarioOptions): Promise<Scenario> {
    const fake = new FakeAnthropicServer();
    const handle = await fake.start();
    const gate = new LlmGate(handle.url);
    await gate.start();
    if (testQueueBackend() === 'postgres' && (options.redis || options.cluster))
      throw new Error('a scenario with its own Redis runs on the redis queue backend only');
    const prefix = options.cluster ? `{${testPrefix()}}` : testPrefix();
    // BullMQ's objects check their schema as they are made: it is migrated first.
    if (testQueueBackend() === 'postgres')
      await migrateQueueSchema({ connection: tdb.url, schema: `q_${prefix.replace(/[{}]/g, '')}` });
    return new Scenario(tdb, fake, handle.close, gate, options.redis, options.cluster, prefix);
  }

  get sql(): postgres.Sql {
    return this.tdb.database.sql;
  }

  /** Imports a corpus transcript as `sessionId` and remembers every message for the invariants. */
  async seed(sessionId: string, corpus = CORPUS): Promise<number> {
    const messages = await loadCorpusSession(corpus);
    await createSession(this.tdb.database.db, { tenantId: this.tenantId, sessionId, messages });
    this.expected.set(
      sessionId,
      new Map(messages.map((m) => [m.seq, { md5: md5(m.content), pinned: m.pinned }])),
    );
    return messages.length;
  }

  /** Starts `compactor worker` with short timings, the gated fake LLM and its own application name. */
  startWorker(options: WorkerOptions = {}): WorkerProcess {
    const appName = `${this.prefix}-w${++this.workerCount}`;
    const env: Record<string, string> = {
      DATABASE_URL: withAppName(options.databaseUrl ?? this.tdb.url, appName),
      // On a cluster, the seed nodes; an empty REDIS_URL counts as unset (and overrides the parent's).
      ...(this.backend === 'postgres'
        ? { REDIS_URL: '', COMPACTOR_QUEUE_BACKEND: 'postgres', COMPACTOR_QUEUE_SCHEMA: this.queueSchema }
        : this.cluster
          ? { REDIS_URL: '', COMPACTOR_REDIS_CLUSTER_NODES: this.cluster.seed }
          : { REDIS_URL: options.redisUrl ?? this.redisUrl }),
      COMPACTOR_QUEUE_PREFIX: this.prefix,
      COMPACTOR_LOG_LEVEL: 'info',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: this.gate.url,
      ...fastTimings(),
      ...options.env,
    };
    const child = startCompactor(['worker', '--concurrency', String(options.concurrency ?? 1)], env);
    const worker = Object.assign(child, {
      appName,
      databaseUrl: env.DATABASE_URL as string,
      logs: () => parseLogs(child.output().stderr),
      rawStderr: () =>
        child
          .output()
          .stderr.split('\n')
          .filter((l) => l.trim() !== '' && !isJsonLine(l)),
    });
    this.workers.push(worker);
    return worker;
  }

  /** The BullMQ job id of an event of this tenant that the producer enqueued. */
  job(eventId: string): string {
    return jobIdOf(this.tenantId, eventId);
  }

  /** The idempotency key of an event of this tenant. */
  key(eventId: string): string {
    return idempotencyKeyOf({ tenantId: this.tenantId, eventId });
  }

  /** Redis key of the session's lease (as the worker names it). */
  leaseKey(sessionId: string): string {
    return new LeaseManager(this.redis, { prefix: this.prefix }).keyOf(this.tenantId, sessionId);
  }

  /**
   * Deletes the session's lease where the backend keeps it (its Redis key, or its `session_leases`
   * row), as an expiry or a lost key would: another worker may then take it.
   * @returns whether there was one.
   */
  async dropLease(sessionId: string): Promise<boolean> {
    if (this.backend === 'redis') return (await this.redis.del(this.leaseKey(sessionId))) === 1;
    const dropped = await this.sql`
      delete from session_leases where tenant_id = ${this.tenantId} and session_id = ${sessionId}`;
    return dropped.count === 1;
  }

  /**
   * Adds a job straight to the queue with `jobId` (default: the event id) and no deduplication, as a
   * redelivery or a second producer would. Same `eventId` ⇒ same idempotency key.
   */
  async addJob(
    sessionId: string,
    options: { eventId?: string; jobId?: string; strategy?: Strategy } = {},
  ): Promise<{ jobId: string; eventId: string }> {
    const eventId = options.eventId ?? randomUUID();
    const jobId = options.jobId ?? eventId;
    const data = { eventId, tenantId: this.tenantId, sessionId, strategy: options.strategy ?? SUMMARIZE };
    await this.queue.add(RUN_COMPLETED, data, {
      jobId,
      attempts: 5,
      backoff: { type: 'exponential', delay: 2_000 },
    });
    return { jobId, eventId };
  }

  /** Waits until the job is completed or failed; the error names the job's state and the logs. */
  async settled(jobId: string, timeoutMs = SETTLE_MS): Promise<'completed' | 'failed'> {
    try {
      return await waitFor(async () => {
        const state = await this.queue.getJobState(jobId);
        return state === 'completed' || state === 'failed' ? state : undefined;
      }, timeoutMs);
    } catch (error) {
      const state = await this.queue.getJobState(jobId);
      throw new Error(`job ${jobId} did not settle (state ${state})\n${this.logTail()}`, { cause: error });
    }
  }

  /** Waits until the job completed (not failed) and returns its result. */
  async completed(jobId: string, timeoutMs = SETTLE_MS): Promise<JobResult & { attemptsMade: number }> {
    const state = await this.settled(jobId, timeoutMs);
    const job = await this.queue.getJob(jobId);
    expect(state, `job ${jobId}: ${job?.failedReason}\n${this.logTail()}`).toBe('completed');
    return { ...(job?.returnvalue as JobResult), attemptsMade: job?.attemptsMade ?? 0 };
  }

  /** LLM requests the workers made (through the gate, whether answered or not). */
  llmCalls(): number {
    return this.gate.received;
  }

  /** The tenant's ledger (optionally one session's), oldest first. */
  async ledger(sessionId?: string): Promise<CompactionRow[]> {
    const scope = eq(compactions.tenantId, this.tenantId);
    return this.tdb.database.db
      .select()
      .from(compactions)
      .where(sessionId === undefined ? scope : and(scope, eq(compactions.sessionId, sessionId)))
      .orderBy(asc(compactions.createdAt));
  }

  /** Ledger rows holding the event's idempotency key (0 or 1: the key is unique). */
  async rowsFor(eventId: string): Promise<CompactionRow[]> {
    return (await this.ledger()).filter((r) => r.idempotencyKey === this.key(eventId));
  }

  /** The worker's Postgres backends, by its application name. */
  async backends(worker: WorkerProcess): Promise<Backend[]> {
    return this.sql<Backend[]>`
      select pid, state, wait_event_type as "waitEventType", wait_event as "waitEvent", query
      from pg_stat_activity where datname = ${this.tdb.name} and application_name = ${worker.appName}`;
  }

  /** Waits until `n` of the worker's backends wait on a lock (`wait_event_type = 'Lock'`). */
  async lockWaits(worker: WorkerProcess, n = 1, timeoutMs = 20_000): Promise<Backend[]> {
    try {
      return await waitFor(async () => {
        const waiting = (await this.backends(worker)).filter((b) => b.waitEventType === 'Lock');
        return waiting.length >= n ? waiting : undefined;
      }, timeoutMs);
    } catch (error) {
      throw new Error(`${worker.appName}: ${n} lock wait(s) not seen\n${this.logTail()}`, { cause: error });
    }
  }

  /** Waits until the worker has no backend left (after a kill, Postgres notices the closed socket). */
  async noBackends(worker: WorkerProcess): Promise<void> {
    // BullMQ's own connections on the postgres backend go by `<appName>-queue`.
    const queueBackends = async () =>
      (
        await this.sql<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
           where datname = ${this.tdb.name} and application_name = ${`${worker.appName}-queue`}`
      )[0]?.n ?? 0;
    await waitFor(
      async () => (await this.backends(worker)).length === 0 && (await queueBackends()) === 0,
      20_000,
    );
  }

  /** Locks the session row `FOR UPDATE` in a transaction of the test: an apply waits behind it. */
  async holdSessionRow(sessionId: string): Promise<RowHold> {
    const conn = await this.sql.reserve();
    await conn`begin`;
    await conn`select 1 from sessions where tenant_id = ${this.tenantId} and id = ${sessionId} for update`;
    const release = this.releaser(conn);
    return {
      release,
      append: async (contents) => {
        const n = contents.length;
        const tokens = contents.map((c) => estimateMessageTokens(c));
        const [row] = await conn<{ first: number }[]>`
          update sessions set last_seq = last_seq + ${n}, message_count = message_count + ${n},
            token_count = token_count + ${tokens.reduce((a, b) => a + b, 0)}, updated_at = now()
          where tenant_id = ${this.tenantId} and id = ${sessionId}
          returning (last_seq - ${n} + 1)::int as first`;
        const first = row?.first ?? 0;
        for (const [i, content] of contents.entries()) {
          await conn`
            insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count, pinned)
            values (${this.tenantId}, ${sessionId}, ${first + i}, ${i % 2 ? 'assistant' : 'user'}, 'message',
              ${content}, to_json(${content}::text), ${tokens[i] ?? 0}, false)`;
          this.expected.get(sessionId)?.set(first + i, { md5: md5(content), pinned: false });
        }
        return contents.map((_, i) => first + i);
      },
    };
  }

  /**
   * Inserts, uncommitted, a ledger row holding the event's idempotency key: an apply of that event
   * passes its idempotency check (the row is invisible to it), does all its work, and then waits on
   * its own ledger insert, the last statement of the transaction.
   */
  async holdLedgerKey(eventId: string, sessionId: string): Promise<Hold> {
    const conn = await this.sql.reserve();
    await conn`begin`;
    await conn`
      insert into compactions (session_id, tenant_id, idempotency_key, event_id, trigger, strategy, status, reason)
      values (${sessionId}, ${this.tenantId}, ${this.key(eventId)}, ${eventId}, 'event', 'summarize', 'skipped',
        'held by the fault test')`;
    return { release: this.releaser(conn) };
  }

  /** Terminates the backends with `pg_terminate_backend`; returns how many were terminated. */
  async terminate(backends: Backend[]): Promise<number> {
    let n = 0;
    for (const b of backends) {
      const [row] = await this.sql<{ ok: boolean }[]>`select pg_terminate_backend(${b.pid}) as ok`;
      if (row?.ok) n++;
    }
    return n;
  }

  /**
   * Checks compactor's invariants for the tenant: `audit()` finds no violation; every imported
   * (or appended) message is in `messages` or `archived_messages` exactly once, content intact
   * (live + archived originals = imported); pinned ones are live; every archived message belongs
   * to the applied compaction that moved it and is counted by it; no idempotency key applied twice.
   */
  async expectInvariants(): Promise<AuditReport> {
    const report = await audit(this.tdb.database.db, this.tenantId);
    expect(violations(report), 'audit() violations').toEqual([]);
    let imported = 0;
    for (const seqs of this.expected.values()) imported += seqs.size;
    expect(report.liveOriginals + report.archivedOriginals, 'live + archived originals = imported').toBe(
      imported,
    );
    const rows = await this.sql<{ sessionId: string; seq: number; md5: string; place: string }[]>`
      select session_id as "sessionId", seq::int as seq, md5(content) as md5, 'live' as place
      from messages where tenant_id = ${this.tenantId} and kind <> 'summary'
      union all
      select session_id, seq::int, md5(content), 'archived'
      from archived_messages where tenant_id = ${this.tenantId} and kind <> 'summary'`;
    const found = new Map<string, Array<{ md5: string; place: string }>>();
    for (const r of rows) {
      const k = `${r.sessionId}#${r.seq}`;
      found.set(k, [...(found.get(k) ?? []), r]);
    }
    const problems: string[] = [];
    for (const [sessionId, seqs] of this.expected) {
      for (const [seq, e] of seqs) {
        const copies = found.get(`${sessionId}#${seq}`) ?? [];
        found.delete(`${sessionId}#${seq}`);
        if (copies.length !== 1) problems.push(`${sessionId} seq ${seq}: ${copies.length} copies`);
        else if (copies[0]?.md5 !== e.md5) problems.push(`${sessionId} seq ${seq}: content changed`);
        else if (e.pinned && copies[0]?.place !== 'live')
          problems.push(`${sessionId} seq ${seq}: pinned, archived`);
      }
    }
    for (const k of found.keys()) problems.push(`${k}: not an imported message`);
    expect(problems.slice(0, 10), 'each imported message exactly once, intact').toEqual([]);
    const [links] = await this.sql<{ orphans: number; miscounted: number; appliedTwice: number }[]>`
      select
        (select count(*) from archived_messages a where a.tenant_id = ${this.tenantId} and not exists (
           select 1 from compactions c where c.id = a.compaction_id and c.status in ('applied', 'restored')
         ))::int as orphans,
        (select count(*) from compactions c where c.tenant_id = ${this.tenantId} and c.status = 'applied'
           and c.messages_archived <> (select count(*) from archived_messages a where a.compaction_id = c.id)
        )::int as miscounted,
        (select count(*) from (
           select idempotency_key from compactions
           where tenant_id = ${this.tenantId} and idempotency_key is not null and status = 'applied'
           group by idempotency_key having count(*) > 1) d)::int as "appliedTwice"`;
    expect(links, 'archive linked to its applied compaction; keys applied at most once').toEqual({
      orphans: 0,
      miscounted: 0,
      appliedTwice: 0,
    });
    return report;
  }

  /** The last log lines of every worker of the scenario (for failure messages). */
  logTail(lines = 15): string {
    return this.workers
      .map((w) => {
        const tail = w.output().stderr.trim().split('\n').slice(-lines).join('\n');
        return `--- ${w.appName} (exit ${w.exitCode ?? w.signalCode ?? 'running'}) ---\n${tail}`;
      })
      .join('\n');
  }

  /** Registers a cleanup step of the scenario (run after its workers are killed). */
  onCleanup(step: () => Promise<unknown>): void {
    this.cleanups.push(step);
  }

  /** Kills the scenario's processes, releases its locks, closes its connections and servers. */
  async cleanup(): Promise<void> {
    const failures: unknown[] = [];
    const step = async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (error) {
        failures.push(error);
      }
    };
    for (const w of this.workers) {
      if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
      await step(() => w.done);
    }
    this.gate.release();
    for (const f of this.cleanups.reverse()) await step(f);
    await step(() => this.gate.close());
    await step(() => this.fakeClose());
    if (this.redisServer) await step(() => this.redisServer?.destroy() ?? Promise.resolve());
    else if (this.cluster) await step(() => this.cluster?.destroy() ?? Promise.resolve());
    else await step(() => cleanRedis(this.prefix));
    if (this.backend === 'postgres')
      await step(() => this.sql.unsafe(`drop schema if exists "${this.queueSchema}" cascade`));
    for (const w of this.workers) await step(() => this.noBackends(w));
    if (failures.length > 0) throw new AggregateError(failures, 'fault scenario cleanup failed');
  }

  private releaser(conn: postgres.ReservedSql): Hold['release'] {
    let released: Promise<void> | undefined;
    const release = (how: 'rollback' | 'commit' = 'rollback') => {
      released ??= conn.unsafe(how).then(
        () => conn.release(),
        (error: unknown) => {
          conn.release();
          throw error;
        },
      );
      return released;
    };
    this.cleanups.push(() => release('rollback'));
    return release;
  }
}

/**
 * An HTTP pass-through in front of the fake Messages API that can hold requests until released:
 * a slow LLM whose answer the test controls. A held request whose client goes away (a killed
 * worker, an aborted call) is dropped without reaching the fake.
 */
export class LlmGate {
  /** Requests received, held or not. */
  received = 0;
  url = '';
  private toHold = 0;
  private readonly waiting = new Set<() => void>();
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => {
    this.handle(req, res).catch(() => res.destroy());
  });

  constructor(private readonly upstream: string) {
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Holds the next `n` requests until {@link release}. */
  hold(n = 1): void {
    this.toHold += n;
  }

  /** Requests held right now. */
  get held(): number {
    return this.waiting.size;
  }

  /** Lets every held request through and stops holding. */
  release(): void {
    this.toHold = 0;
    for (const go of [...this.waiting]) go();
  }

  async close(): Promise<void> {
    this.release();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.received++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (this.toHold > 0) {
      this.toHold--;
      const gone = await new Promise<boolean>((resolve) => {
        const go = () => {
          this.waiting.delete(go);
          resolve(false);
        };
        this.waiting.add(go);
        res.on('close', () => {
          if (this.waiting.delete(go)) resolve(true);
        });
      });
      if (gone) return;
    }
    const upstream = httpRequest(
      new URL(req.url ?? '/', this.upstream),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    upstream.end(Buffer.concat(chunks));
  }
}

/**
 * A redis-server of the test's own, on a free port, with the append-only file fsynced on every
 * write (`--appendonly yes --appendfsync always`) in a temporary directory: it can be stopped and
 * started again on the same port and directory, keeping what it had accepted.
 */
export class RedisServer {
  private child: ChildProcess | null = null;
  private output = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  /** A server on a free port, not started yet. */
  static async create(): Promise<RedisServer> {
    return new RedisServer(await freePort(), await mkdtemp(path.join(tmpdir(), 'compactor-redis-')));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Starts it and waits until it answers PING (the AOF loaded). */
  async start(): Promise<void> {
    if (this.child) throw new Error('redis-server already running');
    const child = spawn(
      '/usr/bin/redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    child.stdout?.on('data', (d) => {
      this.output += d;
    });
    child.stderr?.on('data', (d) => {
      this.output += d;
    });
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    await waitFor(async () => {
      if (this.child !== child) throw new Error(`redis-server exited:\n${this.output.slice(-2_000)}`);
      const probe = new Redis(this.port, '127.0.0.1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        enableOfflineQueue: false,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    }, 15_000);
  }

  /** Stops it: `SHUTDOWN` (the command), SIGTERM, or SIGKILL; waits for the process to exit. */
  async stop(how: 'SHUTDOWN' | 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    if (how === 'SHUTDOWN') {
      const admin = new Redis(this.port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null });
      admin.on('error', () => {});
      await admin.call('SHUTDOWN').catch(() => {});
      admin.disconnect();
    } else {
      child.kill(how);
    }
    await exited;
    this.child = null;
  }

  /** Kills it and removes its directory. */
  async destroy(): Promise<void> {
    await this.stop('SIGKILL');
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A TCP proxy on `port` to `target`: a service that "appears" when it starts. */
export async function startTcpProxy(
  port: number,
  target: { host: string; port: number },
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  };
  const server = createNetServer((client) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** The URL with `application_name` set (postgres.js takes unknown query parameters as connection parameters). */
export function withAppName(databaseUrl: string, appName: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', appName);
  return url.toString();
}

/**
 * Waits until the worker logged a line with message `msg` (and matching `where`, if given); fails
 * as soon as the worker has ended without it. `timeoutMs` is the idle machine's deadline, scaled by
 * the measured slowdown (`waitFor`).
 */
export async function logged(
  worker: WorkerProcess,
  msg: string,
  where: (line: LogLine) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<LogLine> {
  const find = () => worker.logs().find((l) => l.msg === msg && where(l));
  try {
    return await waitFor(async () => {
      const line = find();
      if (line || (worker.exitCode === null && worker.signalCode === null)) return line;
      await worker.done; // all of its output read
      const last = find();
      if (last) return last;
      throw new Error(`it ended (${worker.exitCode ?? worker.signalCode}) without logging it`);
    }, timeoutMs);
  } catch (error) {
    throw new Error(`${worker.appName} did not log "${msg}":\n${worker.output().stderr.slice(-3_000)}`, {
      cause: error,
    });
  }
}

/** Polls a synchronous condition every 25 ms (e.g. the gate's held count). */
export async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  await waitFor(async () => check(), timeoutMs);
}

/** Samples `check` every `intervalMs` until `stop()` is called; returns the samples. */
export function sample<T>(check: () => Promise<T>, intervalMs = 20): { stop(): Promise<T[]> } {
  const samples: T[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      samples.push(await check());
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** Waits for `promise` at most `ms` (a cleanup step that must not hang); never rejects. */
async function within(ms: number, promise: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

function isJsonLine(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}

function parseLogs(stderr: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // A line cut by a kill, or not a log line.
    }
  }
  return out;
}

function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}
