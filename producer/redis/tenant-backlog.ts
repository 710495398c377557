/**
 * Fair order between tenants on the one `compaction` queue. BullMQ's open-source edition has no
 * job groups, and a plain queue is first in, first out: a tenant that sends 2,000 events puts a
 * quiet tenant's one event behind all of them. BullMQ does order prioritized jobs by priority
 * (lowest first) and, within one priority, by arrival (its `prioritized` sorted set), so compactor
 * gives each job the priority of its rank in its tenant's backlog:
 *
 * - every compaction job a producer or a sweep adds first counts itself in its tenant's backlog
 *   (the sorted set `<prefix>:backlogs`, tenant → jobs pending) and takes the count as its
 *   priority: 1 for a tenant with nothing pending, n for a tenant's n-th pending job;
 * - the worker counts it out when the job finishes (completed, or failed for good).
 *
 * The queue therefore serves tenants round-robin: a quiet tenant's job (priority 1) goes before the
 * second job of a tenant with thousands waiting, and within a tenant jobs keep their order. Retried
 * and delayed jobs keep their priority. The same counts tell the worker which tenants have work
 * pending, and `<prefix>:backlogs-seen` (tenant → last enqueue, ms) which have been active lately
 * (worker/redis/tenant-slots.ts). A count that leaks (a job removed by hand, a worker killed
 * between finishing a job and counting it out, an enqueue repeated with the same event id) only
 * lowers its own tenant's place, and is dropped, with the tenant's last enqueue, an hour after it.
 *
 * Every job must carry a priority: BullMQ takes jobs without one (its `wait` list) before all
 * prioritized jobs. On a Redis Cluster the keys carry the queues' hash-tagged prefix, so each script
 * touches one slot.
 */
import { luaScript } from './lua.ts';
import type { RedisConnection } from './redis.ts';

/** BullMQ's largest job priority (2^21). */
export const MAX_JOB_PRIORITY = 2_097_152;

/** How long a tenant's backlog count lives after its last enqueue, ms. */
export const BACKLOG_TTL_MS = 60 * 60 * 1000;

/** KEYS: backlogs, seen. ARGV: tenant, now (ms). Returns the tenant's new count. */
const TAKE = luaScript(
  `local n = redis.call('zincrby', KEYS[1], 1, ARGV[1])
redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
return tonumber(n)`,
  2,
);

/**
 * KEYS: backlogs. ARGV: tenant. Returns the tenant's count left. The tenant's last enqueue stays in
 * `seen` (the worker's share reads it: a tenant that enqueued lately is active), until it is stale.
 */
const RELEASE = luaScript(
  `local n = tonumber(redis.call('zscore', KEYS[1], ARGV[1]) or '0')
if n > 1 then return tonumber(redis.call('zincrby', KEYS[1], -1, ARGV[1])) end
redis.call('zrem', KEYS[1], ARGV[1]) return 0`,
  1,
);

/**
 * Lua that drops the counts of tenants that last enqueued before a cut-off time (ms), for scripts
 * that read the backlogs. The arguments are the positions of the script's backlogs and seen keys
 * in `KEYS` and of the cut-off in `ARGV`.
 */
export function forgetStaleBacklogs(positions: { backlogs: number; seen: number; cutoff: number }): string {
  const { backlogs, seen, cutoff } = positions;
  return `for _, t in ipairs(redis.call('zrangebyscore', KEYS[${seen}], '-inf', ARGV[${cutoff}])) do
  redis.call('zrem', KEYS[${backlogs}], t) redis.call('zrem', KEYS[${seen}], t)
end`;
}

/** The Redis keys of the backlog counts under a queue prefix: `[backlogs, seen]`. */
export function backlogKeysOf(prefix: string): [string, string] {
  return [`${prefix}:backlogs`, `${prefix}:backlogs-seen`];
}

/**
 * Counts a job into its tenant's backlog and returns the BullMQ priority it should be added with:
 * its rank in that backlog, 1 to {@link MAX_JOB_PRIORITY}.
 */
export async function takeJobPriority(
  redis: RedisConnection,
  prefix: string,
  tenantId: string,
): Promise<number> {
  const rank = Number(await TAKE(redis, backlogKeysOf(prefix), [tenantId, String(Date.now())]));
  return Math.min(Math.max(rank, 1), MAX_JOB_PRIORITY);
}

/**
 * Counts a finished (or never added) job out of its tenant's backlog. Never goes below zero.
 * @returns the tenant's jobs still counted.
 */
export async function releaseJobPriority(
  redis: RedisConnection,
  prefix: string,
  tenantId: string,
): Promise<number> {
  return Number(await RELEASE(redis, [backlogKeysOf(prefix)[0]], [tenantId]));
}
