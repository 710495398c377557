/**
 * Adds grouped while one is in flight (worker/queue/grouped-add.ts): the first add goes alone at
 * once, the adds asked for meanwhile go together in one addBulk when it is back, each caller learns
 * its own group's outcome, and a group of one goes by add.
 */
import { describe, expect, it } from 'vitest';
import { type GroupedJob, groupedAdder } from '../../worker/queue/grouped-add.ts';

/** A queue whose calls wait until `settle` answers them, in order. */
function slowQueue() {
  const calls: { kind: 'add' | 'addBulk'; ids: string[]; answer: (error?: Error) => void }[] = [];
  const call = (kind: 'add' | 'addBulk', ids: string[]) =>
    new Promise<unknown>((resolve, reject) => {
      calls.push({ kind, ids, answer: (error) => (error ? reject(error) : resolve(undefined)) });
    });
  return {
    calls,
    queue: {
      add: (_name: string, _data: number, opts?: { jobId?: string }) => call('add', [opts?.jobId ?? '']),
      addBulk: (jobs: GroupedJob<number>[]) =>
        call(
          'addBulk',
          jobs.map((j) => j.opts?.jobId ?? ''),
        ),
    },
  };
}

const job = (id: string): GroupedJob<number> => ({ name: 'session.compacted', data: 1, opts: { jobId: id } });
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('grouped adds', () => {
  it('sends the first at once, alone, and those asked for meanwhile together after it', async () => {
    const { calls, queue } = slowQueue();
    const adder = groupedAdder(queue);
    const settled: string[] = [];
    const first = adder.add(job('a')).then(() => settled.push('a'));
    expect(calls.map((c) => [c.kind, c.ids])).toEqual([['add', ['a']]]);
    const later = ['b', 'c', 'd'].map((id) => adder.add(job(id)).then(() => settled.push(id)));
    await tick();
    expect(calls).toHaveLength(1);
    calls[0]?.answer();
    await first;
    await tick();
    expect(calls.map((c) => [c.kind, c.ids])).toEqual([
      ['add', ['a']],
      ['addBulk', ['b', 'c', 'd']],
    ]);
    expect(settled).toEqual(['a']);
    calls[1]?.answer();
    await Promise.all(later);
    expect(settled).toEqual(['a', 'b', 'c', 'd']);
  });

  it("rejects every add of a failed group with its error, and not another group's adds", async () => {
    const { calls, queue } = slowQueue();
    const adder = groupedAdder(queue);
    const first = adder.add(job('a'));
    const second = adder.add(job('b'));
    const third = adder.add(job('c'));
    calls[0]?.answer();
    await first;
    await tick();
    calls[1]?.answer(new Error('connection lost'));
    await expect(second).rejects.toThrow('connection lost');
    await expect(third).rejects.toThrow('connection lost');
    // The next add goes alone again.
    const fourth = adder.add(job('d'));
    expect(calls[2]?.kind).toBe('add');
    calls[2]?.answer();
    await expect(fourth).resolves.toBeUndefined();
  });
});
