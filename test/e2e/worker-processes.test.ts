/**
 * `compactor worker --processes 2` as a user runs it: a primary and two worker processes on real
 * Redis and Postgres, the real Anthropic SDK against the fake Messages API. Jobs are shared between
 * the processes, the primary's /metrics sums them, SIGTERM lets the active jobs finish, a worker
 * process that is killed is started again, and one that keeps dying stops them all.
 */

import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducer, type Producer } from '../../producer/index.ts';
import { runCli } from '../support/cli.ts';
import { REDIS_URL } from '../support/env.ts';
import { type FakeAnthropicHandle, FakeAnthropicServer } from '../support/fake-anthropic.ts';
import {
  CORPUS_DIR,
  cleanRedis,
  createTestDatabase,
  type TestDatabase,
  testPrefix,
  waitFor,
} from '../support/fixtures.ts';
import { type Child, killAllChildren, startCompactor } from '../support/processes.ts';

const SESSION_FILE = 'minisweagent__pvlib-1854.jsonl';
/** How long the fake Messages API takes to answer: long enough that both processes hold a job. */
const LLM_DELAY_MS = 1_000;

let tdb: TestDatabase;
let prefix: string;
let dir: string;
let fake: FakeAnthropicServer;
let fakeHandle: FakeAnthropicHandle;
let producer: Producer;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'info',
    COMPACTOR_SWEEP_EVERY_MS: '0',
    COMPACTOR_METRICS_PORT: '0',
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fakeHandle.url,
    ...extra,
  };
}

/** The child's JSON log lines so far. */
function logLines(child: Child): Array<Record<string, unknown>> {
  return child
    .output()
    .stderr.split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The log lines with `msg`, once there are at least `count`. */
function linesOnce(child: Child, msg: string, count = 1): Promise<Array<Record<string, unknown>>> {
  return waitFor(async () => {
    const found = logLines(child).filter((l) => l.msg === msg);
    if (found.length >= count) return found;
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${child.output().stderr}`);
    return undefined;
  }, 30_000);
}

/** Waits until the primary's /readyz says ready. */
function readyAt(url: string): Promise<boolean> {
  return waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 30_000);
}

/** The sum of a counter's samples in a Prometheus text exposition. */
function counterSum(metrics: string, name: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Imports `count` copies of the corpus session for `tenant` and enqueues one summary of each. */
async function enqueueSummaries(tenant: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const session = `s${i}`;
    const imported = await runCli(
      ['import', path.join(dir, SESSION_FILE), '--tenant', tenant, '--session', session],
      env(),
    );
    expect(imported.code, imported.stderr).toBe(0);
  }
  for (let i = 0; i < count; i++)
    await producer.runCompleted({
      eventId: randomUUID(),
      tenantId: tenant,
      sessionId: `s${i}`,
      strategy: { type: 'summarize', keepRecent: 12 },
    });
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = testPrefix();
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-procs-'));
  await copyFile(path.join(CORPUS_DIR, SESSION_FILE), path.join(dir, SESSION_FILE));
  fake = new FakeAnthropicServer();
  fake.defaultBehaviour = { delayMs: LLM_DELAY_MS };
  fakeHandle = await fake.start();
  producer = createProducer({ redisUrl: REDIS_URL, prefix });
});

afterAll(async () => {
  await killAllChildren();
  await producer?.close();
  await fakeHandle?.close();
  await cleanRedis(prefix);
  await tdb?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('compactor worker --processes 2', () => {
  it('shares the jobs, sums the metrics of both processes, and drains on SIGTERM', async () => {
    const worker = startCompactor(['worker', '--processes', '2', '--concurrency', '1'], env());
    const [listening] = await linesOnce(worker, 'metrics, /healthz and /readyz listening');
    const url = String(listening?.url);
    await readyAt(url);

    await enqueueSummaries('procs', 4);
    const settled = await linesOnce(worker, 'event settled', 4);
    // Each process runs one job at a time and each job waits a second on the LLM: both took jobs.
    expect(new Set(settled.map((l) => l.pid)).size).toBe(2);
    expect(new Set(settled.map((l) => l.process))).toEqual(new Set([1, 2]));
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(counterSum(metrics, 'compactor_jobs_total')).toBe(4);
    expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({
      ready: true,
      checks: { redis: { ok: true }, postgres: { ok: true }, processes: { ok: true } },
    });

    // Two more jobs, SIGTERM while both are waiting on the LLM: both finish, then all exit 0.
    const requestsBefore = fake.requests.length;
    await enqueueSummaries('drain', 2);
    await waitFor(async () => fake.requests.length >= requestsBefore + 2, 30_000);
    worker.kill('SIGTERM');
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(0);
    expect(logLines(worker).filter((l) => l.msg === 'event settled')).toHaveLength(6);
  });

  it('starts a worker process again when one is killed', async () => {
    const worker = startCompactor(['worker', '--processes', '2', '--concurrency', '1'], env());
    const [listening] = await linesOnce(worker, 'metrics, /healthz and /readyz listening');
    const url = String(listening?.url);
    await readyAt(url);
    const started = await linesOnce(worker, 'worker process started', 2);
    process.kill(Number(started[0]?.pid), 'SIGKILL');

    const [restarting] = await linesOnce(worker, 'worker process exited; restarting it');
    expect(restarting).toMatchObject({ process: started[0]?.process, signal: 'SIGKILL' });
    const again = await linesOnce(worker, 'worker process started', 3);
    expect(again[2]?.process).toBe(3);
    await linesOnce(worker, 'worker started', 3);
    await readyAt(url);

    worker.kill('SIGTERM');
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(0);
  });

  it('stops every worker process and exits 1 when one keeps dying', async () => {
    const worker = startCompactor(['worker', '--processes', '2', '--concurrency', '1'], env());
    // The process of slot 0, then each process started in its place, dies as soon as it starts.
    for (let kills = 0; kills < 6; kills++) {
      const victim = await waitFor(
        async () => logLines(worker).filter((l) => l.msg === 'worker process started' && l.slot === 0)[kills],
        30_000,
      );
      process.kill(Number(victim.pid), 'SIGKILL');
    }
    const exit = await worker.done;
    expect(exit.code).toBe(1);
    const [gaveUp] = logLines(worker).filter(
      (l) => l.msg === 'worker process exited 6 times within a minute; stopping every worker process',
    );
    expect(gaveUp, exit.stderr).toMatchObject({ level: 50, restarts: 5, slot: 0 });
    const delays = logLines(worker)
      .filter((l) => l.msg === 'worker process exited; restarting it')
      .map((l) => l.restartInMs);
    expect(delays).toEqual([250, 500, 1_000, 2_000, 4_000]);
  });
});
