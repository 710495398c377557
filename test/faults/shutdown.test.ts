/**
 * Fault injection: shutting a worker down with signals. The first SIGTERM lets the active jobs
 * finish and takes no new one (exit 0); a second signal forces the exit (non-zero) and the
 * unfinished job is recovered by another worker, applied once.
 */
import { describe, expect, it } from 'vitest';
import { faultSuite, logged, until } from './harness.ts';

const suite = faultSuite();

describe('worker shutdown', () => {
  it('SIGTERM: active jobs finish, no new job starts, exit 0; the queued event waits for the next worker', async () => {
    const s = await suite.scenario();
    for (const id of ['a', 'b', 'c']) await s.seed(id);
    const w1 = s.startWorker({ concurrency: 2 });
    s.gate.hold(2);
    const a = await s.addJob('a');
    const b = await s.addJob('b');
    await until(() => s.gate.held === 2);

    w1.kill('SIGTERM');
    await logged(w1, 'signal: finishing active jobs');
    const c = await s.addJob('c');
    s.gate.release();
    const exit = await w1.done;
    expect(exit.code, exit.stderr).toBe(0);
    expect(await s.queue.getJobState(a.jobId)).toBe('completed');
    expect(await s.queue.getJobState(b.jobId)).toBe('completed');
    expect(await s.queue.getJobState(c.jobId)).toBe('waiting');
    expect(s.llmCalls()).toBe(2);

    s.startWorker();
    expect(await s.completed(c.jobId)).toMatchObject({ status: 'applied' });
    for (const e of [a, b, c]) expect((await s.rowsFor(e.eventId)).map((r) => r.status)).toEqual(['applied']);
    expect(s.llmCalls()).toBe(3);
    await s.expectInvariants();
  });

  it('a second signal forces the exit (non-zero); another worker recovers the job, applied once', async () => {
    const s = await suite.scenario();
    await s.seed('s1');
    const w1 = s.startWorker();
    s.gate.hold(1);
    const { jobId, eventId } = await s.addJob('s1');
    await until(() => s.gate.held === 1);

    w1.kill('SIGTERM');
    await logged(w1, 'signal: finishing active jobs');
    w1.kill('SIGTERM');
    const exit = await w1.done;
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(await s.queue.getJobState(jobId)).not.toBe('completed');
    expect(await s.ledger('s1')).toEqual([]);

    s.startWorker();
    expect(await s.completed(jobId)).toMatchObject({ status: 'applied' });
    expect((await s.rowsFor(eventId)).map((r) => r.status)).toEqual(['applied']);
    expect(s.llmCalls()).toBe(2);
    await s.expectInvariants();
  });
});
