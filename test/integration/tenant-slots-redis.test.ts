/**
 * The tenants' worker slots on Redis (worker/redis/tenant-slots.ts): a released slot is given back
 * by the next take, in the same script, before the tenant's slots are counted; with no take it is
 * given back alone once its delay has passed, and `flush` gives back whatever still waits. A slot
 * granted while its tenant was alone passes to the tenant's next job with no take, until a take is
 * refused.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseJobPriority, takeJobPriority } from '../../producer/redis/tenant-backlog.ts';
import { createTenantSlots } from '../../worker/redis/tenant-slots.ts';
import { REDIS_URL } from '../support/env.ts';
import { cleanRedis } from '../support/fixtures.ts';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `test-slots-${randomUUID()}`;
const slotsOf = (tenant: string) => redis.zcard(`${prefix}:active:${tenant}`);

afterAll(async () => {
  await cleanRedis(prefix);
  redis.disconnect();
});

describe('tenant slots on Redis', () => {
  it('gives a released slot back with the next take, or alone once no take came', async () => {
    const releaseDelayMs = 300;
    const slots = createTenantSlots(redis, { prefix, maxActive: 1, releaseDelayMs });
    // Another tenant has a job pending, so the busy one is held to its one slot.
    await takeJobPriority(redis, prefix, 'patient');
    const first = await slots.acquire('busy');
    expect(first).not.toBeNull();
    await first?.release();
    // Held back: still counted, but the next take gives it back before counting, and takes a slot.
    expect(await slotsOf('busy')).toBe(1);
    const second = await slots.acquire('busy');
    expect(second).not.toBeNull();
    expect(await slotsOf('busy')).toBe(1);
    // At its share, with nothing released: refused.
    expect(await slots.acquire('busy')).toBeNull();
    // No take comes: the release goes alone once its delay has passed.
    await second?.release();
    await new Promise((resolve) => setTimeout(resolve, releaseDelayMs + 200));
    expect(await slotsOf('busy')).toBe(0);
    await releaseJobPriority(redis, prefix, 'patient');
  });

  it('passes a slot granted while the tenant was alone to its next job, not once another tenant is refused in', async () => {
    const own = `${prefix}-handover`;
    const members = (tenant: string) => redis.zrange(`${own}:active:${tenant}`, '0', '-1');
    const slots = createTenantSlots(redis, { prefix: own, maxActive: 1, releaseDelayMs: 60_000 });
    // The first slot is under the cap; the second, beyond it, was granted because it was alone.
    const under = await slots.acquire('handing');
    const alone = await slots.acquire('handing');
    const before = (await members('handing')).sort();
    expect(before).toHaveLength(2);
    await alone?.release();
    const next = await slots.acquire('handing');
    expect(next).not.toBeNull();
    // The same two tokens: the next job took the slot over, no take ran.
    expect((await members('handing')).sort()).toEqual(before);
    // Another tenant has a job pending: a take past the share is refused...
    await takeJobPriority(redis, own, 'arriving');
    expect(await slots.acquire('handing')).toBeNull();
    // ...and the slot granted alone before that goes back by a take, which refuses the next job too.
    await next?.release();
    expect(await slots.acquire('handing')).toBeNull();
    const left = await members('handing');
    expect(left).toHaveLength(1);
    // A slot granted under the cap proves nothing: it goes back by a take, which grants a new one.
    await under?.release();
    const again = await slots.acquire('handing');
    expect(again).not.toBeNull();
    const now = await members('handing');
    expect(now).toHaveLength(1);
    expect(now).not.toEqual(left);
    await again?.release();
    await releaseJobPriority(redis, own, 'arriving');
    await slots.flush();
    expect(await members('handing')).toEqual([]);
  });

  it('gives back every slot still held back when flushed, those of other tenants too', async () => {
    const slots = createTenantSlots(redis, { prefix, maxActive: 4, releaseDelayMs: 60_000 });
    const held = await Promise.all(['a', 'a', 'b'].map((tenant) => slots.acquire(tenant)));
    await Promise.all(held.map((slot) => slot?.release()));
    expect((await slotsOf('a')) + (await slotsOf('b'))).toBe(3);
    // A take carries one release; the rest still wait.
    const c = await slots.acquire('c');
    expect((await slotsOf('a')) + (await slotsOf('b'))).toBe(2);
    await c?.release();
    await slots.flush();
    expect((await slotsOf('a')) + (await slotsOf('b')) + (await slotsOf('c'))).toBe(0);
  });
});
