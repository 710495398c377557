/**
 * Part 17 of `npm run bench` (`--parts 17`): the PostgreSQL path of one job.
 *
 * 17a. Statements per job: the compactor worker on BullMQ's PostgreSQL backend drains a backlog
 *   (part 1's slidingWindow jobs, and part 2's summarize jobs with the fake Messages API answering
 *   at once) while a wire tap (test/bench/wire-tap.ts) reads every message its two kinds of
 *   connection send: compactor's postgres.js pool and BullMQ's node-postgres pools. Per job: the
 *   statements by purpose, the round trips, the transactions; and the rows each table gained, changed
 *   and lost (`pg_stat_user_tables`).
 * 17b. The soak (`--soak N`, default 10; 0 skips it): part 2's LLM-bound workload (summarize, the fake
 *   answering after 1 s) at concurrency 128 on the PostgreSQL queue, N runs back to back in the same
 *   database and queue schema, nothing cleaned between runs (as a long-lived deployment sees it):
 *   each run's jobs/s, last / first, and per run the dead and live rows of the queue's tables and of
 *   compactor's lease, slot and ledger tables, and whether autovacuum ran on them.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Worker } from 'bullmq';
import postgres from 'postgres';
import { connectionOptions } from '../../producer/postgres/db.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { COMPACTION_QUEUE, jobIdOf, jobOptionsFor, RUN_COMPLETED } from '../../shared/protocol/events.ts';
import { startWorker } from '../../worker/queue/compaction/worker.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { silentLogger } from '../support/fixtures.ts';
import { openRunQueues, type RunQueues } from './backends.ts';
import { databaseCpuMs } from './proc.ts';
import { addSessions, fmt, seedSessions } from './report.ts';
import { type WireCount, WireTap } from './wire-tap.ts';

/** What part 17 needs from the bench: the database, its pool, and where to print. */
export interface PostgresPathContext {
  url: string;
  sql: postgres.Sql;
  section: (title: string, header: string[], rows: string[][], notes?: string[]) => void;
  /** The fake Messages API, answering at once (17a) and after 1 s (17b). */
  llmUrl: string;
  slowLlmUrl: () => Promise<{ url: string; close(): void }>;
}

const TENANT = 'bench';

/**
 * What a statement (a key of {@link WireTap.counts}: its text, or `begin`/`commit` and the
 * transaction's first statement) is for. Order matters: the first pattern that matches names it.
 */
const PURPOSES: [RegExp, string][] = [
  [/update tenant_worker_slots (s )?set expires_at/, 'fair share: slot renew / release'],
  [/tenant_worker_slot/, 'fair share: slot take'],
  [/^(begin|commit|rollback)?.*insert into session_leases/, 'lease: acquire'],
  [/^(with async_commit .*\) )?update session_leases/, 'lease: renew'],
  [/^(with async_commit .*\) )?delete from session_leases/, 'lease: release'],
  [/^select "agent_id", "message_count"/, 'gate read (session row, before the lease)'],
  [
    /^select s\.format, s\.compaction_version|^select m\.seq, m\.pinned/,
    'snapshot read (session + messages)',
  ],
  [/^(begin|commit|rollback) ‹select format, message_count/, 'apply: begin / commit'],
  [
    /^select format, message_count, token_count, compaction_version/,
    'apply: fence (row lock, version, key used)',
  ],
  [/^with moved as/, 'apply: archive the leaving messages'],
  [/^insert into messages/, 'apply: insert the summary'],
  [/^with counters as/, 'apply: counters + ledger row'],
  [/SELECT add_job/, 'events/outbox: session.compacted job (BullMQ)'],
  [/Finish an active job successfully AND claim/, 'queue: complete + claim next (BullMQ)'],
  [
    /Claim the next ready job|"no job" signal|extend_lock|EXTEND|stalled/i,
    'queue: claim / idle / locks (BullMQ)',
  ],
];

/** The purpose of a counted statement key; "other" for start-up and the rest. */
export function purposeOf(key: string): string {
  for (const [pattern, purpose] of PURPOSES) if (pattern.test(key)) return purpose;
  return 'other (start-up, policies, type lookups)';
}

/** Sums `tap`'s counts by purpose, over both clients. */
function byPurpose(tap: WireTap): Map<string, WireCount> {
  const sums = new Map<string, WireCount>();
  for (const byText of tap.counts.values())
    for (const [text, c] of byText) {
      const purpose = purposeOf(text);
      const sum = sums.get(purpose) ?? { statements: 0, roundTrips: 0, transactions: 0 };
      sum.statements += c.statements;
      sum.roundTrips += c.roundTrips;
      sum.transactions += c.transactions;
      sums.set(purpose, sum);
    }
  return sums;
}

/**
 * Seeds `count` sessions of 60 messages and `ledgerRows` earlier ledger rows (seedSessions) on a
 * connection of its own, closed after: a backend reports its table counts when it goes, so the
 * seeding's rows are not counted as the jobs'.
 */
async function seedAlone(url: string, count: number, ledgerRows = count): Promise<void> {
  const sql = postgres(url, { max: 1, ...connectionOptions() });
  try {
    await seedSessions(sql, TENANT, count, 60, { ledgerRows });
  } finally {
    await sql.end();
  }
}

/** Rows gained, changed and lost per table of two schemas, from `pg_stat_user_tables`. */
type TupleCounts = Map<string, { ins: number; upd: number; hot: number; del: number }>;

async function tupleCounts(sql: postgres.Sql, schemas: string[]): Promise<TupleCounts> {
  const rows = await sql<{ name: string; ins: string; upd: string; hot: string; del: string }[]>`
    select schemaname || '.' || relname as name, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot,
           n_tup_del as del
      from pg_stat_user_tables where schemaname in ${sql(schemas)}`;
  return new Map(
    rows.map((r) => [
      r.name,
      { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), del: Number(r.del) },
    ]),
  );
}

/** Part 17a: statements, round trips and transactions per job, by purpose, on both workloads. */
export async function statementsPerJob(
  ctx: PostgresPathContext,
  options: { jobs: number; concurrency: number },
): Promise<void> {
  const workloads = [
    { name: 'slidingWindow', strategy: { type: 'slidingWindow', maxMessages: 10 } },
    { name: 'summarize', strategy: { type: 'summarize', keepRecent: 10 } },
  ] as const;
  const sums: Map<string, WireCount>[] = [];
  const tuples: Map<string, string[]> = new Map();
  for (const [w, workload] of workloads.entries()) {
    await seedAlone(ctx.url, options.jobs);
    const run = await openRunQueues('postgres', ctx.url, ctx.sql);
    const tap = new WireTap();
    try {
      const schemas = ['compactor', run.config().queueSchema ?? ''];
      const before = await drainTapped(ctx, run, tap, workload.strategy, options, () =>
        tupleCounts(ctx.sql, schemas),
      );
      // Backends report their counts when they go: read after the worker closed its pools.
      await new Promise((r) => setTimeout(r, 1_000));
      const after = await tupleCounts(ctx.sql, schemas);
      for (const [name, a] of after) {
        const b = before.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0 };
        const per = (k: 'ins' | 'upd' | 'hot' | 'del') => (a[k] - b[k]) / options.jobs;
        if (per('ins') + per('upd') + per('del') < 0.005) continue;
        const key = name.replace(/^q_bench_[0-9a-f]+\./, '<queue>.');
        const cells = tuples.get(key) ?? ['', ''];
        cells[w] =
          `${fmt(per('ins'), 2)} / ${fmt(per('upd'), 2)} (${fmt(per('hot'), 2)} HOT) / ${fmt(per('del'), 2)}`;
        tuples.set(key, cells);
      }
      sums.push(byPurpose(tap));
    } finally {
      await run.cleanup();
    }
  }
  statementsSection(ctx, sums, tuples, options);
}

/** Prints part 17a's two tables. */
function statementsSection(
  ctx: PostgresPathContext,
  sums: Map<string, WireCount>[],
  tuples: Map<string, string[]>,
  options: { jobs: number; concurrency: number },
): void {
  const purposes = [...new Set([...PURPOSES.map(([, p]) => p), 'other (start-up, policies, type lookups)'])];
  const cell = (sum: Map<string, WireCount> | undefined, purpose: string | null) => {
    const list =
      purpose === null ? [...(sum?.values() ?? [])] : [sum?.get(purpose)].filter((c) => c !== undefined);
    const total = (k: keyof WireCount) => list.reduce((n, c) => n + c[k], 0) / options.jobs;
    return [fmt(total('statements'), 2), fmt(total('roundTrips'), 2), fmt(total('transactions'), 2)];
  };
  const rows = purposes
    .filter((p) => sums.some((s) => (s.get(p)?.statements ?? 0) / options.jobs >= 0.005))
    .map((p) => [p, ...sums.flatMap((s) => cell(s, p))]);
  rows.push(['**total per job**', ...sums.flatMap((s) => cell(s, null).map((c) => `**${c}**`))]);
  ctx.section(
    '17a. Statements per job on the PostgreSQL path',
    [
      'purpose',
      'slidingWindow: statements',
      'round trips',
      'transactions',
      'summarize: statements',
      'round trips',
      'transactions',
    ],
    rows,
    [
      `${options.jobs} jobs on ${options.jobs} sessions of 60 messages, concurrency ${options.concurrency}, the compactor worker on BullMQ's PostgreSQL backend; slidingWindow (maxMessages 10) as in part 1, summarize (keepRecent 10) with the fake Messages API answering at once. Load average at the start: ${loadAverage()}.`,
      "Counted on the wire (test/bench/wire-tap.ts) on every connection of compactor's postgres.js pool and of BullMQ's node-postgres pools (the worker's, the session-events queue's), from the worker's first job to its close, divided by the jobs. A statement is an Execute or a simple Query; a round trip is a flight of writes after the server answered (a pipelined batch is one); a transaction is a begin, or a statement outside one. `begin` and `commit` are counted under the transaction they open and close.",
    ],
  );
  ctx.section(
    '17a. Rows per job by table (inserted / updated (of which HOT) / deleted)',
    ['table', 'slidingWindow', 'summarize'],
    [...tuples].sort((a, b) => a[0].localeCompare(b[0])).map(([name, cells]) => [name, ...cells]),
    [
      "From `pg_stat_user_tables` before the first job and after the worker closed, divided by the jobs; tables under 0.005 rows per job are left out. `<queue>` is BullMQ's schema of the run.",
    ],
  );
}

/** The machine's 1-, 5- and 15-minute load averages. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
}

/** Runs `jobs` jobs of `strategy` through a tapped worker; returns once all settled. */
async function drainTapped(
  ctx: PostgresPathContext,
  run: RunQueues,
  tap: WireTap,
  strategy: object,
  options: { jobs: number; concurrency: number },
  before: () => Promise<TupleCounts>,
): Promise<TupleCounts> {
  const { hostname, port } = new URL(ctx.url);
  const config = run.config({ anthropicApiKey: 'bench', anthropicBaseUrl: ctx.llmUrl });
  const services = openServices(config, silentLogger, {
    summarizers: strategy && 'maxMessages' in strategy ? { primary: createExtractiveSummarizer() } : {},
    sockets: {
      database: tap.postgresJsSocket('compactor (postgres.js)', hostname, Number(port || 5432)),
      queue: tap.pgStream('BullMQ (node-postgres)'),
    },
  });
  const w = startWorker(services, { concurrency: options.concurrency });
  const link = run.queues.link({ poolSize: 2 });
  const queue = new run.queues.Queue(COMPACTION_QUEUE, link.options);
  queue.on('error', () => {});
  try {
    await w.worker.waitUntilReady();
    tap.reset();
    const counts = await before();
    const done = settled(w.worker, options.jobs);
    await queue.addBulk(
      Array.from({ length: options.jobs }, (_, i) => {
        const eventId = randomUUID();
        return {
          name: RUN_COMPLETED,
          data: { tenantId: TENANT, sessionId: `s${i + 1}`, eventId, strategy },
          opts: { ...jobOptionsFor('postgres'), jobId: jobIdOf(TENANT, eventId) },
        };
      }),
    );
    await done;
    return counts;
  } finally {
    await w.close();
    await queue.close();
    await link.close();
  }
}

/** Resolves once `worker` settled `n` jobs (completed, or failed for good). */
function settled(worker: Worker, n: number): Promise<void> {
  return new Promise((resolve) => {
    let count = 0;
    const one = () => {
      count += 1;
      if (count === n) resolve();
    };
    worker.on('completed', one);
    worker.on('failed', (job, error) => {
      if (!job || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)) one();
    });
  });
}

/** The soak's concurrency and jobs per run: part 2's level 128, ten waves. */
const SOAK_CONCURRENCY = 128;
const SOAK_JOBS = SOAK_CONCURRENCY * 10;

/** A table's row counts and vacuum history, from `pg_stat_user_tables`. */
interface TableState {
  live: number;
  dead: number;
  autovacuums: number;
  lastAutovacuum: Date | null;
}

async function tableStates(sql: postgres.Sql, schemas: string[]): Promise<Map<string, TableState>> {
  const rows = await sql<
    { name: string; live: string; dead: string; autovacuums: string; last_autovacuum: Date | null }[]
  >`
    select schemaname || '.' || relname as name, n_live_tup as live, n_dead_tup as dead,
           autovacuum_count as autovacuums, last_autovacuum
      from pg_stat_user_tables where schemaname in ${sql(schemas)}`;
  return new Map(
    rows.map((r) => [
      r.name,
      {
        live: Number(r.live),
        dead: Number(r.dead),
        autovacuums: Number(r.autovacuums),
        lastAutovacuum: r.last_autovacuum,
      },
    ]),
  );
}

/** A soak table's name qualified by its schema: the queue's (`job`, `event`), else compactor's. */
function qualified(table: string, queueSchema: string): string {
  return `${['job', 'event'].includes(table) ? queueSchema : 'compactor'}.${table}`;
}

/** The tables the soak reports, by the name it prints: the queue's, then compactor's. */
const SOAK_TABLES = [
  'job',
  'event',
  'session_leases',
  'tenant_worker_slots',
  'compactions',
  'sessions',
] as const;

/**
 * Part 17b: `runs` runs of part 2's workload at concurrency 128 on one PostgreSQL queue schema and
 * one database, nothing cleaned between them.
 */
export async function soak(ctx: PostgresPathContext, runs: number, vacuumBetween = false): Promise<void> {
  const llm = await ctx.slowLlmUrl();
  // An empty ledger, as the soaks before it began: with autovacuum off its statistics stay those of
  // the seed, and a ledger analyzed at one row and grown to 12,800 unanalyzed had the session's
  // lookups walk all the tenant's rows (36,569 pages a job by the tenth run).
  await seedAlone(ctx.url, 1, 0);
  const run = await openRunQueues('postgres', ctx.url, ctx.sql);
  const queueSchema = run.config().queueSchema ?? '';
  const schemas = ['compactor', queueSchema];
  const rows: string[][] = [];
  const rates: number[] = [];
  const load = loadAverage();
  const autovacuum = (
    await ctx.sql<{ setting: string }[]>`select setting from pg_settings where name = 'autovacuum'`
  )[0]?.setting;
  try {
    for (let r = 1; r <= runs; r++) {
      const measured = await soakRun(ctx, run, llm.url, `r${r}s`, schemas);
      // What autovacuum would have done by now on a server that runs it (this one may not).
      if (vacuumBetween)
        await ctx.sql.unsafe(`vacuum ${SOAK_TABLES.map((t) => qualified(t, queueSchema)).join(', ')}`);
      const { jobsPerS } = measured;
      rates.push(jobsPerS);
      const states = await tableStates(ctx.sql, schemas);
      const name = (table: string) =>
        `${['job', 'event'].includes(table) ? queueSchema : 'compactor'}.${table}`;
      const vacuumed = [...states]
        .filter(([, s]) => s.autovacuums > 0)
        .map(([n, s]) => `${n.replace(queueSchema, '<queue>')} ×${s.autovacuums}`);
      const allPages = [...measured.pages.values()].reduce((a, b) => a + b, 0);
      rows.push([
        String(r),
        fmt(jobsPerS, 1),
        fmt(jobsPerS / (rates[0] ?? jobsPerS), 2),
        fmt(measured.postgresCpuPerJob, 2),
        fmt(allPages, 0),
        ...SOAK_TABLES.map((t) => {
          const state = states.get(name(t));
          return `${fmt(measured.pages.get(name(t)) ?? 0, 1)}; ${state?.dead ?? 0} / ${state?.live ?? 0}`;
        }),
        vacuumed.length ? vacuumed.join(', ') : 'none',
        measured.connections,
      ]);
    }
  } finally {
    llm.close();
    await run.cleanup();
  }
  const last = rates.at(-1) ?? 0;
  const first = rates[0] ?? 1;
  ctx.section(
    `17b. Soak: ${runs} runs back to back at concurrency ${SOAK_CONCURRENCY} on the PostgreSQL queue, ${vacuumBetween ? 'its tables vacuumed between runs (--soak-vacuum)' : 'nothing cleaned between'}`,
    [
      'run',
      'jobs/s',
      'of run 1',
      'Postgres CPU ms per job',
      'pages read per job (all tables)',
      ...SOAK_TABLES.map((t) => `${t}: pages per job; dead / live rows`),
      'autovacuum ran on',
      'peak connections (compactor / queue)',
    ],
    rows,
    [
      `Last / first: **${fmt(last / first, 2)}** (target ≥ 0.95: ${last / first >= 0.95 ? 'met' : 'missed'}).`,
      `Each run: ${SOAK_JOBS} summarize jobs (keepRecent 10) on ${SOAK_JOBS} new sessions of 60 messages added beside the earlier runs' (none deleted), the fake Messages API in its own process answering after 1 s, a compactor worker at concurrency ${SOAK_CONCURRENCY} started for the run (its pools as \`compactor worker --concurrency ${SOAK_CONCURRENCY}\` sizes them) and closed after; jobs/s from its start to its last job settled. Every run uses the same database and the same queue schema; completed jobs stay as the producer's job options keep them on this backend (\`jobOptionsFor('postgres')\`: a day, by age alone).`,
      "`job` and `event` are BullMQ's tables in the queue schema; the others are compactor's. Pages read: buffer pages (hits and reads, heap, indexes and TOAST) from `pg_statio_user_tables` over the run's jobs, per job: the work a table costs, which grows as it bloats whatever else the machine runs (jobs/s and CPU do not, on a shared machine). Dead / live rows from `pg_stat_user_tables` after each run. Both read after the worker closed, so its backends had reported their counts. Postgres CPU: the database's backends, from /proc, over the run, per job.",
      "Peak connections: the most backends of the database at once, among those the run's worker opened, sampled every 200 ms: compactor's postgres.js pool and its LISTEN connection (`application_name` `compactor`) / BullMQ's pools (`compactor-queue`) and LISTEN connections (named after their queues).",
      `autovacuum on this server: ${autovacuum}. Load average at the start: ${load}; at the end: ${loadAverage()}.`,
    ],
  );
}

/** One soak run: sessions `<prefix>1..`, their jobs, a worker at 128 until all settled; its jobs/s. */
async function soakRun(
  ctx: PostgresPathContext,
  run: RunQueues,
  llmUrl: string,
  prefix: string,
  schemas: string[],
): Promise<SoakRun> {
  // On connections that close before the worker starts: a backend reports its counts when it goes.
  const seeding = postgres(ctx.url, { max: 1, ...connectionOptions() });
  await addSessions(seeding, TENANT, SOAK_JOBS, 60, prefix).finally(() => seeding.end());
  const link = run.queues.link({ poolSize: 2 });
  const queue = new run.queues.Queue(COMPACTION_QUEUE, link.options);
  queue.on('error', () => {});
  try {
    await queue.addBulk(
      Array.from({ length: SOAK_JOBS }, (_, i) => {
        const eventId = randomUUID();
        return {
          name: RUN_COMPLETED,
          data: {
            tenantId: TENANT,
            sessionId: `${prefix}${i + 1}`,
            eventId,
            strategy: { type: 'summarize', keepRecent: 10 },
          },
          opts: { ...jobOptionsFor('postgres'), jobId: jobIdOf(TENANT, eventId) },
        };
      }),
    );
  } finally {
    await queue.close();
    await link.close();
  }
  await sleep(500);
  const pagesBefore = await pagesRead(ctx.sql, schemas);
  const database = new URL(ctx.url).pathname.slice(1);
  const cpuBefore = await databaseCpuMs(ctx.sql, database);
  const config = run.config({ anthropicApiKey: 'bench', anthropicBaseUrl: llmUrl });
  const services = openServices(config, silentLogger);
  const started = performance.now();
  const w = startWorker(services, { concurrency: SOAK_CONCURRENCY });
  const peak = peakConnections(ctx.sql);
  await settled(w.worker, SOAK_JOBS);
  const ms = performance.now() - started;
  const connections = await peak.stop();
  const cpu = (await databaseCpuMs(ctx.sql, database)) - cpuBefore;
  await w.close();
  await sleep(1_000);
  const pagesAfter = await pagesRead(ctx.sql, schemas);
  const pages = new Map(
    [...pagesAfter].map(([name, n]) => [name, (n - (pagesBefore.get(name) ?? 0)) / SOAK_JOBS]),
  );
  return { jobsPerS: SOAK_JOBS / (ms / 1000), connections, postgresCpuPerJob: cpu / SOAK_JOBS, pages };
}

/** What one soak run measured. */
interface SoakRun {
  jobsPerS: number;
  /** Peak connections, "compactor / BullMQ". */
  connections: string;
  /** CPU ms of the database's backends over the run, per job. */
  postgresCpuPerJob: number;
  /** Buffer pages each table (heap, indexes, TOAST) was read, per job, by table. */
  pages: Map<string, number>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Buffer pages read so far (hits and reads: heap, indexes, TOAST) by table of `schemas`, from
 * `pg_statio_user_tables`: work that grows when a table bloats, whatever else the machine runs.
 */
async function pagesRead(sql: postgres.Sql, schemas: string[]): Promise<Map<string, number>> {
  const rows = await sql<{ name: string; pages: string }[]>`
    select schemaname || '.' || relname as name,
           coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) + coalesce(idx_blks_hit, 0)
           + coalesce(idx_blks_read, 0) + coalesce(toast_blks_hit, 0) + coalesce(toast_blks_read, 0)
           + coalesce(tidx_blks_hit, 0) + coalesce(tidx_blks_read, 0) as pages
      from pg_statio_user_tables where schemaname in ${sql(schemas)}`;
  return new Map(rows.map((r) => [r.name, Number(r.pages)]));
}

/**
 * Samples, every 200 ms until `stop`, the backends of the current database that connected since
 * the call (the worker's, not the bench's): compactor's (`application_name` `compactor`) and the
 * rest (BullMQ's pools, `compactor-queue`, and its LISTEN connections, named after their queues).
 * `stop` gives the peaks, "compactor / BullMQ".
 */
function peakConnections(sql: postgres.Sql): { stop(): Promise<string> } {
  let own = 0;
  let queue = 0;
  let running = true;
  const since = new Date();
  const loop = (async () => {
    while (running) {
      const [row] = await sql<{ own: number; queue: number }[]>`
        select count(*) filter (where application_name = 'compactor')::int as own,
               count(*) filter (where application_name <> 'compactor')::int as queue
          from pg_stat_activity where datname = current_database() and backend_start >= ${since}`;
      own = Math.max(own, row?.own ?? 0);
      queue = Math.max(queue, row?.queue ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return `${own} / ${queue}`;
    },
  };
}
