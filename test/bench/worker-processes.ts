/**
 * Part 16 of `npm run bench`: `compactor worker --processes N` at N = 1, 2 and 4, as users run it
 * (the CLI built, as the package's bin, in a process tree of its own), on the LLM-bound workload of
 * part 2: the fake Messages API in its own process answering after 1 s, 128 jobs in flight in all
 * (`--concurrency 128/N` in each process), on each queue backend. Each run starts the worker on an
 * empty queue of its own, waits until the primary's /readyz says every process is ready, then
 * enqueues {@link WAVES} × 128 summaries of fresh 60-message sessions and waits for them all.
 * Reported: jobs/s (first job started → last finished, and steady: while all 128 slots were busy,
 * as part 2), % of the ideal 128 jobs/s, the CPU ms per job of the whole process tree (primary and
 * workers, from /proc, from ready to the last job), and the peak of its summed RSS. Prints numbers;
 * asserts nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import type { Job } from 'bullmq';
import type postgres from 'postgres';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import type { QueueBackendKind } from '../../shared/protocol/queue-backend.ts';
import { REDIS_URL } from '../support/env.ts';
import { freePort } from '../support/ports.ts';
import { openRunQueues } from './backends.ts';
import { buildCli } from './noisy-neighbor.ts';
import { processTree } from './proc.ts';
import { fmt, runCompletedJobs, seedSessions, steadyJobsPerS } from './report.ts';

/** Jobs in flight in all, over every process. */
const IN_FLIGHT = 128;
/** Jobs per run: this many waves of {@link IN_FLIGHT}. */
const WAVES = 10;
/** The process counts measured. */
const PROCESS_COUNTS = [1, 2, 4];
const TENANT = 'bench';
/** What the fake Messages API waits before it answers, ms. */
const LLM_DELAY_MS = 1_000;

/** A section writer, as `Report.section`. */
type Section = (title: string, header: string[], rows: string[][], notes?: string[]) => void;

/** What one run measured. */
interface ProcessesRun {
  processes: number;
  backend: QueueBackendKind;
  jobsPerS: number;
  steady: number;
  cpuPerJob: number;
  peakRssKb: number;
  load: [number, number];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs part 16 on each of `backends` against the migrated bench database at `url` (`sql`: a pool on
 * it), with the fake Messages API at `llmUrl` (answering after 1 s).
 */
export async function workerProcesses(
  url: string,
  sql: postgres.Sql,
  llmUrl: string,
  backends: readonly QueueBackendKind[],
  section: Section,
): Promise<void> {
  const cli = await buildCli();
  const runs: ProcessesRun[] = [];
  const began = new Date();
  for (const backend of backends)
    for (const processes of PROCESS_COUNTS) {
      const run = await processesRun(cli, url, sql, llmUrl, backend, processes);
      console.log(
        `part 16: ${backend}, ${processes} process(es): ${fmt(run.jobsPerS, 1)} jobs/s, steady ${fmt(run.steady, 1)}, ${fmt(run.cpuPerJob, 2)} CPU ms/job, peak RSS ${fmt(run.peakRssKb / 1024, 0)} MB, load ${run.load.map((l) => fmt(l, 1)).join(' → ')}`,
      );
      runs.push(run);
    }
  section(
    `16. \`compactor worker --processes N\` at ${IN_FLIGHT} jobs in flight in all (fake Messages API answering after 1 s), ${began.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    [
      'backend',
      'processes',
      'concurrency each',
      'jobs/s (first start → last finish)',
      'of ideal',
      'jobs/s (steady)',
      'of ideal (steady)',
      'CPU ms per job (all processes)',
      'peak RSS MB (summed)',
      'load average (start → end)',
    ],
    runs.map((r) => [
      r.backend,
      String(r.processes),
      String(IN_FLIGHT / r.processes),
      fmt(r.jobsPerS, 1),
      `${fmt((100 * r.jobsPerS) / IN_FLIGHT, 0)}%`,
      fmt(r.steady, 1),
      `${fmt((100 * r.steady) / IN_FLIGHT, 0)}%`,
      fmt(r.cpuPerJob, 2),
      fmt(r.peakRssKb / 1024, 0),
      r.load.map((l) => fmt(l, 1)).join(' → '),
    ]),
    [
      `${WAVES * IN_FLIGHT} summarize jobs per run on fresh sessions of 60 messages; ideal is ${IN_FLIGHT} jobs/s (${IN_FLIGHT} in flight / ${LLM_DELAY_MS / 1000} s). The built CLI (tsc, as the package's bin), \`compactor worker --processes N --concurrency ${IN_FLIGHT}/N\`, with COMPACTOR_METRICS_PORT set (the primary's /readyz says when every process is up; nothing scrapes /metrics during the run) and COMPACTOR_LOG_LEVEL=warn. With 1 process there is no primary: the command runs the worker itself.`,
      'CPU and RSS are read from /proc over the whole process tree (the primary and its worker processes): CPU from ready to the last job settled, in 10 ms ticks; RSS sampled every 200 ms. Machine: ' +
        `${os.availableParallelism()} cores, shared with other work; the load average (one minute) at the start and end of each run is in the last column.`,
    ],
  );
}

/** One run: the worker with `processes` processes on a fresh queue of `backend`. */
async function processesRun(
  cli: string,
  url: string,
  sql: postgres.Sql,
  llmUrl: string,
  backend: QueueBackendKind,
  processes: number,
): Promise<ProcessesRun> {
  const jobs = WAVES * IN_FLIGHT;
  await seedSessions(sql, TENANT, jobs, 60);
  const run = await openRunQueues(backend, url, sql);
  const config = run.config();
  const port = await freePort();
  const worker = startWorker(cli, processes, {
    DATABASE_URL: url,
    REDIS_URL,
    COMPACTOR_QUEUE_BACKEND: backend,
    COMPACTOR_QUEUE_PREFIX: config.queuePrefix,
    ...(config.queueSchema ? { COMPACTOR_QUEUE_SCHEMA: config.queueSchema } : {}),
    COMPACTOR_SWEEP_EVERY_MS: '0',
    COMPACTOR_METRICS_PORT: String(port),
    COMPACTOR_LOG_LEVEL: 'warn',
    ANTHROPIC_API_KEY: 'bench',
    ANTHROPIC_BASE_URL: llmUrl,
  });
  const link = run.queues.link({ poolSize: 2 });
  const queue = new run.queues.Queue(COMPACTION_QUEUE, link.options);
  queue.on('error', () => {});
  try {
    await untilReady(port, worker);
    const pid = worker.pid ?? 0;
    const loadBefore = os.loadavg()[0] ?? 0;
    const before = await processTree(pid);
    let peakRssKb = before.rssKb;
    const sampler = setInterval(() => {
      void processTree(pid).then((t) => {
        peakRssKb = Math.max(peakRssKb, t.rssKb);
      });
    }, 200);
    await queue.addBulk(
      runCompletedJobs(TENANT, jobs, { strategy: { type: 'summarize', keepRecent: 10 } }, false),
    );
    await drained(queue, jobs);
    const after = await processTree(pid);
    clearInterval(sampler);
    const done = (await queue.getJobs(['completed', 'failed'], 0, jobs)) as Job[];
    const failed = done.filter((j) => j.failedReason);
    if (failed.length > 0)
      throw new Error(`part 16: ${failed.length} job(s) failed, first: ${failed[0]?.failedReason}`);
    const first = Math.min(...done.map((j) => j.processedOn ?? Number.POSITIVE_INFINITY));
    const last = Math.max(...done.map((j) => j.finishedOn ?? 0));
    return {
      processes,
      backend,
      jobsPerS: (jobs * 1000) / (last - first),
      steady: steadyJobsPerS(done, IN_FLIGHT),
      cpuPerJob: (after.cpuMs - before.cpuMs) / jobs,
      peakRssKb: Math.max(peakRssKb, after.rssKb),
      load: [loadBefore, os.loadavg()[0] ?? 0],
    };
  } finally {
    await stop(worker);
    await queue.close();
    await link.close();
    await run.cleanup();
  }
}

/** Starts `node <cli> worker --processes N --concurrency 128/N` with `env` over this process's. */
function startWorker(cli: string, processes: number, env: Record<string, string>): ChildProcess {
  return spawn(
    process.execPath,
    [cli, 'worker', '--processes', String(processes), '--concurrency', String(IN_FLIGHT / processes)],
    {
      env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

/**
 * Waits until /readyz on `port` answers 200 (every process up and reaching its dependencies).
 * @throws {Error} when the worker exits first.
 */
async function untilReady(port: number, worker: ChildProcess): Promise<void> {
  for (;;) {
    if (worker.exitCode !== null)
      throw new Error(`part 16: the worker exited ${worker.exitCode} before ready`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return;
    await sleep(250);
  }
}

/** Waits until `queue` has `n` jobs completed or failed, polling every 250 ms. */
async function drained(queue: { getJobCounts(...s: string[]): Promise<Record<string, number>> }, n: number) {
  for (;;) {
    const { completed = 0, failed = 0 } = await queue.getJobCounts('completed', 'failed');
    if (completed + failed >= n) return;
    await sleep(250);
  }
}

/** SIGTERM, and SIGKILL after 30 s; resolves when the worker has exited. */
async function stop(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGTERM');
  const timer = setTimeout(() => worker.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
