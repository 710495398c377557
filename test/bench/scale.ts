/**
 * `npm run bench:scale`: how compactor scales past one worker process, what a waiting job costs in
 * Redis, and how the read and apply paths hold up on a large history. Prints markdown tables; writes
 * them to test/bench/scale-results.md when every part ran. Asserts nothing.
 *
 * 1. Worker processes: the same backlog of slidingWindow jobs drained by 1, 2 and 4 `compactor
 *    worker` processes (the real CLI, concurrency 8 each) against one Redis and one Postgres, in two
 *    alternating rounds. Per run: jobs/s, and each component's CPU as a share of the machine (Node:
 *    the worker processes; Postgres: the backends of the bench database; Redis: redis-server), read
 *    from /proc. The component nearest the machine's capacity is the bottleneck.
 * 2. Redis memory per 1,000 waiting jobs: `runCompleted` events enqueued through the producer (its
 *    real payload and job options) and no worker; the sum of `MEMORY USAGE` over the queue's keys,
 *    so other tenants of the same Redis do not blur it.
 * 3. A large history: 10M live messages across 100k sessions of 1,000 tenants. `loadContext` and
 *    apply (a slidingWindow compaction through the in-process pipeline) latency, p50/p99, with
 *    `messages` and `archived_messages` as migrated (hash-partitioned by tenant) and as one heap
 *    each (the same columns, keys and indexes, `CREATE TABLE … (LIKE … INCLUDING ALL)`, swapped in
 *    under the same names), on the same rows.
 *
 * Options: `--events N` (part 1, default 6000), `--waiting N` (part 2, default 10000),
 * `--sessions N` and `--per-session N` (part 3, default 100000 and 100), `--parts 1,2,3` (default
 * all).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { createProducer, loadContext } from '../../producer/index.ts';
import { connectionOptions, openDatabase } from '../../producer/postgres/db.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import { systemClock } from '../../worker/pipeline/clock.ts';
import { runCompaction } from '../../worker/pipeline/pipeline.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { PostgresReads } from '../../worker/postgres/reads.ts';
import { PostgresWrites } from '../../worker/postgres/writes.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { cleanRedis, silentLogger } from '../support/fixtures.ts';
import { databaseCpuMs, machineCpuMs, processCpuMs, redisServerCpuMs } from './proc.ts';
import { fmt, positiveInteger, Report, runCompletedJobs, seedSessions } from './report.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '6000' },
    waiting: { type: 'string', default: '10000' },
    sessions: { type: 'string', default: '100000' },
    'per-session': { type: 'string', default: '100' },
    parts: { type: 'string', default: '1,2,3' },
  },
});
const PARTS = new Set(values.parts.split(',').map((p) => p.trim()));
const ALL_PARTS = ['1', '2', '3'].every((p) => PARTS.has(p));
const EVENTS = positiveInteger('events', values.events);
const WAITING = positiveInteger('waiting', values.waiting);
const HISTORY_SESSIONS = positiveInteger('sessions', values.sessions);
const PER_SESSION = positiveInteger('per-session', values['per-session']);
/** Tenants of part 3: partitions are by tenant, so the history spreads over many. */
const HISTORY_TENANTS = Math.min(1_000, HISTORY_SESSIONS);
/** loadContext calls and compactions measured per layout in part 3. */
const HISTORY_READS = 1_000;
const HISTORY_APPLIES = 200;
const TENANT = 'bench';
/** Jobs at once in each worker process. */
const CONCURRENCY = 8;
const PROCESS_COUNTS = [1, 2, 4];
const ROUNDS = 2;
const CORES = cpus().length;
const RESULTS = fileURLToPath(new URL('./scale-results.md', import.meta.url));
const CLI = fileURLToPath(new URL('../../worker/bin/compactor.ts', import.meta.url));

const report = new Report('compactor scale benchmarks', CORES);
const section = report.section.bind(report);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const name = `compactor_scale_${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = databaseUrlFor(name);
  const prefixes: string[] = [];
  const prefix = () => {
    const p = `scale${randomBytes(4).toString('hex')}`;
    prefixes.push(p);
    return p;
  };
  try {
    await migrateDatabase(url);
    const sql = postgres(url, { max: 4, ...connectionOptions() });
    try {
      if (PARTS.has('1')) await workerProcesses({ url, name, admin, sql, prefix });
      if (PARTS.has('2')) await waitingMemory(prefix);
      if (PARTS.has('3')) await history(url, sql, prefix);
    } finally {
      await sql.end();
    }
    if (ALL_PARTS) {
      await writeFile(RESULTS, report.text());
      console.log(`\nwritten to ${RESULTS}`);
    }
  } finally {
    for (const p of prefixes) await cleanRedis(p);
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

interface WorkerProcess {
  child: ChildProcess;
  close(): Promise<void>;
}

/** Starts `compactor worker` in a process of its own; resolves once it logs "worker started". */
async function startWorkerProcess(url: string, queuePrefix: string): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CLI, 'worker', '--concurrency', String(CONCURRENCY)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL: url,
        REDIS_URL,
        COMPACTOR_QUEUE_PREFIX: queuePrefix,
        COMPACTOR_SWEEP_EVERY_MS: '0',
        COMPACTOR_LOG_LEVEL: 'info',
      },
    },
  );
  await new Promise<void>((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer) => {
      text += d;
      if (text.includes('"worker started"')) {
        child.stderr?.off('data', onData);
        child.stderr?.resume();
        resolve();
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`worker process exited with ${code} before it started:\n${text}`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// 1 ---------------------------------------------------------------------------------------------

interface ScaleRun {
  processes: number;
  jobsPerS: number;
  /** Share of the machine's CPU (all cores), 0-1. */
  node: number;
  postgres: number;
  redis: number;
  busy: number;
}

async function workerProcesses(ctx: {
  url: string;
  name: string;
  admin: postgres.Sql;
  sql: postgres.Sql;
  prefix: () => string;
}) {
  const runs: ScaleRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const processes of PROCESS_COUNTS) {
      await seedSessions(ctx.sql, TENANT, EVENTS, 60);
      const p = ctx.prefix();
      const workers = await Promise.all(
        Array.from({ length: processes }, () => startWorkerProcess(ctx.url, p)),
      );
      const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
      const queue = new Queue(COMPACTION_QUEUE, { connection, prefix: p });
      try {
        // Postgres backends of a worker are opened lazily; the first jobs open them, so the CPU of
        // a backend that started during the run counts from its start (processCpuMs is cumulative).
        const nodeBefore = await sumCpu(workers);
        const pgBefore = await databaseCpuMs(ctx.admin, ctx.name);
        const redisBefore = await redisServerCpuMs();
        const machineBefore = await machineCpuMs();
        const started = performance.now();
        await queue.addBulk(
          runCompletedJobs(TENANT, EVENTS, { strategy: { type: 'slidingWindow', maxMessages: 10 } }, true),
        );
        for (;;) {
          const { failed, active, waiting, delayed } = await queue.getJobCounts(
            'failed',
            'active',
            'waiting',
            'delayed',
          );
          if ((failed ?? 0) > 0) throw new Error(`${failed} jobs failed`);
          if ((active ?? 0) + (waiting ?? 0) + (delayed ?? 0) === 0) break;
          await sleep(20);
        }
        const wallMs = performance.now() - started;
        const capacity = wallMs * CORES;
        const machine = await machineCpuMs();
        runs.push({
          processes,
          jobsPerS: EVENTS / (wallMs / 1000),
          node: ((await sumCpu(workers)) - nodeBefore) / capacity,
          postgres: ((await databaseCpuMs(ctx.admin, ctx.name)) - pgBefore) / capacity,
          redis: ((await redisServerCpuMs()) - redisBefore) / capacity,
          busy: (machine.busy - machineBefore.busy) / (machine.total - machineBefore.total),
        });
        const [applied] = await ctx.sql<{ n: number }[]>`
          select count(*)::int as n from compactions where status = 'applied'`;
        const n = applied?.n ?? 0;
        if (n !== EVENTS) throw new Error(`${n} compactions applied for ${EVENTS} events`);
      } finally {
        await queue.close();
        await connection.quit();
        await Promise.all(workers.map((w) => w.close()));
      }
    }
  }
  const rows = PROCESS_COUNTS.map((processes) => {
    const mine = runs.filter((r) => r.processes === processes);
    const mean = (f: (r: ScaleRun) => number) => mine.reduce((n, r) => n + f(r), 0) / mine.length;
    const shares: Array<[string, number]> = [
      ['Node', mean((r) => r.node)],
      ['Postgres', mean((r) => r.postgres)],
      ['Redis', mean((r) => r.redis)],
    ];
    const top = shares.reduce((a, b) => (b[1] > a[1] ? b : a));
    const pct = (x: number) => `${fmt(100 * x, 0)}%`;
    return [
      String(processes),
      mine.map((r) => fmt(r.jobsPerS, 0)).join(', '),
      fmt(
        mean((r) => r.jobsPerS),
        0,
      ),
      ...shares.map(([, s]) => pct(s)),
      pct(mean((r) => r.busy)),
      mean((r) => r.busy) > 0.9 ? `machine CPU (${top[0]} largest)` : top[0],
    ];
  });
  section(
    '1. Worker processes against one Redis and one Postgres (slidingWindow, no LLM)',
    [
      'worker processes',
      'jobs/s per round',
      'mean jobs/s',
      'Node CPU',
      'Postgres CPU',
      'Redis CPU',
      'machine busy',
      'bottleneck',
    ],
    rows,
    [
      `${EVENTS} events on ${EVENTS} sessions of 60 messages, ${ROUNDS} rounds alternating 1, 2, 4 processes; each process is \`compactor worker --concurrency ${CONCURRENCY}\`.`,
      `CPU shares are of the whole machine (${CORES} cores) over the drain, from /proc: Node is the worker processes, Postgres the bench database's backends, Redis redis-server. Machine busy is every process, this one (enqueuing and polling) included.`,
      'The bottleneck is the component with the largest share; when the machine itself is over 90% busy, adding processes on it only shares the same cores.',
    ],
  );
}

async function sumCpu(workers: WorkerProcess[]): Promise<number> {
  let ms = 0;
  for (const w of workers) if (w.child.pid !== undefined) ms += await processCpuMs(w.child.pid);
  return ms;
}

// 2 ---------------------------------------------------------------------------------------------

async function waitingMemory(prefix: () => string) {
  const rows: string[][] = [];
  for (const count of [1_000, WAITING]) {
    const p = prefix();
    const producer = createProducer({ redisUrl: REDIS_URL, prefix: p });
    const redis = new Redis(REDIS_URL);
    try {
      for (let i = 0; i < count; i += 500) {
        await Promise.all(
          Array.from({ length: Math.min(500, count - i) }, (_, j) =>
            producer.runCompleted({ tenantId: TENANT, sessionId: `w${i + j}`, eventId: randomUUID() }),
          ),
        );
      }
      let bytes = 0;
      let keys = 0;
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${p}:*`, 'COUNT', 1000);
        cursor = next;
        for (const key of found) {
          bytes += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
          keys++;
        }
      } while (cursor !== '0');
      rows.push([
        String(count),
        String(keys),
        fmt(bytes / 2 ** 20, 2),
        fmt(((bytes / count) * 1000) / 2 ** 20, 2),
      ]);
    } finally {
      await producer.close();
      await redis.quit();
    }
  }
  section(
    '2. Redis memory per 1,000 waiting jobs',
    ['waiting jobs', 'keys', 'MB', 'MB per 1,000 jobs'],
    rows,
    [
      "Enqueued with `producer.runCompleted` (one session each, no strategy: the policy decides), no worker running. Bytes are the sum of `MEMORY USAGE key SAMPLES 0` over the queue prefix's keys: the job hashes, the wait list, the dedup keys and the queue's own keys.",
    ],
  );
}

// 3 ---------------------------------------------------------------------------------------------

/** Fills the database with the part-3 history, in slices of 10,000 sessions. */
async function seedHistory(sql: postgres.Sql) {
  await sql`truncate messages, archived_messages, compactions, sessions`;
  const slice = 10_000;
  for (let from = 1; from <= HISTORY_SESSIONS; from += slice) {
    const to = Math.min(HISTORY_SESSIONS, from + slice - 1);
    await sql.begin(async (tx) => {
      await tx`set local synchronous_commit = off`;
      await tx`
        insert into sessions (tenant_id, id, last_seq, message_count, token_count)
        select 't' || (g % ${HISTORY_TENANTS}), 'h' || g, ${PER_SESSION - 1}, ${PER_SESSION}, ${PER_SESSION * 30}
        from generate_series(${from}::int, ${to}::int) g`;
      await tx`
        insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count, pinned)
        select 't' || (g % ${HISTORY_TENANTS}), 'h' || g, q,
          case when q % 2 = 0 then 'user' else 'assistant' end, 'message', c, to_json(c), 30, false
        from generate_series(${from}::int, ${to}::int) g, generate_series(0, ${PER_SESSION - 1}::int) q,
          lateral (select 'message ' || q || ' of session ' || g || ': ' || repeat('lorem ipsum dolor sit amet ', 4) as c) t`;
    });
  }
  await sql`vacuum analyze`;
}

/** How many partitions `table` has (0: a plain table). */
async function partitionsOf(sql: postgres.Sql, table: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_inherits where inhparent = to_regclass(${table})`;
  return row?.n ?? 0;
}

/**
 * Swaps `table` for a plain heap with the same columns, keys, indexes and foreign keys, holding the
 * same rows; the partitioned original stays beside it as `<table>_partitioned`.
 */
async function swapInPlainTable(sql: postgres.Sql, table: string) {
  const fks = await sql<{ def: string }[]>`
    select pg_get_constraintdef(oid) as def from pg_constraint
    where conrelid = to_regclass(${table}) and contype = 'f'`;
  await sql.begin(async (tx) => {
    await tx`set local synchronous_commit = off`;
    await tx.unsafe(`create table ${table}_plain (like ${table} including all)`);
    for (const { def } of fks) await tx.unsafe(`alter table ${table}_plain add ${def}`);
    await tx.unsafe(`insert into ${table}_plain select * from ${table}`);
    await tx.unsafe(`alter table ${table} rename to ${table}_partitioned`);
    await tx.unsafe(`alter table ${table}_plain rename to ${table}`);
  });
  await sql.unsafe(`vacuum analyze ${table}`);
}

/** `count` distinct session numbers in 1..HISTORY_SESSIONS, from a fixed seed, skipping `taken`. */
function sampleSessions(count: number, seed: number, taken: Set<number>): number[] {
  if (taken.size + count > HISTORY_SESSIONS)
    throw new Error(`cannot sample ${count} more of ${HISTORY_SESSIONS} sessions`);
  // mulberry32: 32-bit integer arithmetic only, so the sequence is exact in a JS number.
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const out: number[] = [];
  while (out.length < count) {
    const n = 1 + Math.floor(next() * HISTORY_SESSIONS);
    if (taken.has(n)) continue;
    taken.add(n);
    out.push(n);
  }
  return out;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function history(url: string, sql: postgres.Sql, prefix: () => string) {
  const started = performance.now();
  await seedHistory(sql);
  const seedS = (performance.now() - started) / 1000;
  const partitions = await partitionsOf(sql, 'messages');
  const [size] = await sql<{ bytes: string }[]>`
    select (pg_total_relation_size('messages') + coalesce((
      select sum(pg_total_relation_size(inhrelid)) from pg_inherits where inhparent = 'messages'::regclass), 0))::text as bytes`;
  const taken = new Set<number>();
  const reads = sampleSessions(HISTORY_READS, 7, taken);
  const layouts: Array<{ label: string; prepare: () => Promise<void> }> = [
    {
      label: partitions > 0 ? `hash-partitioned, ${partitions} partitions` : 'as migrated (not partitioned)',
      prepare: async () => {},
    },
    {
      label: 'one heap per table',
      prepare: async () => {
        await swapInPlainTable(sql, 'messages');
        await swapInPlainTable(sql, 'archived_messages');
      },
    },
  ];
  const rows: string[][] = [];
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    for (const [i, layout] of layouts.entries()) {
      await layout.prepare();
      // A pool of its own per layout: no statement prepared against the other layout's tables.
      const database = openDatabase(url, { max: 2 });
      const sessionReads = new PostgresReads(database.db);
      const fencedWrites = new PostgresWrites(database.db, sessionReads);
      try {
        const tenantOf = (n: number) => `t${n % HISTORY_TENANTS}`;
        const readMs: number[] = [];
        for (const [j, n] of reads.entries()) {
          const t0 = performance.now();
          const loaded = await loadContext(database.db, { tenantId: tenantOf(n), sessionId: `h${n}` });
          if (j >= 50) readMs.push(performance.now() - t0);
          if (loaded.messages.length !== PER_SESSION)
            throw new Error(`h${n}: ${loaded.messages.length} messages`);
        }
        const applyMs: number[] = [];
        const leases = new LeaseManager(connection, { prefix: prefix() });
        for (const n of sampleSessions(HISTORY_APPLIES, 1_000 + i, taken)) {
          const t0 = performance.now();
          const outcome = await runCompaction(
            {
              reads: sessionReads,
              writes: fencedWrites,
              leases,
              summarizers: { primary: createExtractiveSummarizer() },
              clock: systemClock,
              logger: silentLogger,
            },
            {
              tenantId: tenantOf(n),
              sessionId: `h${n}`,
              strategy: { type: 'slidingWindow', maxMessages: 10 },
              trigger: 'manual',
              idempotencyKey: `bench:${randomUUID()}`,
              eventId: null,
            },
          );
          applyMs.push(performance.now() - t0);
          if (outcome.row?.status !== 'applied')
            throw new Error(`h${n}: ${outcome.row?.status ?? outcome.status}`);
        }
        readMs.sort((a, b) => a - b);
        applyMs.sort((a, b) => a - b);
        rows.push([
          layout.label,
          fmt(quantile(readMs, 0.5), 2),
          fmt(quantile(readMs, 0.99), 2),
          fmt(quantile(applyMs, 0.5), 2),
          fmt(quantile(applyMs, 0.99), 2),
        ]);
      } finally {
        await database.close();
      }
    }
  } finally {
    await connection.quit();
  }
  section(
    `3. A large history: ${(HISTORY_SESSIONS * PER_SESSION).toLocaleString('en')} messages across ${HISTORY_SESSIONS.toLocaleString('en')} sessions`,
    [
      'layout of messages and archived_messages',
      'loadContext p50 ms',
      'loadContext p99 ms',
      'apply p50 ms',
      'apply p99 ms',
    ],
    rows,
    [
      `${HISTORY_TENANTS.toLocaleString('en')} tenants, ${PER_SESSION} messages per session; messages ${fmt(Number(size?.bytes ?? 0) / 2 ** 30, 2)} GiB with indexes; seeded in ${fmt(seedS, 0)} s.`,
      `loadContext: ${HISTORY_READS - 50} calls on random sessions after 50 warm-up calls, one connection, in-process. Apply: a slidingWindow compaction (keeps 10, archives ${PER_SESSION - 10}) through the in-process pipeline (lease, snapshot, plan, apply) on ${HISTORY_APPLIES} other random sessions per layout.`,
      'Both layouts hold the same rows and the same keys and indexes; the heap layout is the partitioned tables copied with CREATE TABLE … (LIKE … INCLUDING ALL) and swapped in under the same names.',
    ],
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error('bench:scale failed:', error);
    process.exit(1);
  },
);
