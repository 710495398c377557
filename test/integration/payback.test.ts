/**
 * Compaction that pays for itself, end to end on real Postgres: the predicted payback on the ledger
 * row of a summary and of a clearing, the skip of a compaction a policy's `payback.minRatio` says
 * would not pay (the numbers in its reason, nothing changed), and the measured payback the
 * following `session.run.completed` events record on the compaction's row, a redelivered event
 * counted once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { and, eq } from '../../producer/postgres/orm.ts';
import { type CompactionRow, compactions } from '../../producer/postgres/schema.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { PaybackInputs } from '../../shared/policy/payback.ts';
import { idempotencyKeyOf } from '../../shared/protocol/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { systemClock } from '../../worker/pipeline/clock.ts';
import { type CompactionRequest, runCompaction } from '../../worker/pipeline/pipeline.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { createOpenAISummarizer } from '../../worker/summarizers/openai.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { loadCorpusSession, silentLogger } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true });
const SESSION = 'sweagent__marshmallow-1867-fc';
const db = () => ctx.tdb.database.db;

/** Runs `session.run.completed` as the worker does, in this process, with the given summarizer. */
async function event(
  tenantId: string,
  sessionId: string,
  eventId: string,
  more: Partial<Pick<CompactionRequest, 'strategy' | 'inputTokens' | 'cacheReadTokens'>> = {},
  summarizer = createExtractiveSummarizer(),
) {
  const outcome = await runCompaction(
    {
      reads: ctx.reads,
      writes: ctx.writes,
      leases: ctx.leases,
      summarizers: { primary: summarizer },
      clock: systemClock,
      logger: silentLogger,
    },
    {
      tenantId,
      sessionId,
      trigger: 'event',
      idempotencyKey: idempotencyKeyOf({ tenantId, eventId }),
      eventId,
      ...more,
    },
  );
  if (outcome.row === null) throw new Error('an event is never batched');
  return outcome;
}

async function rowOf(tenantId: string, id: string): Promise<CompactionRow> {
  const [row] = await db()
    .select()
    .from(compactions)
    .where(and(eq(compactions.tenantId, tenantId), eq(compactions.id, id)));
  if (!row) throw new Error(`no ledger row ${id}`);
  return row;
}

async function newSession(tenantId: string, sessionId: string) {
  await createSession(db(), { tenantId, sessionId, messages: await loadCorpusSession(SESSION) });
}

const clearing: Strategy = { type: 'clearToolResults', keep: 1 } as Strategy;

describe('predicted payback', () => {
  it('is recorded on a summary’s row: savings over the expected requests, summary call and cache rewrite', async () => {
    const tenantId = 'pay-summary';
    await newSession(tenantId, 's');
    const summarizer = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: ctx.llm.url,
      model: 'claude-haiku-4-5',
    });
    const strategy = { type: 'summarize', keepRecent: 4, maxSummaryTokens: 1_000 } as Strategy;
    const { row } = await event(tenantId, 's', randomUUID(), { strategy }, summarizer);
    expect(row).toMatchObject({ status: 'applied', summarizer: 'anthropic' });
    const inputs = row.paybackInputs as PaybackInputs;
    expect(inputs).toMatchObject({
      horizon: 'history',
      agentModel: 'claude-sonnet-4-6',
      promptCaching: true,
      summaryModel: 'claude-haiku-4-5',
    });
    expect(inputs.requests).toBeGreaterThan(1);
    expect(inputs.summaryUsd).toBeGreaterThan(0);
    expect(inputs.rewriteUsd).toBeGreaterThan(0);
    expect(inputs.tokensSavedPerRequest).toBeGreaterThan(0);
    expect(row.paybackCostUsd).toBeCloseTo(inputs.summaryUsd + inputs.rewriteUsd, 6);
    expect(row.paybackSavingsUsd).toBeCloseTo(
      inputs.tokensSavedPerRequest * inputs.requests * inputs.savedTokenUsd,
      6,
    );
    expect(row.paybackRatio).toBeCloseTo((row.paybackSavingsUsd ?? 0) / (row.paybackCostUsd ?? 1), 2);
  });

  it('is recorded on a clearing’s row, whose only cost is the cache rewrite', async () => {
    const tenantId = 'pay-clear';
    await newSession(tenantId, 's');
    const { row } = await event(tenantId, 's', randomUUID(), { strategy: clearing });
    expect(row).toMatchObject({ status: 'applied', strategy: 'clearToolResults' });
    const inputs = row.paybackInputs as PaybackInputs;
    expect(inputs).toMatchObject({ summaryUsd: 0, summaryModel: null, horizon: 'history' });
    expect(inputs.rewriteUsd).toBeGreaterThan(0);
    expect(row.paybackCostUsd).toBeCloseTo(inputs.rewriteUsd, 6);
    expect(inputs.tokensSavedPerRequest).toBe((row.tokensBefore ?? 0) - (row.tokensAfter ?? 0));
  });
});

describe('predicted payback on OpenAI', () => {
  it('prices an agent on gpt-5.5 at cached input, its rewrite with no write premium, and the openai summary as estimated', async () => {
    const tenantId = 'pay-openai';
    const fake = new FakeOpenAIChatServer();
    const url = await fake.start();
    try {
      await setPolicy(db(), tenantId, null, {
        strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 1_000 } as Strategy,
        payback: { minRatio: 0, model: 'gpt-5.5' },
      });
      await newSession(tenantId, 's');
      const summarizer = createOpenAISummarizer({ apiKey: 'sk-test', baseURL: url, model: 'gpt-5.4-mini' });
      const { row } = await event(tenantId, 's', randomUUID(), {}, summarizer);
      expect(row).toMatchObject({ status: 'applied', summarizer: 'openai' });
      const inputs = row.paybackInputs as PaybackInputs;
      expect(inputs).toMatchObject({
        agentModel: 'gpt-5.5',
        pricedAs: 'gpt-5.5',
        summaryModel: 'gpt-5.4-mini',
      });
      // gpt-5.5: cached input $0.50, input $5 per MTok, and no cache write premium.
      expect(inputs.savedTokenUsd).toBeCloseTo(0.5 / 1_000_000, 12);
      expect(inputs.rewriteUsd).toBeCloseTo((inputs.tokensAfter * 4.5) / 1_000_000, 9);
      // The summary call as the openai summarizer sized it: over what it then cost, not far over.
      const recorded = row.costUsd ?? 0;
      expect(recorded).toBeGreaterThan(0);
      expect(inputs.summaryUsd).toBeGreaterThanOrEqual(recorded);
      expect(inputs.summaryUsd).toBeLessThan(3 * recorded);
    } finally {
      await fake.close();
    }
  });
});

describe('a policy’s payback.minRatio', () => {
  it('skips a compaction that would not pay back, with the numbers in its reason, changing nothing', async () => {
    const tenantId = 'pay-skip';
    await setPolicy(db(), tenantId, null, {
      strategy: clearing,
      payback: { minRatio: 2, horizonRequests: 1 },
    });
    await newSession(tenantId, 's');
    const before = await ctx.reads.loadCounters(tenantId, 's');
    const { row } = await event(tenantId, 's', randomUUID());
    expect(row.status).toBe('skipped');
    expect(row.reason).toMatch(
      /^payback: predicted ratio [0-9.]+ < minRatio 2: saves \d+ tokens × 1 requests \(policy\) ≈ [0-9.]+ USD at claude-sonnet-4-6 cache reads; costs [0-9.]+ USD \(summary 0\.0000, cache rewrite [0-9.]+\)$/,
    );
    expect(row.paybackRatio).toBeLessThan(2);
    expect(await ctx.reads.loadCounters(tenantId, 's')).toEqual(before);
    // Asked for by hand, it runs whatever it costs.
    const manual = await ctx.compactInProcess({ tenantId, sessionId: 's', strategy: clearing });
    expect(manual.row?.status).toBe('applied');
  });
});

describe('measured payback', () => {
  it('adds up the following runs’ reported prompts on the compaction’s row, each event once', async () => {
    const tenantId = 'pay-measure';
    await newSession(tenantId, 's');
    const first = randomUUID();
    const { row: applied } = await event(tenantId, 's', first, { strategy: clearing, inputTokens: 90_000 });
    expect(applied.status).toBe('applied');
    expect(applied.measuredRequests).toBeNull();
    const saved = (applied.paybackInputs as PaybackInputs).tokensSavedPerRequest;
    const quiet = { type: 'none' } as Strategy;
    const second = randomUUID();
    await event(tenantId, 's', second, { strategy: quiet, inputTokens: 30_000, cacheReadTokens: 25_000 });
    await event(tenantId, 's', randomUUID(), { strategy: quiet, inputTokens: 32_000, cacheReadTokens: 0 });
    // Redelivered: the second event, and the one that asked for the compaction. Neither counts again.
    expect((await event(tenantId, 's', second, { strategy: quiet, inputTokens: 30_000 })).status).toBe(
      'duplicate',
    );
    await event(tenantId, 's', first, { strategy: clearing, inputTokens: 90_000 });
    const row = await rowOf(tenantId, applied.id);
    expect(row).toMatchObject({
      measuredRequests: 2,
      measuredTokensSent: 62_000,
      measuredTokensWithout: 62_000 + 2 * saved,
    });
    // One request read the cache ($0.30/MTok), one missed it ($3/MTok).
    expect(row.measuredSavingsUsd).toBeCloseTo((saved * 0.3 + saved * 3) / 1e6, 6);
    expect(row.measuredRatio).toBeCloseTo((row.measuredSavingsUsd ?? 0) / (row.paybackCostUsd ?? 1), 2);
    expect(row.measuredEventIds).toHaveLength(2);
  });
});
