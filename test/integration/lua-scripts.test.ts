/**
 * Lua scripts run by digest (producer/redis/lua.ts): a script Redis has never seen still runs (the
 * NOSCRIPT answer makes ioredis send it once), Redis then holds it by its SHA1, and a call with the
 * wrong number of keys is refused before anything reaches Redis.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { luaScript } from '../../producer/redis/lua.ts';
import { REDIS_URL } from '../support/env.ts';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `test-lua-${randomUUID()}`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('Lua scripts by digest', () => {
  it('runs a script Redis has not seen, which Redis then holds by its digest', async () => {
    // A body of its own, so no other test can have loaded it.
    const lua = `-- ${randomUUID()}\nreturn redis.call('incrby', KEYS[1], ARGV[1])`;
    const sha = createHash('sha1').update(lua).digest('hex');
    expect(await redis.script('EXISTS', sha)).toEqual([0]);
    const incr = luaScript(lua, 1);
    const key = `${prefix}:counter`;
    expect(await incr(redis, [key], ['2'])).toBe(2);
    expect(await redis.script('EXISTS', sha)).toEqual([1]);
    expect(await incr(redis, [key], ['3'])).toBe(5);
    expect(await redis.get(key)).toBe('5');
  });

  it('refuses a call with the wrong number of keys, and changes nothing', async () => {
    const set = luaScript(`return redis.call('set', KEYS[1], ARGV[1])`, 1);
    const key = `${prefix}:untouched`;
    await expect(set(redis, [key, `${prefix}:other`], ['x'])).rejects.toThrow(/reads 1 keys, got 2/);
    expect(await redis.exists(key)).toBe(0);
    expect(() => luaScript('return 1', -1)).toThrow(/non-negative integer/);
  });
});
