/**
 * `npm run bench`: how close compactor runs to the limit of its own stack (BullMQ, Redis and
 * Postgres doing the same row work with nothing on top), measured in one run on this machine and
 * reported as ratios, so the numbers mean the same on a slower or faster machine. Writes every table
 * to test/bench/results.md.
 *
 * 1. Throughput against the floor (test/bench/floor.ts), alternating runs, same sessions (60
 *    messages each), same concurrency, on each queue backend (Redis, BullMQ's PostgreSQL backend),
 *    the floor on the same backend as the compactor runs it is compared with (test/bench/backends.ts).
 * 2. LLM-bound scaling: the fake Messages API answering after 1 s; jobs/s at concurrency 1, 8, 32,
 *    128 against the ideal (concurrency / latency), with peak RSS, on each queue backend.
 * 3. Latency enqueue → applied at a steady 50% of the measured throughput, no LLM.
 * 4. Big sessions: 100,000 messages compacted by slidingWindow and by summarize (chunked, fake LLM).
 * 5. Coalescing: 1,000 events for one session in a burst.
 * 6. Where time goes in one compaction, by pipeline stage.
 * 7. Import of the largest Claude Code sample in corpus/claude-code (1.16 MB): parse, and parse +
 *    insert, median of a few runs.
 * 8. The read path: loadContext latency; and (printed as 11) recall's search and read on the archive
 *    of the same compacted 100,000-message session.
 * 9. The HTTP API against the in-process producer: appends and enqueues per second at concurrency
 *    32, over HTTP (`compactor api`'s app on a loopback port, called with fetch from this process)
 *    and in-process, in the same run.
 * 10. Noisy neighbor (test/bench/noisy-neighbor.ts): a quiet tenant's append, context read and
 *    compaction alone and while another tenant floods, and `compactor api`'s peak RSS
 *    (`npm run bench:noisy` runs this part alone).
 * 12. Hostile MCP bodies (test/bench/hostile-mcp.ts): a quiet tenant's context-read p99 alone and
 *    while three 3.9 MB JSON-RPC bodies nested 1,950,000 deep are in flight to `/v1/mcp`, and
 *    `compactor api`'s peak RSS.
 * 13. The hostile-input suite (test/bench/hostile-suite.ts): the cases of
 *    test/security/hostile-input.test.ts sent to `compactor api`, and its peak RSS through them.
 * 14. The AI SDK middleware (test/bench/ai-sdk-middleware.ts): the time it adds to one
 *    `generateText` call on a 500-message session, median and p95, against a target of 5 ms.
 * 15. The command line (test/bench/cli-startup.ts): `compactor --version`, `--help`, and
 *    `history` and `context` on a 509-message session, wall time spawn to exit (median of 5) and
 *    peak RSS, against 0.3 s and 0.8 s.
 * 16. Worker processes (test/bench/worker-processes.ts): `compactor worker --processes N` (built, as
 *    users run it) at N = 1, 2, 4 with 128 jobs in flight in all, on part 2's workload (the fake
 *    Messages API answering after 1 s), on each queue backend: jobs/s against the ideal, CPU ms per
 *    job and peak RSS summed over the process tree.
 * 17. The PostgreSQL path (test/bench/postgres-path.ts; not in the default parts): 17a, the
 *    statements, round trips and transactions per job by purpose, counted on the wire, and the rows
 *    per job by table (`--events`, `--concurrency`); 17b, the soak: `--soak N` runs (default 10; 0
 *    skips it) of part 2's workload at concurrency 128 on one PostgreSQL queue schema, nothing
 *    cleaned between runs, with each table's dead rows and pages read per job; `--soak-vacuum`
 *    vacuums those tables between runs, as autovacuum would.
 *
 * Options: `--events N` (part 1, default 3000), `--concurrency C` (parts 1 and 3, default 8),
 * `--alternations A` (part 1: runs of each side, floor and compactor alternating; default 3),
 * `--levels 1,8,32,128` (part 2: the concurrency levels, default all four; `--levels 128` runs the
 * one the target reads), `--parts 1,2,4,5,7,8,9,10,12,13,14,15,16` (default all; part 1 also runs 3 and 6, which need
 * its numbers), `--api-node-options=--max-old-space-size=256` (parts 10, 12 and 13: the API process's
 * NODE_OPTIONS; default none), `--backends redis,postgres` (parts 1, 2 and 16: the queue backends, in
 * that order; default both; parts 3 and 6 use Redis and the first backend's runs), `--sides
 * floor,compactor` (parts 1 and 2: which workers run; default both; one side alone prints no ratio,
 * for a profile or an A/B of one side). Only a run of every part at the default levels rewrites
 * results.md. Benchmarks print numbers; they assert nothing.
 *
 * Parts 1 and 2 run the worker in this process (only the fake Messages API has a process of its
 * own), so a profile of the worker is a profile of this process:
 * `node --cpu-prof --cpu-prof-dir=DIR --import tsx test/bench/bench.ts --parts 2 --levels 128`
 * (the floor's runs alternate with the compactor's in the same profile; `--sides compactor` profiles
 * the compactor's alone). `--profile DIR` records part 2's measured phase alone, one
 * `DIR/part2-<side>-<backend>-c<c>-<time>-<jobs>jobs.cpuprofile` per run (test/bench/run-profile.ts,
 * which also reads one: `tsx test/bench/run-profile.ts FILE JOBS` prints self time per job by file
 * and by function).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import type { Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { type ImportedSession, importTranscript, readTranscript } from '../../producer/import.ts';
import {
  appendMessages,
  createProducer,
  createSession,
  type LoadedContext,
  loadContext,
  readRecall,
  searchRecall,
} from '../../producer/index.ts';
import { connectionOptions, openDatabase } from '../../producer/postgres/db.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { DEFAULT_LIMITS } from '../../shared/policy/limits.ts';
import { COMPACTION_QUEUE, RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { QueueBackendKind } from '../../shared/protocol/queue-backend.ts';
import { createApiApp } from '../../worker/http/api/index.ts';
import { TenantLimits } from '../../worker/http/api/tenant-limits.ts';
import { listen } from '../../worker/http/ops.ts';
import { systemClock } from '../../worker/pipeline/clock.ts';
import { runCompaction, type Stage } from '../../worker/pipeline/pipeline.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { PolicyCache } from '../../worker/postgres/policy-cache.ts';
import { PostgresReads } from '../../worker/postgres/reads.ts';
import { PostgresWrites } from '../../worker/postgres/writes.ts';
import { startWorker } from '../../worker/queue/compaction/worker.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { openServices, poolSizeFor } from '../../worker/runtime/services.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { cleanRedis, silentLogger, testConfig } from '../support/fixtures.ts';
import { aiSdkMiddlewareOverhead } from './ai-sdk-middleware.ts';
import { openRunQueues, parseBackends, parseSides } from './backends.ts';
import { cliStartup } from './cli-startup.ts';
import { startFloorWorker, startLlmFloorWorker } from './floor.ts';
import { hostileMcp } from './hostile-mcp.ts';
import { hostileSuite } from './hostile-suite.ts';
import { noisyNeighbor } from './noisy-neighbor.ts';
import { soak, statementsPerJob } from './postgres-path.ts';
import { databaseCpuMs, processCpuMs, redisServerCpuMs } from './proc.ts';
import {
  fmt,
  median,
  positiveInteger,
  Report,
  type RunCompletedExtra,
  runCompletedJobs,
  seedSessions,
  steadyJobsPerS,
} from './report.ts';
import { type RunProfile, startRunProfile } from './run-profile.ts';
import { countSocketWrites } from './socket-writes.ts';
import { workerProcesses } from './worker-processes.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '8' },
    alternations: { type: 'string', default: '3' },
    levels: { type: 'string', default: '1,8,32,128' },
    parts: { type: 'string', default: '1,2,4,5,7,8,9,10,12,13,14,15,16' },
    'api-node-options': { type: 'string', default: '' },
    backends: { type: 'string', default: 'redis,postgres' },
    sides: { type: 'string', default: 'floor,compactor' },
    soak: { type: 'string', default: '10' },
    'soak-vacuum': { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});
const PARTS = new Set(values.parts.split(',').map((p) => p.trim()));
const EVENTS = positiveInteger('events', values.events);
const CONCURRENCY = positiveInteger('concurrency', values.concurrency);
const ALTERNATIONS = positiveInteger('alternations', values.alternations);
const BACKENDS = parseBackends(values.backends);
const SIDES = parseSides(values.sides);
const SOAK_RUNS = values.soak === '0' ? 0 : positiveInteger('soak', values.soak);
const LEVELS = values.levels.split(',').map((c) => positiveInteger('levels', c.trim()));
const ALL_PARTS =
  ['1', '2', '4', '5', '7', '8', '9', '10', '12', '13', '14', '15', '16'].every((p) => PARTS.has(p)) &&
  values.levels === '1,8,32,128';
const TENANT = 'bench';
const RESULTS = fileURLToPath(new URL('./results.md', import.meta.url));
/** Runs of part 7, whose median it reports. */
const IMPORT_RUNS = 5;

const report = new Report('compactor benchmarks', 2);
const section = report.section.bind(report);
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * CPU time used so far, ms: this process, the Postgres backends connected to the bench database
 * (a backend that connected since the last reading counts from its start), and redis-server.
 */
async function cpuNow(): Promise<{ node: number; postgres: number; redis: number }> {
  const usage = process.cpuUsage();
  const totals = { node: (usage.user + usage.system) / 1000, postgres: 0, redis: 0 };
  totals.postgres = await databaseCpuMs(benchDb.admin, benchDb.name);
  totals.redis = await redisServerCpuMs();
  return totals;
}

/** The bench database and an admin connection, for its backends' CPU. Set by main(). */
const benchDb = { name: '', admin: null as unknown as postgres.Sql };

async function main() {
  const name = `compactor_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  benchDb.name = name;
  benchDb.admin = admin;
  const url = databaseUrlFor(name);
  await migrateDatabase(url);
  const sql = postgres(url, { max: 10, ...connectionOptions() });
  const fake = new FakeAnthropicServer();
  const llm = await fake.start();
  const prefixes: string[] = [];
  const prefix = () => {
    const p = `bench${randomBytes(4).toString('hex')}`;
    prefixes.push(p);
    return p;
  };
  try {
    if (PARTS.has('1')) await throughput(url, sql);
    if (PARTS.has('2')) {
      const slow = await fakeServerProcess(1_000);
      try {
        await llmScaling(url, sql, slow);
      } finally {
        slow.kill();
      }
    }
    if (PARTS.has('4')) {
      // In its own process, so the fake's memory (it keeps every request) is not the worker's.
      const server = await fakeServerProcess(0);
      try {
        await bigSessions(url, sql, prefix, server.url);
      } finally {
        server.kill();
      }
    }
    if (PARTS.has('5')) await coalescing(url, sql, prefix, fake, llm.url);
    if (PARTS.has('7')) await importSample(url);
    if (PARTS.has('8')) await readPath(url, sql, prefix);
    if (PARTS.has('9')) await httpApi(url, sql, prefix);
    if (PARTS.has('10')) await noisyNeighbor(url, sql, prefix, section, values['api-node-options']);
    if (PARTS.has('12')) await hostileMcp(url, sql, prefix, section, values['api-node-options']);
    if (PARTS.has('13')) await hostileSuite(url, sql, prefix, section, values['api-node-options']);
    if (PARTS.has('14')) await aiSdkMiddlewareOverhead(url, prefix(), section);
    if (PARTS.has('15')) await cliStartup(url, section);
    if (PARTS.has('16')) {
      const slow = await fakeServerProcess(1_000);
      try {
        await workerProcesses(url, sql, slow.url, BACKENDS, section);
      } finally {
        slow.kill();
      }
    }
    if (PARTS.has('17')) {
      const context = {
        url,
        sql,
        section,
        llmUrl: llm.url,
        slowLlmUrl: async () => {
          const slow = await fakeServerProcess(1_000);
          return { url: slow.url, close: () => slow.kill() };
        },
      };
      await statementsPerJob(context, { jobs: EVENTS, concurrency: CONCURRENCY });
      if (SOAK_RUNS > 0) await soak(context, SOAK_RUNS, values['soak-vacuum']);
    }
    if (ALL_PARTS) {
      await writeFile(RESULTS, report.text());
      console.log(`\nwritten to ${RESULTS}`);
    }
  } finally {
    await llm.close();
    await sql.end();
    for (const p of prefixes) await cleanRedis(p);
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** Replaces every session with `count` fresh sessions of the bench tenant (see seedSessions). */
function seed(sql: postgres.Sql, count: number, perSession: number, prefixId = 's') {
  return seedSessions(sql, TENANT, count, perSession, { prefixId });
}

/** Waits until `queue` has `n` completed jobs; returns the elapsed ms from `started`. */
async function drained(queue: Queue, n: number, started: number): Promise<number> {
  for (;;) {
    const { completed, failed } = await queue.getJobCounts('completed', 'failed');
    if ((completed ?? 0) + (failed ?? 0) >= n) return performance.now() - started;
    await sleep(20);
  }
}

function redis() {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/** An `onStage` callback that appends each stage's ms to its list in `stages`. */
function recordInto(stages: Map<string, number[]>): (stage: Stage, ms: number) => void {
  return (stage, ms) => {
    const list = stages.get(stage) ?? [];
    list.push(ms);
    stages.set(stage, list);
  };
}

// 1 + 3 + 6 ------------------------------------------------------------------------------------

type Cpu = Awaited<ReturnType<typeof cpuNow>>;

/** One run of part 1: which worker, on which backend, its jobs/s and its CPU ms per job. */
interface ThroughputRun {
  kind: 'floor' | 'compactor';
  jobsPerS: number;
  cpu: Cpu;
}

/**
 * Part 1 on each backend of `--backends` (floor and compactor alternating, each run on a queue of
 * its own), then part 3 (on Redis) and part 6 (from the first backend's compactor runs).
 */
async function throughput(url: string, sql: postgres.Sql) {
  const runs = new Map<QueueBackendKind, ThroughputRun[]>();
  const stages = new Map<string, number[]>();
  const queueWait: number[] = [];
  const order = Array.from({ length: ALTERNATIONS }, () => SIDES).flat();
  for (const [i, backend] of BACKENDS.entries()) {
    const list: ThroughputRun[] = [];
    runs.set(backend, list);
    for (const kind of order)
      list.push(await throughputRun(kind, backend, url, sql, i === 0 ? { stages, queueWait } : null));
  }
  throughputSection(runs);
  const redisRuns = runs.get('redis') ?? [...runs.values()][0] ?? [];
  await latency(url, sql, meanOf(redisRuns.filter((r) => r.kind === 'compactor').map((r) => r.jobsPerS)));
  const stageRows = (['admission', 'lease', 'snapshot', 'plan', 'apply'] as Stage[]).map((s) => [
    s,
    fmt(meanOf(stages.get(s) ?? []), 2),
  ]);
  const total = stageRows.reduce((n, r) => n + Number(r[1]), 0);
  section(
    '6. Where time goes in one compaction (slidingWindow, 60 messages, mean per job)',
    ['stage', 'ms'],
    [
      ['queue wait (enqueue → processing, pre-filled queue)', fmt(meanOf(queueWait), 0)],
      ...stageRows,
      ['pipeline total', fmt(total, 2)],
    ],
    [
      `From part 1's compactor runs on the ${BACKENDS[0]} backend.`,
      'Queue wait here is dominated by the pre-filled backlog; see part 3 for enqueue → applied at a steady rate.',
      'Summarizing is absent for slidingWindow; with the LLM it is the LLM latency (part 2).',
    ],
  );
}

/** Mean of `xs`, 0 when empty. */
function meanOf(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

/**
 * One run of part 1: `kind`'s worker on a fresh queue of `backend` draining EVENTS pre-filled
 * jobs; with `record`, the compactor's stage times and queue waits are added to it.
 */
async function throughputRun(
  kind: 'floor' | 'compactor',
  backend: QueueBackendKind,
  url: string,
  sql: postgres.Sql,
  record: { stages: Map<string, number[]>; queueWait: number[] } | null,
): Promise<ThroughputRun> {
  await seed(sql, EVENTS, 60);
  const run = await openRunQueues(backend, url, sql);
  const link = run.queues.link({ poolSize: 2 });
  const queue = new run.queues.Queue(COMPACTION_QUEUE, link.options);
  queue.on('error', () => {});
  try {
    // Fresh event ids for each run: the floor and compactor runs share no job.
    const extra: RunCompletedExtra =
      kind === 'floor' ? { keep: 10 } : { strategy: { type: 'slidingWindow', maxMessages: 10 } };
    await queue.addBulk(runCompletedJobs(TENANT, EVENTS, extra, false));
    const cpuBefore = await cpuNow();
    const started = performance.now();
    let close: () => Promise<void>;
    let worker: Worker;
    if (kind === 'floor') {
      const floor = startFloorWorker({
        sql,
        queues: run.queues,
        queueName: COMPACTION_QUEUE,
        concurrency: CONCURRENCY,
      });
      worker = floor.worker;
      close = floor.close;
    } else {
      const services = openServices(run.config(), silentLogger, {
        summarizers: { primary: createExtractiveSummarizer() },
      });
      const w = startWorker(services, {
        concurrency: CONCURRENCY,
        ...(record ? { onStage: recordInto(record.stages) } : {}),
      });
      worker = w.worker;
      close = () => w.close();
    }
    // Counted from the worker's events: on Postgres, counting the queue's jobs every 20 ms cost
    // about 4 ms of Postgres CPU a poll, a tenth of the two cores both sides share.
    const ms = await settled(worker, EVENTS, started);
    const cpuAfter = await cpuNow();
    await close();
    if (kind === 'compactor' && record) {
      const jobs = await queue.getJobs(['completed'], 0, 499);
      for (const j of jobs)
        if (j.processedOn && j.timestamp) record.queueWait.push(j.processedOn - j.timestamp);
    }
    const perJob = (k: keyof Cpu) => (cpuAfter[k] - cpuBefore[k]) / EVENTS;
    return {
      kind,
      jobsPerS: EVENTS / (ms / 1000),
      cpu: { node: perJob('node'), postgres: perJob('postgres'), redis: perJob('redis') },
    };
  } finally {
    await queue.close();
    await link.close();
    await run.cleanup();
  }
}

/** Prints part 1: per backend, floor and compactor side by side, the ratios and Postgres's limit. */
function throughputSection(runs: Map<QueueBackendKind, ThroughputRun[]>) {
  const avg = (b: QueueBackendKind, k: 'floor' | 'compactor', of: (r: ThroughputRun) => number) =>
    meanOf((runs.get(b) ?? []).filter((r) => r.kind === k).map(of));
  const columns = BACKENDS.flatMap((b) => [`${b}: floor`, `${b}: compactor`]);
  const row = (
    label: string,
    of: (b: QueueBackendKind, k: 'floor' | 'compactor') => number,
    digits: number,
  ) => [label, ...BACKENDS.flatMap((b) => [fmt(of(b, 'floor'), digits), fmt(of(b, 'compactor'), digits)])];
  const nth = (i: number) => (b: QueueBackendKind, k: 'floor' | 'compactor') =>
    (runs.get(b) ?? []).filter((r) => r.kind === k)[i]?.jobsPerS ?? 0;
  const jobsPerS = (b: QueueBackendKind, k: 'floor' | 'compactor') => avg(b, k, (r) => r.jobsPerS);
  const ratio = (b: QueueBackendKind) => jobsPerS(b, 'compactor') / jobsPerS(b, 'floor');
  const ratios = BACKENDS.map(
    (b) =>
      `${b} **${fmt(ratio(b), 2)}** (target ≥ 0.80: ${Number.isFinite(ratio(b)) ? (ratio(b) >= 0.8 ? 'met' : 'missed') : 'n/a, one side ran'})`,
  );
  const notes = [
    `${EVENTS} events on ${EVENTS} sessions of 60 messages, concurrency ${CONCURRENCY}, ${ALTERNATIONS} runs of each, alternating, on each backend (${BACKENDS.join(' first, then ')}). Each run has a queue of its own (a key prefix on Redis, a schema migrated for it on Postgres), dropped after; the floor runs on the same backend as the compactor runs it is compared with.`,
    `Ratio compactor / floor: ${ratios.join('; ')}.`,
  ];
  if (runs.has('redis') && runs.has('postgres')) {
    const pr = (k: 'floor' | 'compactor') => jobsPerS('postgres', k) / jobsPerS('redis', k);
    notes.push(
      `Ratio Postgres / Redis (mean jobs/s): compactor **${fmt(pr('compactor'), 2)}**, floor ${fmt(pr('floor'), 2)}.`,
    );
  }
  for (const b of BACKENDS) {
    const pg = avg(b, 'compactor', (r) => r.cpu.postgres);
    if (pg > 0)
      notes.push(
        `Postgres saturates at (${b} backend, compactor): one core ≈ ${fmt(1000 / pg, 0)} jobs/s, two cores ≈ ${fmt(2000 / pg, 0)} jobs/s (1000 ms / ${fmt(pg, 2)} Postgres CPU ms per job).`,
      );
  }
  notes.push(
    "CPU is read from /proc in 10 ms ticks: this process, the Postgres backends of the bench database (on the postgres backend these include BullMQ's own pools and LISTEN connections, which connect to the same database), redis-server.",
  );
  section(
    '1. Throughput against the floor (slidingWindow, no LLM)',
    ['', ...columns],
    [
      ...Array.from({ length: ALTERNATIONS }, (_, i) => row(`run ${i + 1} jobs/s`, nth(i), 1)),
      row('**mean jobs/s**', jobsPerS, 1),
      row('CPU ms per job: Node (bench process)', (b, k) => avg(b, k, (r) => r.cpu.node), 2),
      row('CPU ms per job: Postgres', (b, k) => avg(b, k, (r) => r.cpu.postgres), 2),
      row('CPU ms per job: Redis', (b, k) => avg(b, k, (r) => r.cpu.redis), 2),
    ],
    notes,
  );
}

async function latency(url: string, sql: postgres.Sql, measuredJobsPerS: number) {
  const rate = measuredJobsPerS / 2;
  const total = Math.min(EVENTS, Math.max(200, Math.round(rate * 10)));
  await seed(sql, total, 60);
  const run = await openRunQueues('redis', url, sql);
  const link = run.queues.link();
  const queue = new run.queues.Queue(COMPACTION_QUEUE, link.options);
  const services = openServices(run.config(), silentLogger, {
    summarizers: { primary: createExtractiveSummarizer() },
  });
  const w = startWorker(services, { concurrency: CONCURRENCY });
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const eventId = randomUUID();
    await queue.add(
      RUN_COMPLETED,
      {
        tenantId: TENANT,
        sessionId: `s${i + 1}`,
        eventId,
        strategy: { type: 'slidingWindow', maxMessages: 10 },
      },
      { jobId: eventId, removeOnComplete: false },
    );
  }
  await drained(queue, total, started);
  await w.close();
  const jobs: Job[] = await queue.getJobs(['completed'], 0, total);
  const lat = jobs.map((j) => (j.finishedOn ?? 0) - j.timestamp).sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? 0;
  section(
    '3. Latency enqueue → applied at a steady 50% of the measured throughput (no LLM)',
    ['rate (events/s)', 'events', 'p50 ms', 'p95 ms', 'p99 ms'],
    [[fmt(rate), String(lat.length), String(q(0.5)), String(q(0.95)), String(q(0.99))]],
  );
  await queue.close();
  await link.close();
  await run.cleanup();
}

// 2 ----------------------------------------------------------------------------------------------

/** The fake Messages API in its own process: its URL and pid. */
interface FakeProcess {
  url: string;
  pid: number;
  kill(): void;
}

/** Starts test/bench/fake-server-process.ts answering after `delayMs`; resolves with its URL. */
async function fakeServerProcess(delayMs: number): Promise<FakeProcess> {
  const script = fileURLToPath(new URL('./fake-server-process.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--delay-ms', String(delayMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      const line = text.split('\n')[0];
      if (text.includes('\n') && line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`fake server process exited with ${code}`)));
  });
  return { url, pid: child.pid ?? 0, kill: () => child.kill('SIGKILL') };
}

/**
 * Jobs per concurrency level in part 2, in waves of `concurrency`: with ten, ramp-up and the last
 * wave's tail are a small part of the whole run, and the steady state (every slot busy) lasts about
 * eight seconds at each level.
 */
const LLM_WAVES = 10;

/** What one run of part 2 measured, at one concurrency, of compactor or of the LLM floor. */
interface LlmRun {
  jobs: number;
  jobsPerS: number;
  steady: number;
  busy: number;
  cpuPerJob: number;
  postgresPerJob: number;
  /** redis-server's CPU over the run, ms per job. */
  redisPerJob: number;
  fakePerJob: number;
  rssBefore: number;
  rssPeak: number;
  /** Mean ms per job and per pipeline stage (compactor only). */
  stages: string;
  poolSize: number;
  /** This process's event-loop delay over the run, ms beyond the timer's resolution: median, p99. */
  loopDelayMs: { p50: number; p99: number };
  /** This process's socket writes per job to Postgres, Redis and the fake Messages API. */
  writesPerJob: { postgres: number; redis: number; llm: number };
}

/** The resolution of part 2's event-loop delay histogram, ms. */
const LOOP_DELAY_RESOLUTION_MS = 5;

async function llmScaling(url: string, sql: postgres.Sql, llm: FakeProcess) {
  const rows: string[][] = [];
  const pools: string[] = [];
  const stageNotes: string[] = [];
  const costNotes: string[] = [];
  const at128 = new Map<QueueBackendKind, { compactor: number; floor: number }>();
  for (const c of LEVELS) {
    // The level the target reads alternates floor and compactor runs; the others run each once.
    const pairs = c === 128 ? ALTERNATIONS : 1;
    const steadyOf = new Map<QueueBackendKind, number>();
    for (const backend of BACKENDS) {
      const runs = { floor: [] as LlmRun[], compactor: [] as LlmRun[] };
      for (let i = 0; i < pairs; i++) {
        for (const kind of SIDES) runs[kind].push(await llmRun(kind, backend, c, url, sql, llm));
      }
      const row = llmRow(backend, c, runs, steadyOf);
      if (c === 128) at128.set(backend, row.at);
      pools.push(`${runs.compactor[0]?.poolSize} at ${c}`);
      stageNotes.push(`at ${c} on ${backend}: ${runs.compactor.map((r) => r.stages).join('; ')}`);
      costNotes.push(`at ${c} on ${backend}: ${costsOf(runs)}`);
      rows.push(row.cells);
    }
  }
  llmSection(rows, pools, stageNotes, costNotes, at128);
}

/** A URL's port as a number, `fallback` when it names none. */
function portOf(url: string, fallback: number): number {
  const { port } = new URL(url);
  return port === '' ? fallback : Number(port);
}

/** Part 2's socket writes per job and event-loop delay of one level and backend, compactor / floor. */
function costsOf(runs: { floor: LlmRun[]; compactor: LlmRun[] }): string {
  const mean = (kind: 'floor' | 'compactor', pick: (r: LlmRun) => number) =>
    runs[kind].reduce((sum, r) => sum + pick(r), 0) / Math.max(1, runs[kind].length);
  const pair = (pick: (r: LlmRun) => number, digits: number) =>
    `${fmt(mean('compactor', pick), digits)} / ${fmt(mean('floor', pick), digits)}`;
  return [
    `writes per job to Postgres ${pair((r) => r.writesPerJob.postgres, 2)}`,
    `to Redis ${pair((r) => r.writesPerJob.redis, 2)}`,
    `to the Messages API ${pair((r) => r.writesPerJob.llm, 2)}`,
    `event-loop delay ms median ${pair((r) => r.loopDelayMs.p50, 1)}, p99 ${pair((r) => r.loopDelayMs.p99, 1)}`,
  ].join(', ');
}

/**
 * One row of part 2's table: `backend`'s runs at concurrency `c`. `steadyOf` collects each
 * backend's steady compactor jobs/s at this level, for the Postgres / Redis column.
 */
function llmRow(
  backend: QueueBackendKind,
  c: number,
  runs: { floor: LlmRun[]; compactor: LlmRun[] },
  steadyOf: Map<QueueBackendKind, number>,
): { cells: string[]; at: { compactor: number; floor: number } } {
  const mean = (kind: 'floor' | 'compactor', pick: (r: LlmRun) => number) =>
    runs[kind].reduce((sum, r) => sum + pick(r), 0) / runs[kind].length;
  const ideal = c / 1;
  const steady = mean('compactor', (r) => r.steady);
  const floorSteady = mean('floor', (r) => r.steady);
  steadyOf.set(backend, steady);
  const redisSteady = steadyOf.get('redis');
  const vsRedis = backend === 'postgres' && redisSteady ? fmt(steady / redisSteady, 2) : '';
  return {
    at: { compactor: steady / ideal, floor: floorSteady / ideal },
    cells: [
      String(c),
      backend,
      String(runs.compactor.length),
      String(runs.compactor[0]?.jobs),
      fmt(
        mean('compactor', (r) => r.jobsPerS),
        2,
      ),
      `${fmt((100 * mean('compactor', (r) => r.jobsPerS)) / ideal, 0)}%`,
      fmt(steady, 2),
      `${fmt((100 * steady) / ideal, 0)}%`,
      `${fmt((100 * floorSteady) / ideal, 0)}%`,
      fmt(steady / floorSteady, 2),
      vsRedis,
      fmt(ideal, 0),
      `${fmt(100 * mean('compactor', (r) => r.busy), 0)}%`,
      `${fmt(
        mean('compactor', (r) => r.cpuPerJob),
        2,
      )} / ${fmt(
        mean('floor', (r) => r.cpuPerJob),
        2,
      )}`,
      `${fmt(
        mean('compactor', (r) => r.postgresPerJob),
        2,
      )} / ${fmt(
        mean('floor', (r) => r.postgresPerJob),
        2,
      )}`,
      `${fmt(
        mean('compactor', (r) => r.redisPerJob),
        2,
      )} / ${fmt(
        mean('floor', (r) => r.redisPerJob),
        2,
      )}`,
      `${fmt(
        mean('compactor', (r) => r.fakePerJob),
        2,
      )} / ${fmt(
        mean('floor', (r) => r.fakePerJob),
        2,
      )}`,
      mb(mean('compactor', (r) => r.rssBefore)),
      mb(Math.max(...runs.compactor.map((r) => r.rssPeak))),
    ],
  };
}

/** Prints part 2's table and notes. */
function llmSection(
  rows: string[][],
  pools: string[],
  stageNotes: string[],
  costNotes: string[],
  at128: Map<QueueBackendKind, { compactor: number; floor: number }>,
) {
  const target =
    at128.size > 0
      ? [...at128]
          .map(
            ([b, at]) =>
              `${b} ${at.compactor >= 0.9 ? 'met' : 'missed'} (compactor ${fmt(100 * at.compactor, 0)}%, the floor ${fmt(100 * at.floor, 0)}%)`,
          )
          .join('; ')
          .concat(`, over ${ALTERNATIONS} alternations`)
      : 'not run';
  section(
    '2. LLM-bound scaling (fake Messages API in its own process answering after 1 s, one worker process)',
    [
      'concurrency',
      'backend',
      'runs',
      'jobs',
      'jobs/s (whole run)',
      'of ideal (whole run)',
      'jobs/s (steady)',
      'of ideal (steady)',
      'floor of ideal (steady)',
      'compactor / floor (steady)',
      'Postgres / Redis (compactor, steady)',
      'ideal jobs/s',
      'worker event loop busy',
      'worker CPU ms per job (compactor / floor)',
      'Postgres CPU ms per job (compactor / floor)',
      'Redis CPU ms per job (compactor / floor)',
      'fake API CPU ms per job (compactor / floor)',
      'RSS before MB',
      'peak RSS MB',
    ],
    rows,
    [
      `Target ≥ 90% of ideal at 128, steady state: ${target}.`,
      `Each level runs on each backend in turn (${BACKENDS.join(', then ')}), every run on a queue of its own (a key prefix on Redis, a schema migrated for it on Postgres, dropped after); the floor runs on the same backend as the compactor runs beside it. On Postgres the Postgres CPU column includes BullMQ's own connections (they are backends of the bench database).`,
      `${LLM_WAVES} waves of jobs per level (16 at concurrency 1). At 128, ${ALTERNATIONS} runs of each side alternate (the floor first), and the columns are their means; the other levels run each side once. "Whole run" is every job over the time from the worker's start to the last completion, ramp-up and the last wave's tail included. "Steady" counts the completions after the first wave's (the concurrency-th completion) up to the start of the last job, while every slot is busy; it is what a worker fed continuously sustains. Ideal is concurrency / 1 s and ignores the database work each job does besides its LLM call.`,
      "The floor (test/bench/floor.ts, `startLlmFloorWorker`) is a bare BullMQ worker at the same concurrency doing the least a summary can: one read of the session's messages, one call through the Anthropic SDK (its default fetch) to the same fake with compactor's own summary prompt of the leaving messages and a forced tool, and one transaction that archives the leaving rows and writes the summary, the ledger row and the counters. What it reaches of ideal is what this machine and stack allow; compactor / floor is what compactor's own work (prompt, validation, lease, fidelity check, events) costs.",
      `Mean ms per job, from BullMQ's start of the job to its end, and in each pipeline stage (compactor, per run): ${stageNotes.join('; ')}. What a job spends beyond the 1 s answer is what keeps a level under its ideal.`,
      `Compactor / floor, means of the runs: ${costNotes.join('; ')}. A write is one \`Socket.write\` of this process (test/bench/socket-writes.ts; postgres.js sends a connection's statements of one event-loop turn in one): on a virtual machine each wakes the server's process in the writer's CPU time, so round trips cost the worker CPU, not only latency. The event-loop delay is how late a timer due now runs (node:perf_hooks monitorEventLoopDelay, its ${LOOP_DELAY_RESOLUTION_MS} ms resolution subtracted).`,
      `Postgres pool: ${pools.join(', ')} (per level and backend; the worker's default, worker/runtime/services.ts poolSizeFor; the floor uses the bench's pool of 10, and on Postgres a queue pool of concurrency + 1, at most 10, as the compactor worker's). "Worker event loop busy" is the event-loop utilization of this process (worker and bench) during the run: near 100%, the worker is CPU-bound and jobs wait for it between their I/O steps. "Worker CPU ms per job" is this process's CPU time (user + system) over the run divided by the jobs: it moves far less than jobs/s when other processes share the cores (up to 40% more under a load average of 10, where jobs/s halved), and at concurrency c the target needs it under about 0.9 × 1000 / c ms (7 ms at 128). The Postgres, Redis and fake API columns are the CPU of those processes over the run (the backends of the bench database, redis-server and the fake's process, read from /proc in 10 ms ticks as in part 1), per job: with the worker's, what the run asks of the machine's two cores. (redis-server is shared with whatever else runs on the machine, and on the PostgreSQL queue compactor sends it nothing.)`,
    ],
  );
}

/** One run of part 2: `kind`'s worker at concurrency `c` over fresh sessions, measured. */
async function llmRun(
  kind: 'floor' | 'compactor',
  backend: QueueBackendKind,
  c: number,
  url: string,
  sql: postgres.Sql,
  llm: FakeProcess,
): Promise<LlmRun> {
  const jobs = Math.max(16, c * LLM_WAVES);
  await seed(sql, jobs, 60);
  const run = await openRunQueues(backend, url, sql);
  const link = run.queues.link({ poolSize: 2 });
  const queue = new run.queues.Queue(COMPACTION_QUEUE, link.options);
  queue.on('error', () => {});
  const extra: RunCompletedExtra =
    kind === 'compactor' ? { strategy: { type: 'summarize', keepRecent: 10 } } : { keep: 10 };
  await queue.addBulk(runCompletedJobs(TENANT, jobs, extra, false));
  const config = run.config({ anthropicApiKey: 'bench', anthropicBaseUrl: llm.url });
  // The pool `compactor worker --concurrency c` opens.
  const poolSize = poolSizeFor(config);
  const services = kind === 'compactor' ? openServices(config, silentLogger) : null;
  let peak = process.memoryUsage.rss();
  const before = peak;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 50);
  const elu = performance.eventLoopUtilization();
  // Its resolution is subtracted from the percentiles: what a timer due now waits beyond it.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loopDelay.enable();
  const writes = countSocketWrites();
  const postgresCpu = await databaseCpuMs(benchDb.admin, benchDb.name);
  const fakeCpu = await processCpuMs(llm.pid);
  const redisCpu = await redisServerCpuMs();
  const profile: RunProfile | null = values.profile
    ? await startRunProfile(values.profile, `part2-${kind}-${backend}-c${c}-${Date.now()}-${jobs}jobs`)
    : null;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const stages = new Map<string, number[]>();
  let worker: Worker;
  let close: () => Promise<void>;
  if (services) {
    const w = startWorker(services, {
      concurrency: c,
      onStage: recordInto(stages),
    });
    worker = w.worker;
    close = () => w.close();
  } else {
    const floor = startLlmFloorWorker({
      sql,
      queues: run.queues,
      queueName: COMPACTION_QUEUE,
      concurrency: c,
      llmUrl: llm.url,
    });
    worker = floor.worker;
    close = floor.close;
  }
  const ms = await settled(worker, jobs, started);
  const busy = performance.eventLoopUtilization(elu).utilization;
  loopDelay.disable();
  const writesByPort = writes.stop();
  const used = process.cpuUsage(cpu);
  await profile?.stop();
  const postgresCpuAfter = await databaseCpuMs(benchDb.admin, benchDb.name);
  const fakePerJob = ((await processCpuMs(llm.pid)) - fakeCpu) / jobs;
  const redisPerJob = ((await redisServerCpuMs()) - redisCpu) / jobs;
  clearInterval(sampler);
  await close();
  const done = await queue.getJobs(['completed', 'failed'], 0, jobs);
  const failed = done.filter((j) => j.finishedOn && j.failedReason).length;
  if (failed > 0)
    throw new Error(
      `part 2: ${failed} ${kind} job(s) failed, first: ${done.find((j) => j.failedReason)?.failedReason}`,
    );
  const meanOf = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const duration = meanOf(done.map((j) => (j.finishedOn ?? 0) - (j.processedOn ?? 0)));
  const byStage = [...stages].map(([stage, list]) => `${stage} ${fmt(meanOf(list), 1)}`).join(', ');
  await queue.close();
  await link.close();
  await run.cleanup();
  return {
    jobs,
    jobsPerS: jobs / (ms / 1000),
    steady: steadyJobsPerS(done, c),
    busy,
    cpuPerJob: (used.user + used.system) / 1000 / jobs,
    postgresPerJob: (postgresCpuAfter - postgresCpu) / jobs,
    redisPerJob,
    fakePerJob,
    rssBefore: before,
    rssPeak: peak,
    loopDelayMs: {
      p50: Math.max(0, loopDelay.percentile(50) / 1e6 - LOOP_DELAY_RESOLUTION_MS),
      p99: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_DELAY_RESOLUTION_MS),
    },
    writesPerJob: {
      postgres: (writesByPort.get(portOf(url, 5432))?.writes ?? 0) / jobs,
      redis: (writesByPort.get(portOf(REDIS_URL, 6379))?.writes ?? 0) / jobs,
      llm: (writesByPort.get(portOf(llm.url, 80))?.writes ?? 0) / jobs,
    },
    stages: `job ${fmt(duration, 0)} (${byStage})`,
    poolSize,
  };
}

/**
 * Resolves with the ms from `started` to the `n`-th job `worker` settled (completed, or failed for
 * good), counted from the worker's own events: polling the queue's counts every 20 ms, as `drained`
 * does, costs this process's event loop about 3.5%, which a CPU-bound worker would lose.
 */
function settled(worker: Worker, n: number, started: number): Promise<number> {
  return new Promise((resolve) => {
    let count = 0;
    const one = () => {
      count += 1;
      if (count === n) resolve(performance.now() - started);
    };
    worker.on('completed', one);
    worker.on('failed', (job, error) => {
      if (!job || error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)) one();
    });
  });
}

// 4 ----------------------------------------------------------------------------------------------

async function bigSessions(url: string, sql: postgres.Sql, prefix: () => string, llmUrl: string) {
  await seed(sql, 2, 100_000, 'big');
  const p = prefix();
  const connection = redis();
  const database = openDatabase(url, { max: 4 });
  const reads = new PostgresReads(database.db);
  const writes = new PostgresWrites(database.db, reads);
  const rows: string[][] = [];
  for (const [sessionId, strategy] of [
    ['big1', { type: 'slidingWindow', maxMessages: 100 }],
    ['big2', { type: 'summarize', keepRecent: 100, maxSummaryTokens: 2_000 }],
  ] as const) {
    const summarizer = createAnthropicSummarizer({
      apiKey: 'bench',
      baseURL: llmUrl,
      model: 'claude-haiku-4-5',
    });
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const started = performance.now();
    const outcome = await runCompaction(
      {
        reads,
        writes,
        leases: new LeaseManager(connection, { prefix: p }),
        summarizers: { primary: summarizer },
        clock: systemClock,
        logger: silentLogger,
      },
      {
        tenantId: TENANT,
        sessionId,
        strategy,
        trigger: 'manual',
        idempotencyKey: `bench:${randomUUID()}`,
        eventId: null,
      },
    );
    const ms = performance.now() - started;
    clearInterval(sampler);
    rows.push([
      strategy.type,
      outcome.row?.status ?? outcome.status,
      String(outcome.row?.messagesArchived ?? 0),
      fmt(ms / 1000, 2),
      String(
        outcome.row?.inputTokens
          ? Math.ceil((outcome.row.inputTokens + (outcome.row.cacheReadTokens ?? 0)) / 100_000)
          : 0,
      ),
      mb(peak - before),
    ]);
  }
  await connection.quit();
  await database.close();
  section(
    '4. Big sessions: 100,000 messages in one session (in-process pipeline)',
    ['strategy', 'status', 'archived', 'wall s', 'LLM calls ≈', 'RSS growth MB'],
    rows,
    ['Targets: slidingWindow under 5 s; RSS growth under 100 MB.'],
  );
}

// 5 ----------------------------------------------------------------------------------------------

async function coalescing(
  url: string,
  sql: postgres.Sql,
  prefix: () => string,
  fake: FakeAnthropicServer,
  llmUrl: string,
) {
  await seed(sql, 1, 200, 'burst');
  const p = prefix();
  const config = testConfig(url, p, { anthropicApiKey: 'bench', anthropicBaseUrl: llmUrl });
  const services = openServices(config, silentLogger);
  const w = startWorker(services, { concurrency: 8 });
  const producer = createProducer({ redisUrl: REDIS_URL, prefix: p });
  const requestsBefore = fake.requests.length;
  fake.enqueue(...Array.from({ length: 10 }, () => ({ delayMs: 300 })));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 1_000 }, () =>
      producer.runCompleted({
        eventId: randomUUID(),
        tenantId: TENANT,
        sessionId: 'burst1',
        strategy: { type: 'summarize', keepRecent: 10 },
      }),
    ),
  );
  for (;;) {
    const c = await producer.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(c).every((n) => n === 0)) break;
    await sleep(50);
  }
  const ms = performance.now() - started;
  await w.close();
  await producer.close();
  const [ledger] = await sql<{ applied: number; rows: number }[]>`
    select count(*) filter (where status = 'applied')::int as applied, count(*)::int as rows
    from compactions where session_id = 'burst1'`;
  const calls = fake.requests.length - requestsBefore;
  section(
    '5. Coalescing: 1,000 events for one session in a burst',
    ['events', 'jobs run (ledger rows)', 'compactions applied', 'LLM calls', 'wall s'],
    [['1000', String(ledger?.rows ?? 0), String(ledger?.applied ?? 0), String(calls), fmt(ms / 1000, 2)]],
    [
      `Target ≤ 2 compactions and ≤ 2 LLM calls: ${(ledger?.applied ?? 99) <= 2 && calls <= 2 ? 'met' : 'missed'}.`,
    ],
  );
}

// 7 ----------------------------------------------------------------------------------------------

async function importSample(url: string) {
  const dir = fileURLToPath(new URL('../../corpus/claude-code/', import.meta.url));
  const sizes = await Promise.all(
    (await readdir(dir)).map(async (name) => ({
      file: path.join(dir, name),
      bytes: (await stat(path.join(dir, name))).size,
    })),
  );
  const { file, bytes } = sizes.sort((a, b) => b.bytes - a.bytes)[0] as (typeof sizes)[number];
  const database = openDatabase(url, { max: 2 });
  const parse: number[] = [];
  const total: number[] = [];
  let imported: ImportedSession | undefined;
  for (let run = 0; run < IMPORT_RUNS; run++) {
    let started = performance.now();
    await readTranscript(file);
    parse.push(performance.now() - started);
    started = performance.now();
    imported = await importTranscript(database.db, file, { tenantId: TENANT, sessionId: `import${run}` });
    total.push(performance.now() - started);
  }
  await database.close();
  const megabytes = (bytes / 1e6).toFixed(2);
  section(
    `7. Import of the ${megabytes} MB Claude Code sample (${path.basename(file)}, in-process)`,
    ['format', 'messages', 'tokens', 'parse ms', 'parse + insert ms'],
    [
      [
        `${imported?.format}${imported?.detected ? ' (detected)' : ''}`,
        String(imported?.messageCount),
        String(imported?.tokenCount),
        fmt(median(parse)),
        fmt(median(total)),
      ],
    ],
    [
      `Median of ${IMPORT_RUNS} runs, each a new session; parse + insert is importTranscript (read, detect, parse, one transaction).`,
    ],
  );
}

// 8 ----------------------------------------------------------------------------------------------

/** loadContext calls per session whose latencies part 8 reports. */
const READS = 200;

/**
 * The read path: `loadContext` of a 500-message native session (text, thinking, tool calls and
 * results) and of a 100,000-message session after a slidingWindow compaction kept its newest 100.
 */
async function readPath(url: string, sql: postgres.Sql, prefix: () => string) {
  await seed(sql, 1, 100_000, 'read');
  const database = openDatabase(url, { max: 2 });
  const reads = new PostgresReads(database.db);
  const writes = new PostgresWrites(database.db, reads);
  const connection = redis();
  await runCompaction(
    {
      reads,
      writes,
      leases: new LeaseManager(connection, { prefix: prefix() }),
      summarizers: { primary: createExtractiveSummarizer() },
      clock: systemClock,
      logger: silentLogger,
    },
    {
      tenantId: TENANT,
      sessionId: 'read1',
      strategy: { type: 'summarize', keepRecent: 100, maxSummaryTokens: 2_000 },
      trigger: 'manual',
      idempotencyKey: `bench:${randomUUID()}`,
      eventId: null,
    },
  );
  await createSession(database.db, {
    tenantId: TENANT,
    sessionId: 'native500',
    messages: nativeSession(500),
  });
  const rows: string[][] = [];
  for (const [label, sessionId] of [
    ['500 native messages, never compacted', 'native500'],
    ['100,000 messages, compacted to 100 + summary', 'read1'],
  ] as const) {
    const ms: number[] = [];
    let loaded: LoadedContext | undefined;
    for (let i = 0; i < READS + 10; i++) {
      const started = performance.now();
      loaded = await loadContext(database.db, { tenantId: TENANT, sessionId });
      if (i >= 10) ms.push(performance.now() - started);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
    rows.push([
      label,
      String(loaded?.messages.length),
      String(loaded?.tokens),
      fmt(at(0.5), 2),
      fmt(at(0.99), 2),
    ]);
  }
  await recallLatency(database, 'read1');
  await connection.quit();
  await database.close();
  section(
    '8. Read path: loadContext (in-process, one connection)',
    ['session', 'messages sent', 'tokens', 'p50 ms', 'p99 ms'],
    rows,
    [`${READS} calls each after 10 warm-up calls; one statement per call (lineage, checkpoint, rows).`],
  );
}

/** Calls of each recall operation part 8 times. */
const RECALLS = 100;

/**
 * Recall on the archive of the 100,000-message session part 8 compacted (99,900 archived
 * messages): a search for a word only one message holds, a search for words every message holds
 * (the whole archive matches and is ranked), and a read of 20 seqs.
 */
async function recallLatency(database: ReturnType<typeof openDatabase>, sessionId: string) {
  // As autovacuum would soon after the compaction: before the archive's new rows are analyzed the
  // planner takes the session's index and filters its 99,900 rows (a rare word: 75 ms, not 11).
  await database.sql`analyze archived_messages`;
  const seqAt = (i: number) => 1 + ((i * 7919) % 99_000);
  const operations: Array<[string, (i: number) => Promise<number>]> = [
    [
      'search: a rare word (one message holds it)',
      async (i) =>
        (
          await searchRecall(database.db, {
            tenantId: TENANT,
            sessionId,
            query: `message ${seqAt(i)} of session`,
          })
        ).hits.length,
    ],
    [
      'search: common words (every archived message holds them)',
      async () =>
        (await searchRecall(database.db, { tenantId: TENANT, sessionId, query: 'lorem ipsum' })).hits.length,
    ],
    [
      'read: 20 seqs',
      async (i) =>
        (
          await readRecall(database.db, {
            tenantId: TENANT,
            sessionId,
            fromSeq: seqAt(i),
            toSeq: seqAt(i) + 19,
          })
        ).messages.length,
    ],
  ];
  const rows: string[][] = [];
  for (const [label, run] of operations) {
    const ms: number[] = [];
    let found = 0;
    for (let i = 0; i < RECALLS + 5; i++) {
      const started = performance.now();
      found = await run(i);
      if (i >= 5) ms.push(performance.now() - started);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0;
    rows.push([label, String(found), fmt(at(0.5), 2), fmt(at(0.99), 2)]);
  }
  section(
    '11. Recall: search and read on the archive of the 100,000-message session (in-process)',
    ['operation', 'results', 'p50 ms', 'p99 ms'],
    rows,
    [`${RECALLS} calls each after 5 warm-up calls; searches return at most 10 hits, best first.`],
  );
}

/** A native session of `n` messages: runs of user text, assistant thinking + a call, its result. */
function nativeSession(n: number) {
  return Array.from({ length: n }, (_, seq) => {
    const phase = seq % 3;
    const id = `toolu_${Math.floor(seq / 3)}`;
    const content =
      phase === 0
        ? `Step ${seq}: look at the parser and tell me what breaks on empty input.`
        : phase === 1
          ? [
              { type: 'thinking', thinking: `I should read file ${seq}.`, signature: `sig${seq}` },
              { type: 'tool_use', id, name: 'read_file', input: { path: `src/file${seq}.ts` } },
            ]
          : [{ type: 'tool_result', tool_use_id: id, content: 'export const x = 1;\n'.repeat(20) }];
    const role = phase === 1 ? 'assistant' : 'user';
    return { seq, message: { role, content } as MessageParam };
  });
}

// 9 ----------------------------------------------------------------------------------------------

/** Concurrent callers of part 9. */
const API_CONCURRENCY = 32;
/** Requests per row of part 9 (after {@link API_WARMUP} warm-up requests). */
const API_REQUESTS = 4_000;
const API_WARMUP = 300;
/** Sessions part 9 appends to, round robin (an agent appends to its own session). */
const API_SESSIONS = 256;

/**
 * Runs `op(0..n-1)` from {@link API_CONCURRENCY} callers at once.
 * @returns requests per second and the p50 and p99 latency, ms.
 */
async function closedLoop(n: number, op: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: API_CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        await op(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perS: n / seconds, p50: at(0.5), p99: at(0.99) };
}

/**
 * The HTTP API's cost over the producer it calls: appends (a user message and the assistant's
 * reply, each request its own Idempotency-Key) and enqueues of `session.run.completed`, over HTTP
 * and in-process, at concurrency 32, one after the other in this run.
 */
async function httpApi(url: string, sql: postgres.Sql, prefix: () => string) {
  await seed(sql, API_SESSIONS, 10, 'api');
  const database = openDatabase(url, { max: 10 });
  const producer = createProducer({ redisUrl: REDIS_URL, prefix: prefix() });
  const token = `bench-${randomUUID()}`;
  const limiterRedis = new Redis(REDIS_URL);
  // The rate counted in Redis as `compactor api` counts it, but set far above what this part sends.
  const limits = new TenantLimits({
    policies: new PolicyCache(database.db),
    defaults: { ...DEFAULT_LIMITS, requestsPerSecond: 1_000_000 },
    redis: limiterRedis,
    prefix: prefix(),
  });
  const app = createApiApp(
    { db: database.db, producer, limits },
    {
      credentials: {
        adminToken: undefined,
        adminUser: undefined,
        adminPassword: undefined,
        tenantTokens: [{ tenantId: TENANT, token }],
      },
    },
  );
  const server = await listen(app, 0, '127.0.0.1');
  const turn = (i: number) => [
    {
      role: 'user' as const,
      content: `Request ${i}: look at the parser and tell me what breaks on empty input.`,
    },
    {
      role: 'assistant' as const,
      content: [{ type: 'text' as const, text: `Reply ${i}: the tokenizer drops the last line.` }],
    },
  ];
  const session = (i: number) => `api${(i % API_SESSIONS) + 1}`;
  const post = async (
    path: string,
    body: unknown,
    expected: number,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${path}: ${response.status} ${text}`);
  };
  const event = (i: number, run: string) => ({
    eventId: `${run}-${i}`,
    tenantId: TENANT,
    sessionId: session(i),
  });
  const ops: Array<[string, (i: number) => Promise<void>]> = [
    [
      'append, in-process appendMessages',
      async (i) => {
        await appendMessages(database.db, TENANT, session(i), turn(i));
      },
    ],
    [
      'append, in-process with an idempotency key',
      async (i) => {
        await appendMessages(database.db, TENANT, session(i), turn(i), {
          idempotency: { key: randomUUID(), requestHash: String(i) },
        });
      },
    ],
    [
      'append, HTTP POST /v1/sessions/{id}/messages + Idempotency-Key',
      (i) =>
        post(`/v1/sessions/${session(i)}/messages`, { messages: turn(i) }, 200, {
          'Idempotency-Key': randomUUID(),
        }),
    ],
    [
      'enqueue, in-process producer.runCompleted',
      async (i) => {
        await producer.runCompleted(event(i, 'in'));
      },
    ],
    [
      'enqueue, HTTP POST /v1/events/run-completed',
      (i) => post('/v1/events/run-completed', event(i, 'http'), 202),
    ],
  ];
  const rows: string[][] = [];
  try {
    for (const [label, op] of ops) {
      await closedLoop(API_WARMUP, (i) => op(API_REQUESTS + i));
      const { perS, p50, p99 } = await closedLoop(API_REQUESTS, op);
      rows.push([label, fmt(perS, 0), fmt(p50, 2), fmt(p99, 2)]);
    }
  } finally {
    await server.close();
    await producer.close();
    await limiterRedis.quit();
    await database.close();
  }
  section(
    `9. HTTP API against the in-process producer (concurrency ${API_CONCURRENCY})`,
    ['operation', 'requests/s', 'p50 ms', 'p99 ms'],
    rows,
    [
      `${API_REQUESTS} requests per row after ${API_WARMUP} warm-up ones; appends of 2 messages round robin over ${API_SESSIONS} sessions; enqueues of distinct sessions, no worker running.`,
      'The server and its fetch callers share this process (and the 2 cores with Postgres and Redis), so the HTTP rows pay for both sides.',
      "Each HTTP request is counted against its tenant's rate in Redis (rate-limiter-flexible), with the rate set far above what is sent, so nothing is refused.",
    ],
  );
}

main().catch((error) => {
  console.error('bench failed:', error);
  process.exit(1);
});
