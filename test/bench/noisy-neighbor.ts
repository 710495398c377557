/**
 * Part 10 of `npm run bench` ("noisy neighbor"; alone: `npm run bench:noisy`): what one tenant's
 * flood does to another tenant. Each party runs in a process of its own, as in a deployment: `compactor
 * api` built (so its RSS is its own), `compactor worker --concurrency 8` built, the noisy tenant
 * (test/bench/noisy-flood.ts), and the quiet tenant in this process, which measures nothing but its
 * own requests. The quiet tenant appends a turn, reads its context and
 * compacts (`POST …/compact?wait`, through the queue), in a loop: alone, then while the noisy tenant
 * floods the API, then while it floods the API and the queue:
 *
 * - 16 appends of 10 MB each to one session, one after the other (as the finding sent them);
 * - from the first one's answer, 20 context reads of that session at once, and 20 of a session at
 *   the default caps (the largest context they let through), each retried after its `retry-after`
 *   until answered otherwise;
 * - in the last phase, 2,000 `session.run.completed` events for 2,000 sessions, enqueued through
 *   the producer as a service with queue access does (the API's rate limit does not thin them: the
 *   worker's share is what they test).
 *
 * It reports the quiet tenant's p50/p99 per operation in each phase against alone (target: p99
 * within 2x), the API process's peak RSS in each phase (target: under 512 MB), and what the noisy
 * tenant was answered. All limits are the defaults (shared/policy/limits.ts).
 *
 * To find where a quiet request's time went: `BENCH_TRACE=1` prints each quiet request over 60 ms
 * with its wall-clock time (ms since the epoch); `BENCH_CHILD_EXEC_ARGV` passes Node options to the
 * API and worker processes (`--cpu-prof --cpu-prof-dir=/tmp/prof`, `--trace-gc`, `--import` of a
 * probe), and `BENCH_CHILD_STDOUT=1` lets their stdout through.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type postgres from 'postgres';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import { REDIS_URL } from '../support/env.ts';
import {
  type Answered,
  FLOOD_APPEND_BYTES,
  FLOOD_APPENDS,
  FLOOD_EVENTS,
  FLOOD_READS,
  FLOOD_STARTED,
  WIDE_SESSION,
} from './noisy-flood.ts';
import { addSessions, fmt } from './report.ts';
import { tenantProcess } from './tenant-process.ts';

/** Quiet-tenant iterations (append, read, compact) alone; flooded, it runs as long as the flood. */
const ITERATIONS = 60;
/**
 * The quiet tenant's pace: an iteration (three requests) starts at most every this many ms, so it
 * stays under its own default request rate (100 per second) however fast it is answered.
 */
const ITERATION_MS = 40;
/** The noisy client's CPU priority (nice; see floodProcess). */
const FLOOD_NICE = 10;
/** Quiet sessions, used round robin. */
const QUIET_SESSIONS = 20;
/** The session at the caps: messages of this many characters, under both default context caps. */
const WIDE_MESSAGES = 4;
const WIDE_CHARS = 950_000;
const OPS = ['append', 'read context', 'compact (wait for applied)'] as const;
type Op = (typeof OPS)[number];

/** A section writer, as `Report.section`. */
type Section = (title: string, header: string[], rows: string[][], notes?: string[]) => void;

/**
 * Runs part 10 on database `url` (migrated), under a fresh queue prefix from `prefix`.
 * @param apiNodeOptions the API process's `NODE_OPTIONS` (`--max-old-space-size=256`); '' for none.
 */
export async function noisyNeighbor(
  url: string,
  sql: postgres.Sql,
  prefix: () => string,
  section: Section,
  apiNodeOptions: string,
) {
  const p = prefix();
  await addSessions(sql, 'quiet', QUIET_SESSIONS, 60, 'q');
  await addSessions(sql, 'noisy', FLOOD_EVENTS, 60, 'n');
  await sql`insert into sessions (tenant_id, id) values ('noisy', 'big1'), ('noisy', 'big2')`;
  await sql`
    insert into sessions (tenant_id, id, last_seq, message_count, token_count)
    values ('noisy', ${WIDE_SESSION}, ${WIDE_MESSAGES - 1}, ${WIDE_MESSAGES}, ${(WIDE_MESSAGES * WIDE_CHARS) / 4})`;
  await sql`
    insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count, pinned)
    select 'noisy', ${WIDE_SESSION}, q, case when q % 2 = 0 then 'user' else 'assistant' end, 'message',
      repeat('y', ${WIDE_CHARS}), to_json(repeat('y', ${WIDE_CHARS})), ${WIDE_CHARS / 4}, false
    from generate_series(0, ${WIDE_MESSAGES - 1}) q`;
  await sql`vacuum analyze`;
  const tokens = { quiet: `bench-quiet-${randomUUID()}`, noisy: `bench-noisy-${randomUUID()}` };
  const cli = await buildCli();
  const env = { DATABASE_URL: url, REDIS_URL, COMPACTOR_QUEUE_PREFIX: p, COMPACTOR_LOG_LEVEL: 'warn' };
  const api = await startApiProcess(cli, env, tokens, apiNodeOptions);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(COMPACTION_QUEUE, { connection: redis, prefix: p });
  const worker = startCliProcess(cli, ['worker', '--concurrency', '8'], {
    ...env,
    COMPACTOR_SWEEP_EVERY_MS: '0',
  });
  const call = (tenant: keyof typeof tokens, method: string, path: string, body?: unknown) =>
    fetch(`${api.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tokens[tenant]}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  try {
    const quiet = quietLoop(call);
    await quiet(5, Promise.resolve()); // warm-up
    api.rss.reset();
    const solo = await quiet(ITERATIONS, Promise.resolve());
    const soloRss = api.rss.reset();
    const apiFlood = floodProcess(api.url, tokens.noisy, p, 'big1', false);
    await apiFlood.started;
    const apiFlooded = await quiet(0, apiFlood.answered);
    const apiAnswered = await apiFlood.answered;
    const apiRss = api.rss.reset();
    const fullFlood = floodProcess(api.url, tokens.noisy, p, 'big2', true);
    await fullFlood.started;
    // The queue flood lasts until the worker has worked off the noisy backlog, not until it is sent.
    const drained = fullFlood.answered.then(() => backlogDrained(queue));
    const fullFlooded = await quiet(0, drained);
    const fullAnswered = await fullFlood.answered;
    const fullRss = api.rss.reset();
    report(
      section,
      solo,
      [
        { name: 'API flood', samples: apiFlooded, rss: apiRss, answered: apiAnswered },
        { name: 'API + queue flood', samples: fullFlooded, rss: fullRss, answered: fullAnswered },
      ],
      { solo: soloRss, hwm: await api.rss.highWater(), nodeOptions: apiNodeOptions },
    );
  } finally {
    worker.kill('SIGTERM');
    api.stop();
    await queue.close();
    redis.disconnect();
  }
}

/** Latencies (ms) per quiet operation. */
type Samples = Record<Op, number[]>;

/**
 * The quiet tenant's loop: `n` iterations at least, and on until `until` settles; a request started
 * after `until` settled is not counted (it would time the quiet tenant alone).
 * @throws {Error} on any answer but the expected one (the quiet tenant is never refused).
 */
function quietLoop(call: (t: 'quiet', m: string, p: string, b?: unknown) => Promise<Response>) {
  let turn = 0;
  return async (n: number, until: Promise<unknown>): Promise<Samples> => {
    let settled = false;
    until.then(
      () => (settled = true),
      () => (settled = true),
    );
    const samples: Samples = { append: [], 'read context': [], 'compact (wait for applied)': [] };
    const timed = async (op: Op, request: () => Promise<Response>, expected: number) => {
      const during = !settled;
      const started = performance.now();
      const response = await request();
      const text = await response.text();
      if (during || n > 0) samples[op].push(performance.now() - started);
      const ms = performance.now() - started;
      if (process.env.BENCH_TRACE && ms > 60)
        process.stderr.write(`slow ${op}: ${Math.round(ms)} ms, ended ${Date.now()}\n`);
      if (response.status !== expected)
        throw new Error(`quiet ${op}: ${response.status} ${text.slice(0, 300)}`);
    };
    for (let i = 0; i < n || !settled; i++) {
      const paced = new Promise((resolve) => setTimeout(resolve, ITERATION_MS));
      const id = `q${(turn % QUIET_SESSIONS) + 1}`;
      turn += 1;
      const messages = [
        { role: 'user', content: `Turn ${turn}: what does the parser do with an empty line?` },
        { role: 'assistant', content: [{ type: 'text', text: `Turn ${turn}: it skips it.` }] },
      ];
      await timed('append', () => call('quiet', 'POST', `/v1/sessions/${id}/messages`, { messages }), 200);
      await timed('read context', () => call('quiet', 'GET', `/v1/sessions/${id}/context`), 200);
      const strategy = { type: 'slidingWindow', maxMessages: 10 };
      await timed(
        'compact (wait for applied)',
        () => call('quiet', 'POST', `/v1/sessions/${id}/compact?wait=60000`, { strategy }),
        200,
      );
      await paced;
    }
    return samples;
  };
}

/** Resolves once the compaction queue has no job waiting, delayed or running (polled every 100 ms). */
async function backlogDrained(queue: Queue): Promise<void> {
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
    if (Object.values(counts).every((n) => n === 0)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One flooded phase: its quiet samples, the API's peak RSS (kB), what the noisy tenant got. */
interface Phase {
  name: string;
  samples: Samples;
  rss: number;
  answered: Answered;
}

/** Prints part 10's table and notes. */
function report(
  section: Section,
  solo: Samples,
  phases: Phase[],
  rss: { solo: number; hwm: number; nodeOptions: string },
) {
  const at = (xs: number[], q: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  };
  const rows = OPS.flatMap((op) => [
    [op, 'alone', String(solo[op].length), fmt(at(solo[op], 0.5), 1), fmt(at(solo[op], 0.99), 1), ''],
    ...phases.map((phase) => {
      const ratio = at(phase.samples[op], 0.99) / at(solo[op], 0.99);
      return [
        '',
        phase.name,
        String(phase.samples[op].length),
        fmt(at(phase.samples[op], 0.5), 1),
        fmt(at(phase.samples[op], 0.99), 1),
        `${fmt(ratio, 2)} (${ratio <= 2 ? 'met' : 'missed'})`,
      ];
    }),
  ]);
  const mb = (kb: number) => `${fmt(kb / 1024, 0)} MB`;
  const statuses = (answered: Answered) =>
    Object.entries(answered)
      .filter(([, by]) => Object.keys(by).length > 0)
      .map(
        ([kind, by]) =>
          `${kind} ${Object.entries(by)
            .map(([s, n]) => `${n}× ${s}`)
            .join(', ')}`,
      )
      .join('; ');
  section(
    `10. Noisy neighbor: a quiet tenant while another floods (compactor api in its own process${rss.nodeOptions ? `, ${rss.nodeOptions}` : ''})`,
    ['quiet operation', 'phase', 'samples', 'p50 ms', 'p99 ms', 'p99 / alone (target ≤ 2)'],
    rows,
    [
      `API peak RSS (target < 512 MB): alone ${mb(rss.solo)}, ${phases.map((p) => `${p.name} **${mb(p.rss)}** (${p.rss < 512 * 1024 ? 'met' : 'missed'})`).join(', ')}; high-water mark (VmHWM) ${mb(rss.hwm)}. The API runs built (tsc, as the package), ${rss.nodeOptions ? `with NODE_OPTIONS=${rss.nodeOptions}` : "with Node's default heap settings"}.`,
      ...phases.map((p) => `The noisy tenant was answered in the ${p.name}: ${statuses(p.answered)}.`),
      `The flood: ${FLOOD_APPENDS} appends of ${FLOOD_APPEND_BYTES / 1e6} MB to one session, one after the other; from the first one's answer, ${FLOOD_READS} context reads of it at once and ${FLOOD_READS} of a session at the default caps (${WIDE_MESSAGES} messages of ${WIDE_CHARS / 1e6} MB, ${(WIDE_MESSAGES * WIDE_CHARS) / 4} tokens), each retried after its retry-after; in the last phase also ${FLOOD_EVENTS} session.run.completed events for ${FLOOD_EVENTS} sessions of 60 messages (slidingWindow), enqueued through the producer by 32 callers, the phase lasting until the worker has worked them off. The quiet tenant runs its loop (append a turn, read its context, compact with slidingWindow and wait for the result) ${ITERATIONS} times alone, then in each phase for as long as the flood runs (from its first request to its last answer), one request at a time, an iteration starting at most every ${ITERATION_MS} ms (under its own default request rate); only requests sent while the flood ran are counted. Default limits throughout; compactor worker at concurrency 8, the API and the noisy tenant each in a process of its own, the quiet tenant in the bench process; the noisy client runs at nice ${FLOOD_NICE} (its CPU would be its own machines' in a deployment, not the service's). RSS is sampled every 50 ms from /proc.`,
      'Compaction latency: the worker serves tenants round-robin (each job’s priority is its rank in its tenant’s backlog) and holds a tenant to its share of the slots (a quarter) while another is active, pending or with an event in the last 5 s (docs/guide/security.md), so the quiet compaction waits neither for the noisy backlog nor for a free slot, and shares the worker with two noisy jobs rather than eight. Large appends and context reads are handled in the API’s worker threads, at a lower CPU priority than its event loop.',
    ],
  );
}

/**
 * Compiles the sources as the package's build does (JavaScript only) into node_modules/.cache, so
 * the API runs as it is installed, without tsx's transpiler in its memory. The directory is named
 * after the checkout, so that checkouts sharing one node_modules never run each other's build.
 * @returns the path of the built `compactor` command.
 */
export async function buildCli(): Promise<string> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const checkout = createHash('sha256').update(root).digest('hex').slice(0, 8);
  const out = path.join(root, `node_modules/.cache/compactor-bench-${checkout}`);
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const args = [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', out, '--declaration', 'false'];
  const code = await new Promise<number | null>((resolve) =>
    spawn(process.execPath, args, { stdio: 'inherit' }).once('exit', resolve),
  );
  if (code !== 0) throw new Error(`building the API for the bench failed (tsc exited ${code})`);
  return path.join(out, 'worker/bin/compactor.js');
}

/** The built `compactor` running `args`, as a child process with `env` over this one's. */
function startCliProcess(cli: string, args: string[], env: Record<string, string>): ChildProcess {
  const execArgv = process.env.BENCH_CHILD_EXEC_ARGV?.split(' ').filter(Boolean) ?? [];
  return spawn(process.execPath, [...execArgv, cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', process.env.BENCH_CHILD_STDOUT ? 'inherit' : 'ignore', 'inherit'],
  });
}

/**
 * The noisy tenant's flood (test/bench/noisy-flood.ts) as a process of its own.
 * @returns `started` once it sends its first request; `answered`, what it was answered, once it
 *   exits (rejected when it exits otherwise than 0).
 */
function floodProcess(url: string, key: string, prefix: string, session: string, events: boolean) {
  const flood = tenantProcess<Answered>(
    new URL('./noisy-flood.ts', import.meta.url),
    [url, key, REDIS_URL, prefix, session, events ? 'events' : 'no-events'],
    { nice: FLOOD_NICE, readyLine: FLOOD_STARTED, name: 'the flood' },
  );
  return { started: flood.ready, answered: flood.result };
}

/**
 * `compactor api` as a child process (`tokens`: each tenant's bearer token): its URL, its RSS, and
 * how to stop it.
 */
export async function startApiProcess(
  cli: string,
  env: Record<string, string>,
  tokens: Record<string, string>,
  nodeOptions: string,
) {
  const port = await freePort();
  const child = startCliProcess(cli, ['api', '--port', String(port), '--host', '127.0.0.1'], {
    ...env,
    COMPACTOR_DASHBOARD_TOKENS: Object.entries(tokens)
      .map(([tenant, token]) => `${tenant}:${token}`)
      .join(','),
    NODE_OPTIONS: nodeOptions,
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/v1/openapi.json`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 300 || child.exitCode !== null) throw new Error('compactor api did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  // `compactor api` serves from a child of its own under its heap bound (worker/cli/heap.ts): sample that one.
  const rss = rssSampler(await servingPid(child.pid ?? 0));
  return {
    url: base,
    rss,
    /** How the process ended (its exit code or signal), null while it runs. */
    exited: (): string | null =>
      child.exitCode !== null ? `exit ${child.exitCode}` : (child.signalCode ?? null),
    stop: () => {
      rss.stop();
      child.kill('SIGTERM');
    },
  };
}

/** The process serving for `pid`: its child when it started one (Linux's /proc children list), else itself. */
async function servingPid(pid: number): Promise<number> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const first = Number(children.trim().split(/\s+/)[0]);
  return Number.isInteger(first) && first > 0 ? first : pid;
}

/** Samples a process's RSS (kB) every 50 ms; `reset` returns the peak since the last reset. */
function rssSampler(pid: number) {
  let peak = 0;
  const read = async (field: string) => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  };
  const timer = setInterval(() => {
    read('VmRSS').then((kb) => {
      peak = Math.max(peak, kb);
    });
  }, 50);
  return {
    reset(): number {
      const was = peak;
      peak = 0;
      return was;
    },
    highWater: () => read('VmHWM'),
    stop: () => clearInterval(timer),
  };
}

/** A TCP port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
