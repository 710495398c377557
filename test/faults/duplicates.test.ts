/**
 * Fault injection: redelivery. The same event delivered twice (in a row, and at once, as jobs with
 * different ids but the same eventId, hence the same idempotency key) has exactly one effect; a
 * burst of events for one session coalesces into one active and one waiting job.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { faultSuite, SUMMARIZE, sample } from './harness.ts';

const suite = faultSuite();

describe('the same event delivered twice', () => {
  it('in a row: the second delivery is a duplicate; one effect, one LLM call', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    s.startWorker({ concurrency: 2 });
    const eventId = randomUUID();
    const a = await s.addJob('s1', { eventId, jobId: `${eventId}-1` });
    const ra = await s.completed(a.jobId);
    expect(ra).toMatchObject({ status: 'applied', ledgerStatus: 'applied' });
    const b = await s.addJob('s1', { eventId, jobId: `${eventId}-2` });
    const rb = await s.completed(b.jobId);
    expect(rb).toMatchObject({ status: 'duplicate', ledgerStatus: 'applied', compactionId: ra.compactionId });
    expect((await s.ledger('s1')).map((r) => r.status)).toEqual(['applied']);
    expect(s.llmCalls()).toBe(1);
    await s.expectInvariants();
  });

  it('at once, on two workers: one applies, the other is a duplicate; one LLM call', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    s.startWorker();
    s.startWorker();
    const eventId = randomUUID();
    const jobs = await Promise.all(
      ['1', '2'].map((n) => s.addJob('s1', { eventId, jobId: `${eventId}-${n}` })),
    );
    const results = await Promise.all(jobs.map((j) => s.completed(j.jobId)));
    expect(results.map((r) => r.status).sort()).toEqual(['applied', 'duplicate']);
    expect(new Set(results.map((r) => r.compactionId)).size).toBe(1);
    expect((await s.ledger('s1')).map((r) => r.status)).toEqual(['applied']);
    expect(s.llmCalls()).toBe(1);
    await s.expectInvariants();
  });
});

describe('a burst of events for one session', () => {
  it('100 events while its job is active: at most one active and one waiting job; one more run', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    const w = s.startWorker({ concurrency: 2 });
    const event = (eventId: string) => ({
      eventId,
      tenantId: s.tenantId,
      sessionId: 's1',
      strategy: SUMMARIZE,
    });
    const row = await s.holdSessionRow('s1'); // keeps the first job active, waiting in apply
    const e0 = randomUUID();
    expect(await s.producer.runCompleted(event(e0))).toEqual({ jobId: s.job(e0), coalesced: false });
    await s.lockWaits(w);

    const counts = () => s.queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
    const sampler = sample(counts);
    const burst = Array.from({ length: 100 }, () => randomUUID());
    const results = [];
    for (const id of burst) results.push(await s.producer.runCompleted(event(id)));
    expect(results.every((r) => r.coalesced && r.jobId === s.job(e0))).toBe(true);
    await row.release();
    const last = burst[burst.length - 1] as string;
    expect(await s.completed(s.job(e0))).toMatchObject({ status: 'applied', ledgerStatus: 'applied' });
    // keepLastIfActive: the burst's last event became the one next job.
    expect((await s.completed(s.job(last))).status).not.toBe('duplicate');
    const samples = await sampler.stop();
    samples.push(await counts());

    expect(samples.some((c) => c.active === 1)).toBe(true);
    const worst = samples.reduce<{ active: number; pending: number }>(
      (m, c) => ({
        active: Math.max(m.active, c.active ?? 0),
        pending: Math.max(m.pending, (c.waiting ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0)),
      }),
      { active: 0, pending: 0 },
    );
    expect(worst.active).toBeLessThanOrEqual(1);
    expect(worst.pending).toBeLessThanOrEqual(1);
    const completed = await s.queue.getJobs('completed');
    expect(completed.map((j) => j.id).sort()).toEqual([s.job(e0), s.job(last)].sort());
    const rows = await s.ledger('s1');
    expect(rows.filter((r) => r.status === 'applied').length).toBeLessThanOrEqual(2);
    expect(rows.map((r) => r.eventId).sort()).toEqual([e0, last].sort());
    expect(s.llmCalls()).toBeLessThanOrEqual(2);
    console.info(
      `burst: ${samples.length} samples, ledger ${rows.map((r) => r.status)}, ${s.llmCalls()} LLM call(s)`,
    );
    await s.expectInvariants();
  });
});
