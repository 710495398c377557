/**
 * Fault injection: a worker process SIGKILLed in the middle of a job (during the LLM call, during
 * the apply transaction). A second worker recovers the stalled job through BullMQ's stalled-job
 * check; the event applies exactly once and nothing is half-written.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { faultSuite, until } from './harness.ts';

const suite = faultSuite();

describe('a worker killed with SIGKILL', () => {
  it('during the summary call: another worker recovers the job; applied once', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    const w1 = s.startWorker();
    s.gate.hold(1);
    const { jobId, eventId } = await s.addJob('s1');
    await until(() => s.gate.held === 1);
    expect(await s.queue.getJobState(jobId)).toBe('active');

    w1.kill('SIGKILL');
    expect((await w1.done).signal).toBe('SIGKILL');
    expect(await s.ledger('s1')).toEqual([]);

    s.startWorker();
    const result = await s.completed(jobId);
    expect(result).toMatchObject({ status: 'applied', ledgerStatus: 'applied' });
    const rows = await s.rowsFor(eventId);
    expect(rows.map((r) => r.status)).toEqual(['applied']);
    expect(rows[0]?.summarizer).toBe('anthropic');
    // The killed worker's call was paid for and lost; the recovering worker made its own.
    expect(s.llmCalls()).toBe(2);
    await s.expectInvariants();
  });

  it.each([
    ['waiting for the session row lock (first statement)', 'row'],
    ['waiting on its ledger insert (last statement, with the counters; archive and summary done)', 'ledger'],
  ] as const)('during apply, %s: nothing half-written; recovered; applied once', async (_, where) => {
    const s = await suite.scenario();
    const imported = await s.seed('s1');
    const w1 = s.startWorker();
    const eventId = randomUUID();
    const hold = where === 'row' ? await s.holdSessionRow('s1') : await s.holdLedgerKey(eventId, 's1');
    const { jobId } = await s.addJob('s1', { eventId });
    const [waiting] = await s.lockWaits(w1);
    expect(waiting?.query).toMatch(where === 'row' ? /for update/i : /insert into compactions/i);

    w1.kill('SIGKILL');
    await w1.done;
    await hold.release('rollback');
    // Postgres ends the dead client's transaction (rolled back) once the lock lets it go.
    await s.noBackends(w1);
    expect(await s.ledger('s1')).toEqual([]);
    const untouched = await s.expectInvariants();
    expect(untouched).toMatchObject({ liveOriginals: imported, archivedOriginals: 0, liveSummaries: 0 });

    s.startWorker();
    expect(await s.completed(jobId)).toMatchObject({ status: 'applied' });
    expect((await s.rowsFor(eventId)).map((r) => r.status)).toEqual(['applied']);
    expect(s.llmCalls()).toBe(2);
    const report = await s.expectInvariants();
    expect(report.liveSummaries).toBe(1);
    expect(report.archivedOriginals).toBeGreaterThan(0);
  });
});
