/**
 * The `anthropic` summarizer inside a real worker when the Messages API misbehaves: each failure
 * takes its retry path (429 waits for retry-after, 529 and 5xx back off, other 4xx fail at once), a
 * failed summary is never committed, the opt-in fallback keeps sessions bounded, and every applied
 * compaction is accounted for.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProducer, createSession, type Producer } from '../../producer/index.ts';
import { RUN_COMPLETED } from '../../shared/contract/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { CompactionStore } from '../../worker/postgres/store.ts';
import { type CompactionWorker, startWorker } from '../../worker/queue/worker.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { REDIS_URL } from '../support/env.ts';
import { type FakeAnthropicHandle, FakeAnthropicServer } from '../support/fake-anthropic.ts';
import {
  cleanRedis,
  createTestDatabase,
  loadCorpusSession,
  silentLogger,
  type TestDatabase,
  testConfig,
  testPrefix,
  waitFor,
} from '../support/fixtures.ts';

let tdb: TestDatabase;
let prefix: string;
let producer: Producer;
let store: CompactionStore;
let fake: FakeAnthropicServer;
let llm: FakeAnthropicHandle;
let worker: CompactionWorker | undefined;
const tenantId = 'acme';
const MODEL = 'claude-haiku-4-5';

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = testPrefix();
  producer = createProducer({ redisUrl: REDIS_URL, prefix });
  store = new CompactionStore(tdb.database.db);
  fake = new FakeAnthropicServer();
  llm = await fake.start();
  const config = testConfig(tdb.url, prefix, {
    anthropicApiKey: 'sk-test',
    anthropicBaseUrl: llm.url,
    model: MODEL,
  });
  worker = startWorker(openServices(config, silentLogger, { poolSize: 3 }), { concurrency: 2 });
});

afterEach(() => {
  expect(fake.pending, 'every scripted answer was used').toBe(0);
});

afterAll(async () => {
  await worker?.close();
  await producer?.close();
  await llm?.close();
  await cleanRedis(prefix);
  await tdb?.drop();
});

/** Seeds a session and returns its live rows, to compare with after a failure. */
async function seed(sessionId: string) {
  await createSession(tdb.database.db, {
    tenantId,
    sessionId,
    messages: await loadCorpusSession('sweagent__ctf-web-i_got_id'),
  });
  return liveRows(sessionId);
}

function liveRows(sessionId: string) {
  return tdb.database.sql`
    select seq::int, kind, content from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

/** Enqueues an event straight on the queue with `attempts` and a short backoff; waits until settled. */
async function run(sessionId: string, attempts: number, strategy?: Strategy) {
  const eventId = randomUUID();
  await producer.queue.add(
    RUN_COMPLETED,
    { eventId, tenantId, sessionId, strategy: strategy ?? { type: 'summarize', keepRecent: 8 } },
    { jobId: eventId, attempts, backoff: { type: 'fixed', delay: 50 } },
  );
  const state = await waitFor(async () => {
    const s = await producer.queue.getJobState(eventId);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 25_000);
  const job = await producer.queue.getJob(eventId);
  return { state, job, rows: await store.history(tenantId, sessionId) };
}

describe('summaries under API failures', () => {
  it('honours retry-after on 429 by pausing the worker, without using up an attempt', async () => {
    await seed('rate-limited');
    fake.enqueue({ status: 429, retryAfter: 1 }, 'ok');
    const { state, job, rows } = await run('rate-limited', 1);
    expect(state).toBe('completed');
    expect(rows.map((r) => r.status)).toEqual(['applied']);
    const [first, second] = fake.requests.slice(-2).map((r) => r.receivedAt);
    expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(900);
    expect(job?.attemptsMade).toBe(1); // the rate-limited try did not count
  });

  it('backs off and retries on 529 and 500, then applies once', async () => {
    await seed('overloaded');
    fake.enqueue('overloaded', 'server-error', 'ok');
    const { state, job, rows } = await run('overloaded', 3);
    expect(state).toBe('completed');
    expect(job?.attemptsMade).toBe(3); // two failed attempts, then the one that completed
    expect(rows.map((r) => r.status)).toEqual(['applied']);
  });

  it('fails at once on 401, saying what to fix, and changes nothing', async () => {
    const before = await seed('unauthorized');
    fake.enqueue({ status: 401 });
    const { state, job, rows } = await run('unauthorized', 5);
    expect(state).toBe('failed');
    expect(job?.attemptsMade).toBe(1);
    expect(job?.failedReason).toMatch(/401/);
    expect(job?.failedReason).toMatch(/ANTHROPIC_API_KEY|API key/i);
    expect(rows.map((r) => r.status)).toEqual(['failed']);
    expect(await liveRows('unauthorized')).toEqual(before);
  });

  it('never commits a refused, truncated or invalid summary', async () => {
    const before = await seed('refused');
    fake.enqueue('refusal', 'max-tokens', 'invalid-checkpoint');
    const { state, job, rows } = await run('refused', 3);
    expect(state).toBe('failed');
    expect(job?.attemptsMade).toBe(3);
    expect(job?.failedReason).toMatch(/invalid checkpoint/);
    expect(rows.map((r) => r.status)).toEqual(['failed']);
    expect(await liveRows('refused')).toEqual(before);
    expect(violations(await audit(tdb.database.db, tenantId, 'refused'))).toEqual([]);
  });

  it('falls back to the extractive summarizer on the last attempt when the strategy opts in', async () => {
    await seed('fallback');
    fake.enqueue('overloaded', 'refusal');
    const strategy: Strategy = {
      type: 'summarize',
      keepRecent: 8,
      maxSummaryTokens: 2_000,
      fallback: 'extractive',
    };
    const { state, rows } = await run('fallback', 2, strategy);
    expect(state).toBe('completed');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'applied', summarizer: 'extractive' });
    expect(rows[0]?.reason).toMatch(
      /^fell back to extractive: anthropic failed on the last attempt: summary refused/,
    );
    expect(violations(await audit(tdb.database.db, tenantId, 'fallback'))).toEqual([]);
  });

  it('records model, tokens, cost and time of every applied summary', async () => {
    await seed('accounted');
    const { rows } = await run('accounted', 1);
    const [row] = rows;
    expect(row).toMatchObject({ status: 'applied', summarizer: 'anthropic', model: MODEL });
    const tokens = {
      inputTokens: row?.inputTokens ?? -1,
      outputTokens: row?.outputTokens ?? -1,
      cacheReadTokens: row?.cacheReadTokens ?? -1,
      cacheWriteTokens: row?.cacheWriteTokens ?? -1,
    };
    expect(tokens.inputTokens + tokens.cacheReadTokens + tokens.cacheWriteTokens).toBeGreaterThan(1_000);
    expect(tokens.outputTokens).toBeGreaterThan(0);
    expect(row?.costUsd).toBeCloseTo(costUsd(MODEL, tokens).usd, 6);
    expect(row?.costUsd).toBeGreaterThan(0);
    expect(row?.llmMs).toBeGreaterThanOrEqual(0);
    expect(row?.durationMs).toBeGreaterThanOrEqual(row?.llmMs ?? 0);
  });
});
