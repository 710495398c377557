/**
 * A tenant's share of the workers: at most `maxActive` of its compaction jobs run at once, across
 * every worker process, while another tenant is active: has work pending, or sent an event within
 * the last `activeWindowMs`. It complements the fair order of the queue
 * (producer/redis/tenant-backlog.ts): that order lets a quiet tenant's job be the next one taken,
 * and this cap keeps worker slots free to take it when a noisy tenant's jobs are long (an LLM
 * summary can take a minute), and keeps the noisy tenant from filling the machine the quiet
 * tenant's jobs run on. The window is why a quiet tenant counts between its events: its one job
 * at a time is pending only while it waits, and a cap that lifted whenever that job finished
 * would give the noisy tenant every slot again before the quiet one's next event (measured in
 * `npm run bench` part 10: the quiet tenant's compaction p99 under a 2,000-event flood went from 5x
 * to about 2x its solo time with the window). The cap is work-conserving: a tenant alone runs on
 * every slot, so a single-tenant deployment loses nothing.
 *
 * Each tenant's running jobs are members of the sorted set `<prefix>:active:<tenant>` (score: when
 * the slot expires, ms), taken and checked in one Lua script, renewed while held, released by token;
 * a crashed worker's slot expires after `ttlMs`. A release is held back for the next take to carry
 * (worker/redis/deferred-releases.ts): a busy worker gives back and takes in one round trip, and
 * while a tenant is alone its next job in this process takes a released slot over with no round
 * trip (worker/redis/slot-handovers.ts). A job
 * refused a slot goes back to delayed with its priority (no attempt used) and is taken again after
 * a short wait; see worker/queue/compaction/processor.ts.
 */
import { randomUUID } from 'node:crypto';
import { luaScript } from '../../producer/redis/lua.ts';
import type { RedisConnection } from '../../producer/redis/redis.ts';
import { BACKLOG_TTL_MS, backlogKeysOf, forgetStaleBacklogs } from '../../producer/redis/tenant-backlog.ts';
import { deferredReleases } from './deferred-releases.ts';
import { type HandedSlot, slotHandovers } from './slot-handovers.ts';

/**
 * KEYS: active set, backlogs, seen, the active set of a released slot. ARGV: now, expiry, token,
 * maxActive, tenant, stale cut-off, key TTL, active since (ms: a tenant that enqueued from then on is
 * active), the released slot's token ('' for none). Gives the released slot back first, then returns
 * 1 when the slot is taken under the cap, 2 when taken at or beyond it (so no other tenant is
 * active), 0 when the tenant is at its cap and another tenant is active.
 */
const ACQUIRE = luaScript(
  `if ARGV[9] ~= '' then redis.call('zrem', KEYS[4], ARGV[9]) end
${forgetStaleBacklogs({ backlogs: 2, seen: 3, cutoff: 6 })}
redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1])
local active = redis.call('zcard', KEYS[1])
local granted = 1
if active >= tonumber(ARGV[4]) then
  local pending = redis.call('zcard', KEYS[2])
  if redis.call('zscore', KEYS[2], ARGV[5]) then pending = pending - 1 end
  if pending > 0 then return 0 end
  local recent = redis.call('zcount', KEYS[3], ARGV[8], '+inf')
  local mine = redis.call('zscore', KEYS[3], ARGV[5])
  if mine and tonumber(mine) >= tonumber(ARGV[8]) then recent = recent - 1 end
  if recent > 0 then return 0 end
  granted = 2
end
redis.call('zadd', KEYS[1], ARGV[2], ARGV[3])
redis.call('pexpire', KEYS[1], ARGV[7])
return granted`,
  4,
);

const RENEW = luaScript(
  `if redis.call('zscore', KEYS[1], ARGV[1]) then redis.call('zadd', KEYS[1], 'XX', ARGV[2], ARGV[1]) redis.call('pexpire', KEYS[1], ARGV[3]) return 1 end return 0`,
  1,
);

/** A released slot waiting to be given back (or passed on): its tenant's active set and its token. */
interface Released extends HandedSlot {
  key: string;
  token: string;
}

/** How long a tenant counts as active after its last event unless configured, ms. */
export const DEFAULT_ACTIVE_WINDOW_MS = 5_000;

/** A held slot. */
export interface TenantSlot {
  /** Gives the slot back (idempotent; never throws). */
  release(): Promise<void>;
}

/** Takes worker slots per tenant. */
export interface TenantSlots {
  /**
   * Takes one of the tenant's slots.
   * @returns the slot, or null when the tenant runs `maxActive` jobs already and another tenant is
   *   active (has work pending, or sent an event within `activeWindowMs`).
   */
  acquire(tenantId: string): Promise<TenantSlot | null>;
  /**
   * Sends the releases held back for the next take (worker/redis/deferred-releases.ts), so no
   * released slot outlives a stopping worker. Never rejects.
   */
  flush(): Promise<void>;
}

export interface TenantSlotsOptions {
  /** The queue prefix the backlog counts live under. */
  prefix: string;
  /** Jobs of one tenant that may run at once while another is active, ≥ 1. */
  maxActive: number;
  /**
   * How long a tenant counts as active after it last sent an event (its job enqueued), ms.
   * Default {@link DEFAULT_ACTIVE_WINDOW_MS}.
   */
  activeWindowMs?: number | undefined;
  /**
   * A tenant's own cap, when it has one (its policy's `limits.maxActiveJobs`), over `maxActive`;
   * absent or undefined: `maxActive`.
   */
  maxActiveOf?: (tenantId: string) => Promise<number | undefined>;
  /** How long a slot outlives a worker that stopped renewing it, ms. Default 60,000. */
  ttlMs?: number;
  /**
   * How long a released slot waits for the next take to carry its release, ms
   * (worker/redis/deferred-releases.ts). Default 20.
   */
  releaseDelayMs?: number;
  /**
   * How long after its grant a released slot may pass from one of its tenant's jobs to the next in
   * this process without a take, when the grant proved a take would grant it again, ms
   * (worker/redis/slot-handovers.ts). Default 1,000; 0 passes no slot on.
   */
  handoverMs?: number;
}

/**
 * Per-tenant worker slots in Redis.
 * @throws {Error} when `maxActive` is not a positive integer.
 */
export function createTenantSlots(redis: RedisConnection, options: TenantSlotsOptions): TenantSlots {
  const { prefix, maxActive } = options;
  const ttlMs = options.ttlMs ?? 60_000;
  const activeWindowMs = options.activeWindowMs ?? DEFAULT_ACTIVE_WINDOW_MS;
  if (!Number.isInteger(maxActive) || maxActive < 1)
    throw new Error(`tenant slots: maxActive must be a positive integer, got ${maxActive}`);
  // A take carries one release (one more key of the script); others wait for the next or the delay.
  const releases = deferredReleases<Released>(
    (released) => Promise.all(released.map((r) => redis.zrem(r.key, r.token))),
    options.releaseDelayMs,
  );
  const handovers = slotHandovers<Released>(options.handoverMs);
  const hold = (slot: Released) =>
    heldSlot(
      ttlMs,
      () => RENEW(redis, [slot.key], [slot.token, String(Date.now() + ttlMs), String(ttlMs)]),
      async () => releases.add(slot),
    );
  return {
    async acquire(tenantId) {
      // A slot passed on needs neither the cap nor a take.
      const now = Date.now();
      const passed = handovers.claim(releases, tenantId, now);
      if (passed) return hold(passed);
      const cap = (await options.maxActiveOf?.(tenantId)) ?? maxActive;
      const key = `${prefix}:active:${encodeURIComponent(tenantId)}`;
      const token = randomUUID();
      const released = releases.take(1);
      let taken: unknown;
      try {
        taken = await ACQUIRE(
          redis,
          [key, ...backlogKeysOf(prefix), released[0]?.key ?? key],
          [
            String(now),
            String(now + ttlMs),
            token,
            String(cap),
            tenantId,
            String(now - BACKLOG_TTL_MS),
            String(ttlMs),
            String(now - activeWindowMs),
            released[0]?.token ?? '',
          ],
        );
      } catch (error) {
        releases.restore(released);
        throw error;
      }
      if (Number(taken) === 0) {
        handovers.refused(tenantId, now);
        return null;
      }
      return hold({ key, token, tenantId, grantedAt: now, grant: Number(taken) === 2 ? 'alone' : 'counted' });
    },
    flush: () => releases.flush(),
  };
}

/**
 * A slot taken: renewed every third of `ttlMs` with `renew` until released, then given back with
 * `give` (once, however often `release` is called). Failures of either are ignored: an unrenewed
 * slot expires by itself. Both backends' slots are held this way.
 */
export function heldSlot(
  ttlMs: number,
  renew: () => Promise<unknown>,
  give: () => Promise<unknown>,
): TenantSlot {
  const timer = setInterval(
    () => {
      renew().catch(() => {});
    },
    Math.floor(ttlMs / 3),
  );
  timer.unref();
  let released: Promise<void> | undefined;
  return {
    release: () => {
      released ??= (async () => {
        clearInterval(timer);
        await give().catch(() => {});
      })();
      return released;
    },
  };
}
