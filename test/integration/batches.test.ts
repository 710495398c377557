/**
 * Batch summaries for sweeps through the Message Batches API of the fake server: queued by the
 * sweep's jobs, submitted as one batch, applied when it ends with the same fencing and
 * idempotency as online compactions.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { systemClock } from '../../worker/pipeline/clock.ts';
import { runCompaction } from '../../worker/pipeline/pipeline.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { pollBatches } from '../../worker/queue/batches/batches.ts';
import { runSweep } from '../../worker/queue/sweeps/sweep.ts';
import type { Services } from '../../worker/runtime/services.ts';
import { loadCorpusSession, silentLogger, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { transcript } from '../support/transcript-builder.ts';

const ctx = useIntegration({ anthropic: true });
/** Services of this process, for polling batches and compacting by hand beside the worker. */
let services: Services;
const tenantId = 'batchy';
const sessions = ['a', 'b', 'c', 'd'];

beforeAll(async () => {
  services = ctx.services();
  ctx.startWorker({ concurrency: 4 });
  await setPolicy(ctx.tdb.database.db, tenantId, null, {
    strategy: { type: 'summarize', keepRecent: 8 },
    triggers: { maxMessages: 20 },
    batch: true,
  });
  for (const sessionId of sessions) {
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId,
      messages: await loadCorpusSession('sweagent__ctf-web-i_got_id'),
    });
  }
});

const batchRows = () =>
  ctx.tdb.database.sql<{ session_id: string; status: string; reason: string | null }[]>`
    select session_id, status, reason from summary_batches where tenant_id = ${tenantId} order by session_id`;

/** Sessions whose batch-applied compaction was told (`onApplied`), in order. */
const told: string[] = [];

function poll() {
  const { batches } = services;
  if (!batches) throw new Error('an Anthropic key is configured, so batches exist');
  return pollBatches({
    db: services.database.db,
    reads: services.reads,
    writes: services.writes,
    batches,
    logger: silentLogger,
    onApplied: async (row) => {
      told.push(row.sessionId);
    },
  });
}

describe('batch summaries for sweeps', () => {
  it('queues, submits one batch, and applies each summary once it ends, fenced and at half price', async () => {
    await runSweep(ctx.tdb.database.db, ctx.producer);
    await waitFor(async () => (await batchRows()).length === sessions.length);
    expect((await batchRows()).map((r) => r.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
    expect(ctx.fake.requests).toHaveLength(0); // nothing paid for yet

    // A repeated sweep does not queue the same session version twice.
    await runSweep(ctx.tdb.database.db, ctx.producer);
    await waitFor(async () =>
      Object.values(await ctx.producer.queue.getJobCounts('waiting', 'active')).every((n) => n === 0),
    );
    expect(await batchRows()).toHaveLength(sessions.length);

    ctx.fake.enqueue('ok', 'ok', { status: 500 }, 'ok');
    const first = await poll();
    expect(first).toMatchObject({ submitted: 4, running: 1, applied: 0 });
    expect(ctx.fake.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    const created = ctx.fake.requests[0]?.body as { requests: unknown[] } | undefined;
    expect(created?.requests).toHaveLength(4);

    // Meanwhile session d is compacted by hand: its batch summary must be fenced off.
    await runCompaction(
      { ...services, clock: systemClock },
      {
        tenantId,
        sessionId: 'd',
        strategy: { type: 'slidingWindow', maxMessages: 10 },
        trigger: 'manual',
        idempotencyKey: `manual:${randomUUID()}`,
        eventId: null,
      },
    );

    const second = await poll();
    expect(second).toMatchObject({ applied: 2, failed: 1, skipped: 1, running: 0 });
    // Each applied compaction is told (session.compacted), the skipped and failed ones are not.
    expect(told.sort()).toEqual(['a', 'b']);
    const rows = await batchRows();
    expect(rows.map((r) => [r.session_id, r.status])).toEqual([
      ['a', 'applied'],
      ['b', 'applied'],
      ['c', 'failed'],
      ['d', 'skipped'],
    ]);
    expect(rows[3]?.reason).toMatch(
      /compacted since the sweep saw it|the session changed while the batch ran/,
    );

    const ledger = await ctx.tdb.database.sql<
      {
        session_id: string;
        status: string;
        summarizer: string | null;
        cost_usd: string | null;
        idempotency_key: string | null;
      }[]
    >`
      select session_id, status, summarizer, cost_usd, idempotency_key from compactions
      where tenant_id = ${tenantId} and trigger = 'sweep' order by session_id, status`;
    const applied = ledger.filter((r) => r.status === 'applied');
    expect(applied.map((r) => [r.session_id, r.summarizer])).toEqual([
      ['a', 'anthropic-batch'],
      ['b', 'anthropic-batch'],
    ]);
    expect(Number(applied[0]?.cost_usd)).toBeGreaterThan(0);
    expect(ledger.filter((r) => r.session_id === 'c').map((r) => r.status)).toEqual(['failed']);

    // Polling again changes nothing: every request is settled.
    expect(await poll()).toMatchObject({ submitted: 0, applied: 0, failed: 0, skipped: 0, running: 0 });
    const report = await audit(ctx.tdb.database.db, tenantId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(64 * sessions.length);
  });

  it('holds a batch summary to minFidelity: under it, nothing is committed (skip) or extractive stands in (fallback)', async () => {
    const strict = { type: 'summarize', keepRecent: 8, minFidelity: 0.9 } as const;
    for (const [tenant, onLowFidelity] of [
      ['strict-skip', 'skip'],
      ['strict-fallback', 'fallback'],
      ['strict-retry', 'retry'],
    ] as const) {
      await setPolicy(ctx.tdb.database.db, tenant, null, {
        strategy: { ...strict, onLowFidelity },
        triggers: { maxMessages: 20 },
        batch: true,
      });
      await createSession(ctx.tdb.database.db, { tenantId: tenant, sessionId: 'lossy', messages: ruled() });
    }
    const queued = () =>
      ctx.tdb.database.sql<{ tenant_id: string; status: string; reason: string | null }[]>`
        select tenant_id, status, reason from summary_batches
        where tenant_id like 'strict-%' order by tenant_id`;
    await runSweep(ctx.tdb.database.db, ctx.producer);
    await waitFor(async () => (await queued()).length === 3);
    // The model answers both with a checkpoint that keeps nothing of the leaving messages.
    const lossy = { toolInput: { ...emptyCheckpoint(), goal: 'something happened' } };
    ctx.fake.enqueue(lossy, lossy, lossy);
    await poll();
    await poll();
    const rows = await queued();
    expect(rows.map((r) => [r.tenant_id, r.status])).toEqual([
      ['strict-fallback', 'applied'],
      ['strict-retry', 'failed'],
      ['strict-skip', 'skipped'],
    ]);
    expect(rows[1]?.reason).toMatch(/below minFidelity 0\.9 .*: not committed; the next sweep tries again/);
    expect(rows[2]?.reason).toMatch(
      /fidelity 0\.\d+ is below minFidelity 0\.9 .*instructions 0\/2.*: skipped/,
    );

    const ledger = await ctx.tdb.database.sql<
      {
        tenant_id: string;
        status: string;
        summarizer: string | null;
        fidelity: number | null;
        reason: string;
      }[]
    >`
      select tenant_id, status, summarizer, fidelity, reason from compactions
      where tenant_id like 'strict-%' order by tenant_id`;
    expect(ledger.map((r) => [r.tenant_id, r.status, r.summarizer])).toEqual([
      ['strict-fallback', 'applied', 'extractive'],
      ['strict-retry', 'failed', 'anthropic-batch'],
      ['strict-skip', 'skipped', 'anthropic-batch'],
    ]);
    expect(Number(ledger[0]?.fidelity)).toBeGreaterThanOrEqual(0.9);
    expect(ledger[0]?.reason).toMatch(/summarized by extractive instead/);
    expect(Number(ledger[2]?.fidelity)).toBeLessThan(0.9);
    // Skipped or failed: the session's history is untouched.
    const live = await ctx.tdb.database.sql<{ tenant_id: string; n: number }[]>`
      select tenant_id, count(*)::int as n from messages
      where tenant_id in ('strict-skip', 'strict-retry') group by tenant_id order by tenant_id`;
    expect(live.map((r) => [r.tenant_id, r.n])).toEqual([
      ['strict-retry', ruled().length],
      ['strict-skip', ruled().length],
    ]);
  });
});

/** A session whose first request states two rules, then works on files, then asks for more. */
function ruled() {
  const t = transcript().user(
    'Fix the flaky payment test. Never edit files under migrations/. Always run make lint before you commit.',
  );
  for (let i = 0; i < 10; i++)
    t.bash(`python -m pytest tests/test_payments_${i}.py -q`, `${i + 1} passed`, 0);
  t.user('Now update docs/payments.md to match.');
  // Output long enough that a summary, introduction included, is smaller than what leaves.
  const page = 'Payments are captured when the order ships.\n'.repeat(4);
  for (let i = 0; i < 8; i++) t.bash(`sed -n ${i * 10},${i * 10 + 9}p docs/payments.md`, page, 0);
  // Token counts estimated on write, as for a real agent's messages (the builder sets 1).
  return t.messages.map((m) => ({
    seq: m.seq,
    role: m.role,
    kind: m.kind === 'summary' ? 'message' : m.kind,
    content: m.content,
    toolCallId: m.toolCallId,
    toolName: m.toolName,
  }));
}
