/**
 * The `anthropic` summarizer inside a real worker when the Messages API misbehaves: each failure
 * takes its retry path (429 waits for retry-after, 529 and 5xx back off, other 4xx fail at once), a
 * failed summary is never committed, the opt-in fallback keeps sessions bounded, and every applied
 * compaction is accounted for.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const MODEL = 'claude-haiku-4-5';
const ctx = useIntegration({ anthropic: true, config: { model: MODEL } });
const tenantId = 'acme';

beforeAll(() => {
  ctx.startWorker({ concurrency: 2 });
});

afterEach(() => {
  expect(ctx.fake.pending, 'every scripted answer was used').toBe(0);
});

/** Seeds a session and returns its live rows, to compare with after a failure. */
async function seed(sessionId: string) {
  await createSession(ctx.tdb.database.db, {
    tenantId,
    sessionId,
    messages: await loadCorpusSession('sweagent__ctf-web-i_got_id'),
  });
  return liveRows(sessionId);
}

function liveRows(sessionId: string) {
  return ctx.tdb.database.sql`
    select seq::int, kind, content from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

/** Enqueues an event straight on the queue with `attempts` and a short backoff; waits until settled. */
async function run(sessionId: string, attempts: number, strategy?: Strategy) {
  const eventId = randomUUID();
  await ctx.producer.queue.add(
    RUN_COMPLETED,
    { eventId, tenantId, sessionId, strategy: strategy ?? { type: 'summarize', keepRecent: 8 } },
    { jobId: eventId, attempts, backoff: { type: 'fixed', delay: 50 } },
  );
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(eventId);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 25_000);
  const job = await ctx.producer.queue.getJob(eventId);
  return { state, job, rows: await ctx.reads.history(tenantId, sessionId) };
}

describe('summaries under API failures', () => {
  it('honours retry-after on 429 by pausing the worker, without using up an attempt', async () => {
    await seed('rate-limited');
    ctx.fake.enqueue({ status: 429, retryAfter: 1 }, 'ok');
    const { state, job, rows } = await run('rate-limited', 1);
    expect(state).toBe('completed');
    expect(rows.map((r) => r.status)).toEqual(['applied']);
    const [first, second] = ctx.fake.requests.slice(-2).map((r) => r.receivedAt);
    expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(900);
    expect(job?.attemptsMade).toBe(1); // the rate-limited try did not count
  });

  it('backs off and retries on 529 and 500, then applies once', async () => {
    await seed('overloaded');
    ctx.fake.enqueue('overloaded', 'server-error', 'ok');
    const { state, job, rows } = await run('overloaded', 3);
    expect(state).toBe('completed');
    expect(job?.attemptsMade).toBe(3); // two failed attempts, then the one that completed
    expect(rows.map((r) => r.status)).toEqual(['applied']);
  });

  it('fails at once on 401, saying what to fix, and changes nothing', async () => {
    const before = await seed('unauthorized');
    ctx.fake.enqueue({ status: 401 });
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
    ctx.fake.enqueue('refusal', 'max-tokens', 'invalid-checkpoint');
    const { state, job, rows } = await run('refused', 3);
    expect(state).toBe('failed');
    expect(job?.attemptsMade).toBe(3);
    expect(job?.failedReason).toMatch(/invalid checkpoint/);
    expect(rows.map((r) => r.status)).toEqual(['failed']);
    expect(await liveRows('refused')).toEqual(before);
    expect(violations(await audit(ctx.tdb.database.db, tenantId, 'refused'))).toEqual([]);
  });

  it('falls back to the extractive summarizer on the last attempt when the strategy opts in', async () => {
    await seed('fallback');
    ctx.fake.enqueue('overloaded', 'refusal');
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
    expect(violations(await audit(ctx.tdb.database.db, tenantId, 'fallback'))).toEqual([]);
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
