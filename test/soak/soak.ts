/**
 * `npm run soak [-- --rounds N --workers W]`: N rounds of random faults across W real worker
 * processes on the corpus sessions, while the "agents" keep appending messages; then every event
 * is settled and the invariants are checked on the database. Prints rounds, events, faults by
 * kind, compactions applied, duplicates absorbed, messages lost (must be 0), double applications
 * (must be 0) and wall time; exits 1 if anything was lost or applied twice.
 *
 * Not part of `npm test`: it runs for a minute or more. Uses its own database, its own
 * redis-server on a free port (its connection drops must not hit anyone else's clients), and a
 * fake Messages API server (answering after a random delay, so kills land mid-summary), and
 * removes them at the end.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { importTranscript } from '../../producer/import.ts';
import { appendMessages, createProducer, jobIdOf } from '../../producer/index.ts';
import { openDatabase } from '../../producer/postgres/db.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor } from '../support/env.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { type Child, killAllChildren, startCompactor } from '../support/processes.ts';

const FAULTS = ['kill', 'leaseTheft', 'redisDrop', 'pgTerminate', 'duplicate', 'burst'] as const;
type Fault = (typeof FAULTS)[number];

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '200' },
    workers: { type: 'string', default: '3' },
    seed: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const workerCount = Number(values.workers);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
if (!Number.isInteger(workerCount) || workerCount < 1)
  throw new Error(`--workers must be a positive integer`);

/** A small seeded PRNG (mulberry32) so a failing run can be repeated with --seed. */
const seed = values.seed ? Number(values.seed) : randomBytes(4).readUInt32LE();
let state = seed >>> 0;
function random(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

async function main(): Promise<number> {
  const started = performance.now();
  const name = `compactor_soak_${randomBytes(5).toString('hex')}`;
  const prefix = `soak${randomBytes(4).toString('hex')}`;
  const tenantId = 'soak';
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = databaseUrlFor(name);
  await migrateDatabase(url);
  const database = openDatabase(url, { max: 4, applicationName: 'compactor-soak' });
  const ownRedis = await startRedisServer();
  const REDIS_URL = ownRedis.url;
  const redis = new Redis(REDIS_URL);
  const fake = new FakeAnthropicServer();
  const llm = await fake.start();
  const producer = createProducer({ redisUrl: REDIS_URL, prefix });
  const workers: Child[] = [];
  const env = {
    DATABASE_URL: url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'silent',
    ANTHROPIC_API_KEY: 'soak',
    ANTHROPIC_BASE_URL: llm.url,
    COMPACTOR_LEASE_TTL_MS: '2000',
    COMPACTOR_LOCK_DURATION_MS: '2000',
    COMPACTOR_STALLED_INTERVAL_MS: '1000',
  };
  const startWorker = () => workers.push(startCompactor(['worker', '--concurrency', '4'], env));
  const faults = Object.fromEntries(FAULTS.map((f) => [f, 0])) as Record<Fault, number>;
  const eventIds = new Set<string>();
  let enqueued = 0;
  let duplicatesEnqueued = 0;
  let appended = 0;
  try {
    const files = (await readdir(CORPUS_DIR)).filter((f) => f.endsWith('.jsonl')).sort();
    let imported = 0;
    for (const file of files) {
      imported += (await importTranscript(database.db, path.join(CORPUS_DIR, file), { tenantId }))
        .messageCount;
    }
    const sessions = files.map((f) => f.replace(/\.jsonl$/, ''));
    for (let i = 0; i < workerCount; i++) startWorker();
    console.error(
      `soak: seed ${seed}, ${rounds} rounds, ${workerCount} workers, ${sessions.length} sessions`,
    );

    const enqueue = async (sessionId: string, eventId = randomUUID()) => {
      const strategy: Strategy =
        random() < 0.5
          ? { type: 'summarize', keepRecent: 4 + Math.floor(random() * 12), maxSummaryTokens: 2_000 }
          : { type: 'slidingWindow', maxMessages: 5 + Math.floor(random() * 20) };
      const event = { eventId, tenantId, sessionId, strategy };
      await producer.runCompleted(event);
      eventIds.add(jobIdOf(tenantId, eventId));
      enqueued++;
      return event;
    };

    for (let round = 1; round <= rounds; round++) {
      // The agents keep working: new messages (a tool pair among them) on a few sessions.
      for (let i = 0; i < 2; i++) {
        const id = `call-${randomUUID()}`;
        appended += (
          await appendMessages(database.db, tenantId, pick(sessions), [
            { role: 'user', kind: 'message', content: `round ${round}: please edit src/app_${round}.py` },
            {
              role: 'assistant',
              kind: 'tool_call',
              content: `{"name":"edit","arguments":{"path":"src/app_${round}.py"}}`,
              toolCallId: id,
              toolName: 'edit',
            },
            { role: 'tool', kind: 'tool_result', content: 'ok', toolCallId: id, toolName: 'edit' },
            {
              role: 'assistant',
              kind: 'message',
              content: `edited src/app_${round}.py ${'and explained it '.repeat(20)}`,
            },
          ])
        ).length;
      }
      fake.enqueue({ delayMs: Math.floor(random() * 400) }, { delayMs: Math.floor(random() * 400) });
      await enqueue(pick(sessions));
      const fault = pick(FAULTS);
      faults[fault]++;
      await inject(fault);
      if (round % 20 === 0) console.error(`soak: round ${round}/${rounds}, ${enqueued} events`);
      await new Promise((r) => setTimeout(r, 50 + random() * 150));
    }

    async function inject(fault: Fault) {
      switch (fault) {
        case 'kill': {
          const alive = workers.filter((w) => w.exitCode === null && w.signalCode === null);
          pick(alive)?.kill('SIGKILL');
          startWorker();
          return;
        }
        case 'leaseTheft': {
          const session = pick(sessions);
          await redis.set(new LeaseManager(redis, { prefix }).keyOf(tenantId, session), 'thief', 'PX', 1_500);
          return;
        }
        case 'redisDrop': {
          const clients = (await redis.client('LIST')) as string;
          const ids = clients
            .split('\n')
            .filter((l) => l.includes('cmd=') && !l.includes('cmd=client'))
            .map((l) => /id=(\d+)/.exec(l)?.[1])
            .filter((id): id is string => Boolean(id));
          const victim = pick(ids);
          if (victim) await redis.client('KILL', 'ID', victim).catch(() => {});
          return;
        }
        case 'pgTerminate': {
          await database.sql`
            select pg_terminate_backend(pid) from pg_stat_activity
            where datname = ${name} and application_name = 'compactor' and pid <> pg_backend_pid()
              and state <> 'idle' limit 1`;
          return;
        }
        case 'duplicate': {
          const event = await enqueue(pick(sessions));
          await producer.runCompleted(event);
          duplicatesEnqueued++;
          return;
        }
        case 'burst': {
          const session = pick(sessions);
          await Promise.all(Array.from({ length: 20 }, () => enqueue(session)));
          return;
        }
      }
    }

    console.error('soak: rounds done; waiting for every event to settle');
    const states = await settle(producer.queue, [...eventIds], 240_000);
    const report = await audit(database.db, tenantId);
    const [ledger] = await database.sql<{ applied: number; skipped: number; failed: number; keys: number }[]>`
      select count(*) filter (where status = 'applied')::int as applied,
             count(*) filter (where status = 'skipped')::int as skipped,
             count(*) filter (where status = 'failed')::int as failed,
             count(distinct idempotency_key)::int as keys
      from compactions where tenant_id = ${tenantId}`;
    const lost = imported + appended - (report.liveOriginals + report.archivedOriginals);
    const doubles = report.keysAppliedTwice + report.duplicatedSeqs;
    const wall = (performance.now() - started) / 1000;
    const lines = [
      `rounds: ${rounds}   workers: ${workerCount}   seed: ${seed}`,
      `events: ${enqueued} enqueued (${eventIds.size} distinct), settled: ${states.completed} completed, ${states.failed} failed, ` +
        `${states.coalesced} coalesced into another job`,
      `faults: ${FAULTS.map((f) => `${f} ${faults[f]}`).join(', ')}`,
      `compactions applied: ${ledger?.applied}   skipped: ${ledger?.skipped}   failed attempts recorded: ${ledger?.failed}`,
      `LLM requests: ${fake.requests.length}`,
      `duplicates absorbed: ${duplicatesEnqueued} of ${duplicatesEnqueued} duplicate enqueues ` +
        `(ledger: ${ledger?.keys} idempotency keys for ${states.completed} completed events)`,
      `messages: ${imported} imported + ${appended} appended = ${report.liveOriginals} live + ${report.archivedOriginals} archived`,
      `messages lost: ${lost}`,
      `double applications: ${doubles}`,
      `invariants: ${violations(report).length === 0 ? 'all hold' : violations(report).join('; ')}`,
      `wall time: ${wall.toFixed(1)} s`,
    ];
    for (const job of await producer.queue.getFailed(0, 4))
      lines.push(`failed event ${job.id}: ${job.failedReason}`);
    console.log(lines.join('\n'));
    return lost === 0 && doubles === 0 && violations(report).length === 0 ? 0 : 1;
  } finally {
    await killAllChildren();
    await producer.close();
    await llm.close();
    await redis.quit();
    await database.close();
    ownRedis.stop();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

/** Waits until every event's job is completed, failed or gone (coalesced into another job). */
async function settle(
  queue: { getJobState(id: string): Promise<string> },
  ids: string[],
  timeoutMs: number,
): Promise<{ completed: number; failed: number; coalesced: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
    const count = (s: string) => states.filter((x) => x === s).length;
    const done = count('completed') + count('failed') + count('unknown');
    if (done === ids.length)
      return { completed: count('completed'), failed: count('failed'), coalesced: count('unknown') };
    if (performance.now() > deadline)
      throw new Error(`soak: ${ids.length - done} events not settled in time`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A throwaway redis-server on a free loopback port, nothing kept on disk. */
async function startRedisServer(): Promise<{ url: string; stop(): void }> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch (error) {
      probe.disconnect();
      if (i > 50)
        throw new Error(`soak: redis-server on port ${port} did not start: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, stop: () => child.kill('SIGKILL') };
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error('soak failed:', error);
    process.exit(1);
  },
);
