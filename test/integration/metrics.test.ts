/**
 * The worker's metrics and health endpoints with real Redis, Postgres and BullMQ: each outcome,
 * a lease conflict and a fence rejection counted once, LLM latency and tokens saved, the queue
 * depth read at scrape time, and readiness that fails when a dependency does not answer.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf, RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { startMetricsServer } from '../../worker/http/metrics-server.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { readinessProbe } from '../../worker/observability/health.ts';
import { createWorkerMetrics } from '../../worker/observability/metrics.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
let server: Listening;
const tenantId = 'acme';
let bumped = false;

/** The extractive summarizer that, once, moves the session's version under the running compaction. */
function fencingSummarizer(): Summarizer {
  const extractive = createExtractiveSummarizer();
  return {
    name: 'extractive',
    async summarize(input) {
      if (input.sessionId === 'fenced' && !bumped) {
        bumped = true;
        await ctx.tdb.database.sql`
          update sessions set compaction_version = compaction_version + 1
          where tenant_id = ${input.tenantId} and id = ${input.sessionId}`;
      }
      return extractive.summarize(input);
    },
  };
}

async function seed(sessionId: string) {
  await createSession(ctx.tdb.database.db, {
    tenantId,
    sessionId,
    messages: await loadCorpusSession('sweagent__ctf-rev-rock'),
  });
}

async function scrape(): Promise<string> {
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample, labels given in exposition order; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function settled(jobId: string) {
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  });
}

beforeAll(async () => {
  // The server reads the worker's services, so both share them.
  const services = ctx.services({ summarizers: { primary: fencingSummarizer() } });
  const metrics = createWorkerMetrics();
  ctx.startWorker({ services, concurrency: 2, metrics });
  server = await startMetricsServer(services, metrics, { port: 0, host: '127.0.0.1' });
  ctx.onTeardown(() => server.close());
});

describe('worker metrics', () => {
  it('counts each outcome, the fence rejection, LLM latency and tokens saved', async () => {
    await seed('fenced');
    await seed('quiet');
    const summarize = {
      eventId: randomUUID(),
      tenantId,
      sessionId: 'fenced',
      strategy: { type: 'summarize', keepRecent: 4 },
    } as const;
    await ctx.producer.runCompleted(summarize);
    expect(await settled(jobIdOf(tenantId, summarize.eventId))).toBe('completed');
    // The same event again, after its job is gone: a duplicate.
    await ctx.producer.queue.remove(jobIdOf(tenantId, summarize.eventId));
    await ctx.producer.runCompleted(summarize);
    expect(await settled(jobIdOf(tenantId, summarize.eventId))).toBe('completed');
    const skip = { eventId: randomUUID(), tenantId, sessionId: 'quiet', strategy: { type: 'none' } } as const;
    await ctx.producer.runCompleted(skip);
    expect(await settled(jobIdOf(tenantId, skip.eventId))).toBe('completed');
    const bad = randomUUID();
    await ctx.producer.queue.add(RUN_COMPLETED, { eventId: bad, tenantId }, { jobId: bad, attempts: 3 });
    expect(await settled(bad)).toBe('failed');

    const text = await waitFor(async () => {
      const t = await scrape();
      return sample(t, 'compactor_jobs_total{outcome="failed",trigger="event"}') === 1 ? t : undefined;
    });
    expect(sample(text, 'compactor_jobs_total{outcome="applied",trigger="event"}')).toBe(1);
    expect(sample(text, 'compactor_jobs_total{outcome="duplicate",trigger="event"}')).toBe(1);
    expect(sample(text, 'compactor_jobs_total{outcome="skipped",trigger="event"}')).toBe(1);
    expect(sample(text, 'compactor_job_retries_total{trigger="event"}')).toBeUndefined();
    expect(sample(text, 'compactor_fence_rejections_total')).toBe(1);
    expect(sample(text, 'compactor_lease_conflicts_total')).toBe(0);
    // Summarized twice: the fenced plan, then the re-plan.
    expect(sample(text, 'compactor_llm_latency_seconds_count{summarizer="extractive",result="ok"}')).toBe(2);
    expect(sample(text, 'compactor_compaction_duration_seconds_count{outcome="applied"}')).toBe(1);
    expect(sample(text, 'compactor_compaction_duration_seconds_count{outcome="failed"}')).toBe(1);
    const [row] = await ctx.tdb.database.sql<{ saved: number; archived: number }[]>`
      select (tokens_before - tokens_after)::int as saved, messages_archived as archived
      from compactions where session_id = 'fenced' and status = 'applied'`;
    expect(sample(text, 'compactor_tokens_saved_total')).toBe(row?.saved);
    expect(sample(text, 'compactor_messages_archived_total')).toBe(row?.archived);
    expect(sample(text, 'compactor_queue_depth{queue="compaction",state="failed"}')).toBe(1);
    expect(sample(text, 'compactor_queue_depth{queue="compaction",state="completed"}')).toBe(2);
    expect(sample(text, 'compactor_queue_depth{queue="compaction-sweep",state="waiting"}')).toBe(0);
    expect(text).toContain('# TYPE compactor_llm_tokens_total counter');
    expect(text).toContain('# TYPE compactor_llm_cost_usd_total counter');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('counts a lease conflict when another worker holds the session', async () => {
    await seed('busy');
    const lease = await ctx.leases.acquire(tenantId, 'busy');
    expect(lease).not.toBeNull();
    const event = {
      eventId: randomUUID(),
      tenantId,
      sessionId: 'busy',
      trigger: 'manual',
      strategy: { type: 'summarize', keepRecent: 10 },
    } as const;
    await ctx.producer.runCompleted(event);
    await waitFor(async () =>
      (sample(await scrape(), 'compactor_lease_conflicts_total') ?? 0) >= 1 ? true : undefined,
    );
    await lease?.release();
    expect(await settled(jobIdOf(tenantId, event.eventId))).toBe('completed');
  });

  it('runs a sliding window without the lease: no LLM call to pay for twice, the row lock suffices', async () => {
    await seed('windowed');
    const lease = await ctx.leases.acquire(tenantId, 'windowed');
    expect(lease).not.toBeNull();
    const conflictsBefore = sample(await scrape(), 'compactor_lease_conflicts_total') ?? 0;
    const event = {
      eventId: randomUUID(),
      tenantId,
      sessionId: 'windowed',
      trigger: 'manual',
      strategy: { type: 'slidingWindow', maxMessages: 10 },
    } as const;
    await ctx.producer.runCompleted(event);
    expect(await settled(jobIdOf(tenantId, event.eventId))).toBe('completed');
    await lease?.release();
    const result = (await ctx.producer.queue.getJob(jobIdOf(tenantId, event.eventId)))?.returnvalue;
    expect(result).toMatchObject({ status: 'applied', ledgerStatus: 'applied' });
    expect(result.messagesAfter).toBeLessThan(result.messagesBefore);
    expect(sample(await scrape(), 'compactor_lease_conflicts_total') ?? 0).toBe(conflictsBefore);
  });

  it('counts a fence rejection on the no-LLM path too, and the re-plan applies', async () => {
    await seed('window-fenced');
    // Once, a message the plan saw leaving cannot be deleted (as if pinned meanwhile): the archive
    // moves fewer rows than planned, which the write rejects as a stale plan. A sequence counts the
    // attempts, since it is the one thing the rejected transaction's rollback does not undo.
    const [victim] = await ctx.tdb.database.sql<{ seq: number }[]>`
      select min(seq)::int as seq from messages where tenant_id = ${tenantId} and session_id = 'window-fenced'
        and not pinned`;
    await ctx.tdb.database.sql.unsafe(`
      create sequence fence_once;
      create function fence_once_keep() returns trigger language plpgsql as $$
      begin
        if old.seq = ${victim?.seq} and nextval('fence_once') = 1 then return null; end if;
        return old;
      end $$;
      create trigger fence_once_keep before delete on messages
        for each row when (old.session_id = 'window-fenced') execute function fence_once_keep();`);
    const before = sample(await scrape(), 'compactor_fence_rejections_total') ?? 0;
    const event = {
      eventId: randomUUID(),
      tenantId,
      sessionId: 'window-fenced',
      trigger: 'manual',
      strategy: { type: 'slidingWindow', maxMessages: 10 },
    } as const;
    await ctx.producer.runCompleted(event);
    expect(await settled(jobIdOf(tenantId, event.eventId))).toBe('completed');
    expect((await ctx.producer.queue.getJob(jobIdOf(tenantId, event.eventId)))?.returnvalue).toMatchObject({
      status: 'applied',
      ledgerStatus: 'applied',
    });
    expect(sample(await scrape(), 'compactor_fence_rejections_total')).toBe(before + 1);
  });

  it('answers /healthz and /readyz', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as { checks: Record<string, unknown> };
    // The queue's own dependency is checked: Redis on the redis backend; on postgres, Postgres alone.
    expect(body).toMatchObject({ status: 'ready', checks: { postgres: { ok: true } } });
    if (ctx.backend === 'redis') expect(body.checks.redis).toMatchObject({ ok: true });
    else expect(body.checks).not.toHaveProperty('redis');
  });
});

describe('readiness', () => {
  it('is not ready while Redis or Postgres does not answer', async () => {
    // Nothing listens on port 1: both connections are refused.
    const deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: null });
    const deadSql = postgres('postgres://postgres@127.0.0.1:1/postgres', { max: 1, connect_timeout: 1 });
    const liveSql = postgres(ctx.tdb.url, { max: 1 });
    const down = readinessProbe(deadRedis, deadSql, 1_000);
    const redisDown = readinessProbe(deadRedis, liveSql, 1_000);
    try {
      const both = await down.check();
      expect(both.ready).toBe(false);
      expect(both.checks.redis).toMatchObject({ ok: false, error: expect.any(String) });
      expect(both.checks.postgres).toMatchObject({ ok: false, error: expect.any(String) });
      const one = await redisDown.check();
      expect(one).toMatchObject({ ready: false, checks: { redis: { ok: false }, postgres: { ok: true } } });
    } finally {
      await down.close();
      await redisDown.close();
      deadRedis.disconnect();
      await deadSql.end({ timeout: 1 });
      await liveSql.end({ timeout: 1 });
    }
  });

  it('on the postgres queue backend checks Postgres alone, not ready while it does not answer', async () => {
    const deadSql = postgres('postgres://postgres@127.0.0.1:1/postgres', { max: 1, connect_timeout: 1 });
    const probe = readinessProbe(null, deadSql, 1_000);
    try {
      const answer = await probe.check();
      expect(answer.ready).toBe(false);
      expect(Object.keys(answer.checks)).toEqual(['postgres']);
      expect(answer.checks.postgres).toMatchObject({ ok: false, error: expect.any(String) });
    } finally {
      await probe.close();
      await deadSql.end({ timeout: 1 });
    }
  });
});
