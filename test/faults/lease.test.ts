/**
 * Fault injection: the per-session Redis lease lost while a job runs (the key deleted behind the
 * worker's back), so a second job for the same session runs too. The lease only saves money: the
 * version fence and the idempotency key in the apply transaction keep the data right.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { faultSuite, logged, until } from './harness.ts';

const suite = faultSuite();
const FENCE_LOG = 'fence rejected a stale plan; re-planning';

describe('the lease lost while a job runs', () => {
  it('noticed by its renewal: the first job aborts its LLM call, retries, re-plans; one compaction applies', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    const w = s.startWorker({ concurrency: 2 }); // lease TTL 2 s: renewed (and checked) every 666 ms
    s.gate.hold(1);
    const first = await s.addJob('s1');
    await until(() => s.gate.held === 1);

    expect(await s.dropLease('s1')).toBe(true);
    const second = await s.addJob('s1');
    const r2 = await s.completed(second.jobId);
    const r1 = await s.completed(first.jobId);

    expect(r2).toMatchObject({ status: 'applied', ledgerStatus: 'applied' });
    // The first attempt failed cleanly (its call aborted when the renewal found the lease gone);
    // the retry saw the compacted session and decided nothing more was to do.
    expect(r1.ledgerStatus).toBe('skipped');
    expect(r1.attemptsMade).toBeGreaterThanOrEqual(2);
    await logged(w, 'job failed', (l) => l.jobId === first.jobId);
    const rows = await s.ledger('s1');
    expect(rows.filter((r) => r.status === 'applied').map((r) => r.eventId)).toEqual([second.eventId]);
    expect(s.llmCalls()).toBe(2);
    await s.expectInvariants();
  });

  it('unnoticed before apply: the fence rejects the stale plan, the job re-plans; one compaction applies', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    // A long lease: its first renewal comes long after the held answer, so the loss goes unnoticed.
    const w = s.startWorker({ concurrency: 2, env: { COMPACTOR_LEASE_TTL_MS: '120000' } });
    s.gate.hold(1);
    const first = await s.addJob('s1');
    await until(() => s.gate.held === 1);

    expect(await s.dropLease('s1')).toBe(true);
    const second = await s.addJob('s1');
    expect(await s.completed(second.jobId)).toMatchObject({ status: 'applied', ledgerStatus: 'applied' });
    expect(w.logs().some((l) => l.msg === FENCE_LOG)).toBe(false);

    s.gate.release(); // the first job's summary arrives, planned on the version before the second's
    const r1 = await s.completed(first.jobId);
    expect(r1).toMatchObject({ status: 'skipped', ledgerStatus: 'skipped', attemptsMade: 1 });
    const fenced = await logged(w, FENCE_LOG);
    expect(fenced.sessionId).toBe('s1');
    const rows = await s.ledger('s1');
    expect(rows.filter((r) => r.status === 'applied').map((r) => r.eventId)).toEqual([second.eventId]);
    expect(s.llmCalls()).toBe(2);
    await s.expectInvariants();
  });

  it('the same event twice, both past the lease and waiting in apply: one effect; appends meanwhile survive', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    const w = s.startWorker({ concurrency: 2 });
    const row = await s.holdSessionRow('s1');
    const eventId = randomUUID();
    const x = await s.addJob('s1', { eventId, jobId: `${eventId}-x` });
    await s.lockWaits(w, 1);
    expect(await s.dropLease('s1')).toBe(true);
    const y = await s.addJob('s1', { eventId, jobId: `${eventId}-y` });
    await s.lockWaits(w, 2);
    // The agent appends while both wait; then the lock goes and they apply one after the other.
    const appended = await row.append(['a request that arrived meanwhile', 'and its answer']);
    await row.release('commit');

    // Which of the two gets the row first is Postgres' choice (the holder updated the row, so the
    // waiters race for its new version); the other finds the key in the ledger inside its transaction.
    const results = [await s.completed(x.jobId), await s.completed(y.jobId)];
    const applied = results.find((r) => r.status === 'applied');
    expect(applied).toMatchObject({ ledgerStatus: 'applied', attemptsMade: 1 });
    // Recognised by the idempotency key inside the transaction: no re-plan, no second summary.
    expect(results.find((r) => r !== applied)).toMatchObject({
      status: 'duplicate',
      ledgerStatus: 'applied',
      compactionId: applied?.compactionId,
      attemptsMade: 1,
    });
    expect(w.logs().some((l) => l.msg === FENCE_LOG)).toBe(false);
    expect((await s.ledger('s1')).map((r) => r.status)).toEqual(['applied']);
    expect(s.llmCalls()).toBe(2);
    const live = await s.sql<{ seq: number }[]>`
      select seq::int as seq from messages where tenant_id = ${s.tenantId} and session_id = 's1'
        and seq = any(${appended}::int[])`;
    expect(live.map((m) => m.seq)).toEqual(appended);
    await s.expectInvariants();
  });
});
