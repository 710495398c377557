/**
 * The per-session lease: `SET key token NX PX ttl`, renewed while held, released by token
 * (compare-and-delete in Lua). It stops two workers from paying for the same LLM call; it is NOT
 * what keeps data correct (the fence in worker/postgres/writes.ts is).
 *
 * On a Redis Cluster it works unchanged: every command and script touches one key (`KEYS[1]`),
 * so no CROSSSLOT can arise; the key carries the queue prefix, so with a hash-tagged prefix the
 * leases live in the queues' slot. A failover can lose a lease the old primary had not yet
 * replicated: a second worker may then take it and pay for a second summary, and the fence still
 * lets only one apply per session version and idempotency key.
 */
import { randomUUID } from 'node:crypto';
import { luaScript } from '../../producer/redis/lua.ts';
import type { RedisConnection } from '../../producer/redis/redis.ts';
import { sessionKeyOf } from '../../shared/protocol/events.ts';
import type { Lease, Leases } from '../pipeline/ports.ts';

export type { Lease } from '../pipeline/ports.ts';

const RENEW = luaScript(
  `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`,
  1,
);
const RELEASE = luaScript(
  `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`,
  1,
);

export interface LeaseManagerOptions {
  /** Key prefix, e.g. the queue prefix. */
  prefix: string;
  /** Lease time-to-live, ms. Renewed every ttl/3. Default 30,000. */
  ttlMs?: number;
}

/** Acquires per-session leases in Redis. */
export class LeaseManager implements Leases {
  private readonly ttlMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly options: LeaseManagerOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 100)
      throw new Error('LeaseManager: ttlMs must be an integer ≥ 100');
  }

  /** Redis key of a session's lease. */
  keyOf(tenantId: string, sessionId: string): string {
    return `${this.options.prefix}:lease:${sessionKeyOf(tenantId, sessionId)}`;
  }

  /**
   * Tries once to take the lease.
   * @returns the lease, or null if another holder has it.
   */
  async acquire(tenantId: string, sessionId: string): Promise<Lease | null> {
    const key = this.keyOf(tenantId, sessionId);
    const token = randomUUID();
    const ok = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (ok !== 'OK') return null;
    return holdLease({
      key,
      token,
      ttlMs: this.ttlMs,
      renew: async () => (await RENEW(this.redis, [key], [token, String(this.ttlMs)])) === 1,
      release: async () => {
        await RELEASE(this.redis, [key], [token]);
      },
    });
  }
}

/** How a store keeps one taken lease: renew it (false: lost), release it. */
export interface LeaseHold {
  key: string;
  token: string;
  /** Renewed every third of it. */
  ttlMs: number;
  /** Extends the lease if still ours; resolves false when it is not (expired, or taken). */
  renew(): Promise<boolean>;
  /** Drops the lease if still ours. */
  release(): Promise<void>;
}

/**
 * A taken lease, renewed every `ttlMs / 3` until released: its signal aborts when a renewal finds
 * it lost. A renewal that fails (the store unreachable) is not yet a lost lease: the lease lives
 * until its TTL, and the next tick tries again. Shared by the Redis and the Postgres leases.
 */
export function holdLease(hold: LeaseHold): Lease {
  const { key, token, ttlMs } = hold;
  const controller = new AbortController();
  const lost = (why: string) => {
    if (!controller.signal.aborted) controller.abort(new Error(`lease ${key} lost: ${why}`));
  };
  const timer = setInterval(
    () => {
      hold.renew().then(
        (renewed) => {
          if (!renewed) lost('expired or taken by another holder');
        },
        () => {},
      );
    },
    Math.floor(ttlMs / 3),
  );
  timer.unref();
  let released: Promise<void> | undefined;
  return {
    key,
    token,
    signal: controller.signal,
    release: () => {
      released ??= (async () => {
        clearInterval(timer);
        await hold.release().catch(() => {});
      })();
      return released;
    },
  };
}
