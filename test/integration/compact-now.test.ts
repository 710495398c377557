/**
 * Compact and wait: `producer.compactNow` enqueues a manual compaction as a job of its own and
 * resolves with its outcome once a worker settled it; without a worker it answers "still running"
 * with the job id when its timeout passes, and the job runs later. An event for the same session
 * at the same moment is applied at most once, beside it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'now';

async function session(sessionId: string) {
  const messages = await loadCorpusSession('sweagent__marshmallow-1867-fc');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  return messages.length;
}

async function ledger(sessionId: string) {
  return ctx.tdb.database.sql<{ status: string; idempotency_key: string }[]>`
    select status, idempotency_key from compactions
    where tenant_id = ${tenantId} and session_id = ${sessionId} order by created_at`;
}

describe('compactNow', () => {
  it('answers "running" with the job id when no worker settles it in time; the job runs later', async () => {
    await session('later');
    const outcome = await ctx.producer.compactNow(
      { tenantId, sessionId: 'later', strategy: { type: 'slidingWindow', maxMessages: 10 } },
      { timeoutMs: 300 },
    );
    expect(outcome.state).toBe('running');
    // Waiting, in BullMQ's prioritized set: every compaction job carries its tenant's fair priority.
    expect(await ctx.producer.queue.getJobState(outcome.jobId)).toBe('prioritized');
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    await waitFor(async () => (await ctx.producer.queue.getJobState(outcome.jobId)) === 'completed', 20_000);
    expect((await ledger('later')).map((r) => r.status)).toEqual(['applied']);
  });

  it('resolves with the applied compaction, though the triggers would not fire', async () => {
    const count = await session('now');
    const outcome = await ctx.producer.compactNow(
      { tenantId, sessionId: 'now', strategy: { type: 'slidingWindow', maxMessages: 10 } },
      { timeoutMs: 20_000 },
    );
    if (outcome.state !== 'settled') throw new Error('not settled in 20 s');
    expect(outcome.result).toMatchObject({ status: 'applied', messagesBefore: count });
    // The newest 10 stay, with the pinned messages and tool pairs the window keeps whole.
    expect(outcome.result.messagesAfter).toBeGreaterThanOrEqual(10);
    expect(outcome.result.messagesAfter).toBeLessThan(count);
    const [row] = await ledger('now');
    expect(jobIdOf(tenantId, row?.idempotency_key.replace(`event:${tenantId}:`, '') ?? '')).toBe(
      outcome.jobId,
    );
    // A producer given the database answers with the ledger row itself.
    expect(outcome.compaction).toMatchObject({
      id: outcome.result.compactionId,
      status: 'applied',
      idempotencyKey: row?.idempotency_key,
      messagesBefore: count,
    });
  });

  it('runs beside an event for the same session: each key applied at most once', async () => {
    await session('both');
    const eventId = randomUUID();
    const [now] = await Promise.all([
      ctx.producer.compactNow(
        { tenantId, sessionId: 'both', strategy: { type: 'slidingWindow', maxMessages: 20 } },
        { timeoutMs: 20_000 },
      ),
      ctx.producer.runCompleted({
        eventId,
        tenantId,
        sessionId: 'both',
        trigger: 'manual',
        strategy: { type: 'slidingWindow', maxMessages: 10 },
      }),
    ]);
    expect(now.state).toBe('settled');
    await waitFor(
      async () => (await ctx.producer.queue.getJobState(jobIdOf(tenantId, eventId))) === 'completed',
      20_000,
    );
    const rows = await ledger('both');
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(2);
    expect(rows.every((r) => r.status === 'applied' || r.status === 'skipped')).toBe(true);
  });

  it('refuses a bad target, naming the field, and enqueues nothing', async () => {
    const before = await ctx.producer.queue.count();
    await expect(ctx.producer.compactNow({ tenantId, sessionId: 'a:b c' })).rejects.toThrow(/sessionId/);
    expect(await ctx.producer.queue.count()).toBe(before);
  });
});
