/**
 * Releases held back for the next take (worker/redis/deferred-releases.ts): a take gets them oldest
 * first and they are not sent; a claim takes out one item it matches; those no take got go in one
 * send once the delay has passed; a take that failed puts its items back; flush sends at once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deferredReleases } from '../../worker/redis/deferred-releases.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('deferred releases', () => {
  it('hands them to the next take, oldest first, and sends nothing then', async () => {
    const sent: number[][] = [];
    const releases = deferredReleases<number>(async (items) => sent.push(items), 20);
    releases.add(1);
    releases.add(2);
    releases.add(3);
    expect(releases.take(2)).toEqual([1, 2]);
    expect(releases.take()).toEqual([3]);
    await vi.advanceTimersByTimeAsync(100);
    expect(sent).toEqual([]);
  });

  it('hands out the oldest item a claim matches, and sends the rest after the delay', async () => {
    const sent: number[][] = [];
    const releases = deferredReleases<number>(async (items) => sent.push(items), 20);
    releases.add(1);
    releases.add(2);
    releases.add(4);
    expect(releases.claim((n) => n % 2 === 0)).toBe(2);
    expect(releases.claim((n) => n > 10)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(20);
    expect(sent).toEqual([[1, 4]]);
    // The last one claimed: nothing is left to send.
    releases.add(5);
    expect(releases.claim((n) => n === 5)).toBe(5);
    await vi.advanceTimersByTimeAsync(20);
    expect(sent).toEqual([[1, 4]]);
  });

  it('sends those no take got in one call once the delay has passed, not before', async () => {
    const sent: number[][] = [];
    const releases = deferredReleases<number>(async (items) => sent.push(items), 20);
    releases.add(1);
    await vi.advanceTimersByTimeAsync(10);
    releases.add(2);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(10);
    expect(sent).toEqual([[1, 2]]);
    // A take that leaves some waiting keeps the clock running for them.
    releases.add(3);
    releases.add(4);
    expect(releases.take(1)).toEqual([3]);
    await vi.advanceTimersByTimeAsync(20);
    expect(sent).toEqual([[1, 2], [4]]);
  });

  it('puts back what a failed take held, to be sent after the delay', async () => {
    const sent: string[][] = [];
    const releases = deferredReleases<string>(async (items) => sent.push(items), 20);
    releases.add('a');
    const taken = releases.take();
    releases.restore(taken);
    await vi.advanceTimersByTimeAsync(20);
    expect(sent).toEqual([['a']]);
  });

  it('sends everything at once when flushed, and a failed send rejects nothing', async () => {
    const releases = deferredReleases<number>(async () => {
      throw new Error('connection lost');
    }, 60_000);
    releases.add(1);
    await expect(releases.flush()).resolves.toBeUndefined();
    const sent: number[][] = [];
    const working = deferredReleases<number>(async (items) => sent.push(items), 60_000);
    working.add(7);
    await working.flush();
    expect(sent).toEqual([[7]]);
    expect(() => deferredReleases(async () => {}, -1)).toThrow(/delayMs must be ≥ 0/);
  });
});
