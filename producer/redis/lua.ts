/**
 * Lua scripts run by their SHA1 digest: each script becomes an ioredis command (`defineCommand`),
 * which sends `EVALSHA` and, when Redis answers `NOSCRIPT` (a restarted or failed-over server, a
 * cluster node that never ran it), `EVAL` once with the source. A script's text then crosses the
 * connection once, not with every call, and Redis does not hash it again on every call: the
 * lease, the tenant slots and the backlog counts run a script or two for every job.
 */
import { createHash } from 'node:crypto';
import type { RedisConnection } from './redis.ts';

/**
 * Runs one script on a connection: `keys` (exactly the script's number of keys) and `args`.
 * Resolves with the script's reply; rejects with the Redis error.
 */
export type LuaScript = (
  redis: RedisConnection,
  keys: readonly string[],
  args: readonly string[],
) => Promise<unknown>;

/**
 * A {@link LuaScript} for `lua`, which reads `numberOfKeys` keys (`KEYS[1..n]`). The command's name
 * is derived from the script's digest, so two scripts never share one and a connection defines
 * each once.
 * @throws {RangeError} when `numberOfKeys` is not a non-negative integer; the returned function
 *   rejects when given another number of keys.
 */
export function luaScript(lua: string, numberOfKeys: number): LuaScript {
  if (!Number.isInteger(numberOfKeys) || numberOfKeys < 0)
    throw new RangeError(`luaScript: numberOfKeys must be a non-negative integer, got ${numberOfKeys}`);
  const name = `compactorLua${createHash('sha1').update(lua).digest('hex').slice(0, 20)}`;
  return async (redis, keys, args) => {
    if (keys.length !== numberOfKeys)
      throw new RangeError(`luaScript: the script reads ${numberOfKeys} keys, got ${keys.length}`);
    const client = redis as unknown as Record<string, ((...argv: string[]) => Promise<unknown>) | undefined>;
    if (typeof client[name] !== 'function') redis.defineCommand(name, { numberOfKeys, lua });
    const command = client[name] as (...argv: string[]) => Promise<unknown>;
    return command.call(redis, ...keys, ...args);
  };
}
