/**
 * Spend budgets end to end: real Postgres, real BullMQ workers, the `anthropic` summarizer against
 * the fake Messages API. A tenant's daily budget lets the first summaries use the LLM; once what is
 * left cannot pay for the next one, compactions fall back to the extractive summarizer (or are
 * skipped, as the policy says) with the reason in the ledger and the Prometheus counter. Two
 * workers compacting many sessions of one tenant at once stay within the budget plus one summary
 * per worker: the check and the reservation are serialized per tenant in Postgres.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { budgetReservations, type CompactionRow } from '../../producer/postgres/schema.ts';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import { createWorkerMetrics } from '../../worker/observability/metrics.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true, config: { model: 'claude-haiku-4-5' } });

const STRATEGY = { type: 'summarize', keepRecent: 8, maxSummaryTokens: 2_000 } as const;

afterEach(async () => {
  await ctx.closeWorkers();
});

async function seed(tenantId: string, sessions: string[]) {
  const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
  for (const sessionId of sessions) {
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  }
}

/** Sends a run-completed event for the session; resolves when its job completed. */
async function compact(tenantId: string, sessionId: string): Promise<void> {
  const eventId = randomUUID();
  await ctx.producer.queue.add(RUN_COMPLETED, { eventId, tenantId, sessionId }, { jobId: eventId });
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(eventId);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 60_000);
  expect(state).toBe('completed');
}

async function ledger(tenantId: string, sessions: string[]): Promise<CompactionRow[]> {
  const rows = await Promise.all(sessions.map((s) => ctx.reads.history(tenantId, s)));
  return rows.flat().sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

const paid = (rows: CompactionRow[]) => rows.filter((r) => r.summarizer === 'anthropic');
const spent = (rows: CompactionRow[]) => rows.reduce((sum, r) => sum + (r.costUsd ?? 0), 0);
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);

describe('a tenant daily budget', () => {
  it('lets the first summaries use the LLM, then falls back to the extractive summarizer with the reason', async () => {
    const tenantId = 'frugal';
    const sessions = names('s', 6);
    await seed(tenantId, sessions);
    await setPolicy(ctx.tdb.database.db, tenantId, null, {
      strategy: STRATEGY,
      budget: { dailyUsd: 0.05, onExceeded: 'extractive' },
    });
    const metrics = createWorkerMetrics();
    ctx.startWorker({ metrics });
    const before = ctx.fake.requests.length;

    for (const sessionId of sessions) await compact(tenantId, sessionId);

    const rows = await ledger(tenantId, sessions);
    expect(rows.map((r) => r.status)).toEqual(sessions.map(() => 'applied'));
    const llm = paid(rows);
    expect(llm.length).toBeGreaterThan(0);
    expect(llm.length).toBeLessThan(sessions.length);
    // The LLM summaries come first; every compaction after them was summarized offline.
    expect(rows.slice(0, llm.length).every((r) => r.summarizer === 'anthropic')).toBe(true);
    const offline = rows.slice(llm.length);
    for (const row of offline) {
      expect(row).toMatchObject({ summarizer: 'extractive', costUsd: 0 });
      expect(row.reason).toMatch(
        /^budget: daily 0\.05 USD of the tenant, spent 0\.\d+, this summary ≈0\.\d+: summarized by extractive instead$/,
      );
      expect(row.summary).not.toBeNull();
    }
    expect(spent(rows)).toBeLessThanOrEqual(0.05);
    // No request reached the Messages API for the offline summaries.
    expect(ctx.fake.requests.length - before).toBe(llm.length);

    const counted = await metrics.registry.getSingleMetricAsString('compactor_budget_exceeded_total');
    expect(counted).toContain(
      `compactor_budget_exceeded_total{action="extractive",scope="tenant",period="daily"} ${offline.length}`,
    );
    expect(await ctx.tdb.database.db.select().from(budgetReservations)).toEqual([]);
  });

  it('skips the compaction when the policy says skip, leaving the session as it was', async () => {
    const tenantId = 'stingy';
    await seed(tenantId, ['only']);
    await setPolicy(ctx.tdb.database.db, tenantId, null, {
      strategy: STRATEGY,
      budget: { dailyUsd: 0.000001, onExceeded: 'skip' },
    });
    ctx.startWorker();
    const before = ctx.fake.requests.length;

    await compact(tenantId, 'only');

    const [row] = await ctx.reads.history(tenantId, 'only');
    expect(row).toMatchObject({ status: 'skipped', messagesArchived: 0, summarizer: null });
    expect(row?.reason).toMatch(
      /^budget: daily 0\.0000010 USD of the tenant, spent 0\.00, this summary ≈.*: skipped$/,
    );
    expect(row?.messagesAfter).toBe(row?.messagesBefore);
    expect(ctx.fake.requests.length).toBe(before);
  });

  it('clears old tool results instead when the policy says clearToolResults: no LLM call, still smaller', async () => {
    const tenantId = 'thrifty';
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'tools', messages });
    await setPolicy(ctx.tdb.database.db, tenantId, null, {
      strategy: STRATEGY,
      budget: { dailyUsd: 0.000001, onExceeded: 'clearToolResults' },
    });
    const metrics = createWorkerMetrics();
    ctx.startWorker({ metrics });
    const before = ctx.fake.requests.length;

    await compact(tenantId, 'tools');

    const [row] = await ctx.reads.history(tenantId, 'tools');
    expect(row).toMatchObject({
      status: 'applied',
      strategy: 'clearToolResults',
      summarizer: null,
      costUsd: null,
    });
    expect(row?.reason).toMatch(
      /^budget: daily 0\.0000010 USD of the tenant, spent 0\.00, this summary ≈.*: cleared old tool results instead$/,
    );
    expect(row?.blocksCleared).toBeGreaterThan(0);
    expect(row?.tokensAfter).toBeLessThan(row?.tokensBefore ?? 0);
    // Every message stays: the tool output was replaced in place, its original archived.
    expect(row?.messagesAfter).toBe(messages.length);
    expect(ctx.fake.requests.length).toBe(before);
    const counted = await metrics.registry.getSingleMetricAsString('compactor_budget_exceeded_total');
    expect(counted).toContain(
      'compactor_budget_exceeded_total{action="clearToolResults",scope="tenant",period="daily"} 1',
    );
    expect(await ctx.tdb.database.db.select().from(budgetReservations)).toEqual([]);
  });

  it("applies an agent's budget to its sessions only, besides the tenant's", async () => {
    const tenantId = 'agents';
    const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'capped', agentId: 'coder', messages });
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'free', agentId: 'writer', messages });
    await setPolicy(ctx.tdb.database.db, tenantId, null, { strategy: STRATEGY, budget: { monthlyUsd: 100 } });
    await setPolicy(ctx.tdb.database.db, tenantId, 'coder', {
      strategy: STRATEGY,
      budget: { dailyUsd: 0.000001 },
    });
    ctx.startWorker();

    await compact(tenantId, 'capped');
    await compact(tenantId, 'free');

    const [capped] = await ctx.reads.history(tenantId, 'capped');
    const [free] = await ctx.reads.history(tenantId, 'free');
    expect(capped).toMatchObject({ status: 'applied', summarizer: 'extractive' });
    expect(capped?.reason).toMatch(/^budget: daily 0\.0000010 USD of the agent, /);
    expect(free).toMatchObject({ status: 'applied', summarizer: 'anthropic', reason: null });
  });
});

describe('two workers against one tenant budget', () => {
  it('never overshoot it by more than one summary per worker', async () => {
    const tenantId = 'shared-budget';
    const sessions = names('c', 16);
    const budget = 0.05;
    await seed(tenantId, sessions);
    await setPolicy(ctx.tdb.database.db, tenantId, null, {
      strategy: STRATEGY,
      budget: { dailyUsd: budget, onExceeded: 'extractive' },
    });
    // Slow answers keep several summaries in flight at once on both workers.
    for (let i = 0; i < sessions.length; i++) ctx.fake.enqueue({ delayMs: 150 });
    const workers = 2;
    ctx.startWorker({ concurrency: 4 });
    ctx.startWorker({ concurrency: 4 });

    await Promise.all(sessions.map((sessionId) => compact(tenantId, sessionId)));

    const rows = await ledger(tenantId, sessions);
    expect(rows.map((r) => r.status)).toEqual(sessions.map(() => 'applied'));
    const llm = paid(rows);
    expect(llm.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.summarizer === 'extractive')).toBe(true);
    const oneSummary = Math.max(...llm.map((r) => r.costUsd ?? 0));
    expect(spent(rows)).toBeLessThanOrEqual(budget + workers * oneSummary);
    expect(await ctx.tdb.database.db.select().from(budgetReservations)).toEqual([]);
  });
});
