/**
 * The tenants' shares of the workers on the `postgres` queue backend: the worker slots of
 * worker/redis/tenant-slots.ts (which explains the cap) as rows of `tenant_slots`, one per running
 * job. A slot is taken by one statement (the function `take_tenant_slot`, migration 0025) under a
 * per-tenant advisory lock (so two workers cannot both take a tenant's last slot): drop the
 * tenant's expired slots, count the rest, and refuse when the tenant is at its cap while another
 * tenant is active: it has jobs pending or enqueued within the active window (`tenant_backlogs`,
 * stale counts ignored). A slot is renewed while held and released by token; a crashed worker's
 * slot stops counting at `expires_at` (on the database's clock). A release is held back for the
 * next take to carry (migration 0026; worker/redis/deferred-releases.ts), so a busy worker gives
 * back and takes in one round trip, or passed to the tenant's next job in this process with no
 * statement (worker/redis/slot-handovers.ts: a place no higher than the cap is the tenant's own
 * share; a higher one was granted because no other tenant was active). Every statement commits
 * asynchronously (migration 0027; producer/postgres/async-commit.ts).
 */
import { randomUUID } from 'node:crypto';
import { ASYNC_COMMIT } from '../../producer/postgres/async-commit.ts';
import { type Db, executePrepared } from '../../producer/postgres/db.ts';
import { BACKLOG_TTL_MS } from '../../producer/postgres/tenant-backlog.ts';
import { deferredReleases } from '../redis/deferred-releases.ts';
import { type HandedSlot, slotHandovers } from '../redis/slot-handovers.ts';
import {
  DEFAULT_ACTIVE_WINDOW_MS,
  heldSlot,
  type TenantSlots,
  type TenantSlotsOptions,
} from '../redis/tenant-slots.ts';

/**
 * $1 tenant, $2 token, $3 ttl ms, $4 cap, $5 stale after (ms), $6 active window (ms), $7, $8 and $9
 * the tenants, places and tokens of released places: the function of migration 0028 gives the
 * released places back, takes the tenant's advisory lock, counts its places held, and takes a free
 * one unless the tenant holds `cap` while another tenant is active (it has jobs pending, or it
 * enqueued within the window). Returns the place's number, or null when refused. One statement and
 * one round trip.
 */
const TAKE = `select take_tenant_worker_slot($1::text, $2::uuid, $3::int, $4::int, $5::int, $6::int,
  $7::text[], $8::int[], $9::uuid[]) as slot`;
/** $1 tenant, $2 place, $3 token, $4 ttl ms. */
const RENEW = `${ASYNC_COMMIT} update tenant_worker_slots set expires_at = now() + $4::int * interval '1 millisecond'
  where tenant_id = $1::text and slot = $2::int and token = $3::uuid and exists (select from async_commit)`;
/** $1 tenants, $2 places, $3 tokens: the released places no take carried. */
const RELEASE = `${ASYNC_COMMIT} update tenant_worker_slots s set expires_at = '-infinity'
  from unnest($1::text[], $2::int[], $3::uuid[]) as r(tenant_id, slot, token)
  where s.tenant_id = r.tenant_id and s.slot = r.slot and s.token = r.token and exists (select from async_commit)`;

/** A released place waiting to be given back (or passed on). */
interface Released extends HandedSlot {
  slot: number;
  token: string;
}

/** The released places as the statements' three array parameters. */
const columnsOf = (released: readonly Released[]) => [
  released.map((r) => r.tenantId),
  released.map((r) => r.slot),
  released.map((r) => r.token),
];

/**
 * Per-tenant worker slots in compactor's schema of `db` (`options.prefix` is not used: the schema
 * is the namespace).
 * @throws {Error} when `maxActive` is not a positive integer.
 */
export function createPostgresTenantSlots(db: Db, options: TenantSlotsOptions): TenantSlots {
  const { maxActive } = options;
  const ttlMs = options.ttlMs ?? 60_000;
  const activeWindowMs = options.activeWindowMs ?? DEFAULT_ACTIVE_WINDOW_MS;
  if (!Number.isInteger(maxActive) || maxActive < 1)
    throw new Error(`tenant slots: maxActive must be a positive integer, got ${maxActive}`);
  const releases = deferredReleases<Released>(
    (released) => executePrepared(db, { sql: RELEASE, params: columnsOf(released) }),
    options.releaseDelayMs,
  );
  const handovers = slotHandovers<Released>(options.handoverMs);
  const hold = (place: Released) =>
    heldSlot(
      ttlMs,
      () => executePrepared(db, { sql: RENEW, params: [place.tenantId, place.slot, place.token, ttlMs] }),
      async () => releases.add(place),
    );
  return {
    async acquire(tenantId) {
      // A slot passed on needs neither the cap nor a take.
      const now = Date.now();
      const passed = handovers.claim(releases, tenantId, now);
      if (passed) return hold(passed);
      const cap = (await options.maxActiveOf?.(tenantId)) ?? maxActive;
      const token = randomUUID();
      const released = releases.take();
      let rows: { slot: number | null }[];
      try {
        rows = await executePrepared<{ slot: number | null }>(db, {
          sql: TAKE,
          params: [tenantId, token, ttlMs, cap, BACKLOG_TTL_MS, activeWindowMs, ...columnsOf(released)],
        });
      } catch (error) {
        releases.restore(released);
        throw error;
      }
      const slot = rows[0]?.slot ?? null;
      if (slot === null) {
        handovers.refused(tenantId, now);
        return null;
      }
      // The places are numbered from 1, lowest free first: one above the cap means the tenant held
      // at least `cap` when it was granted, which the function allows only when no other is active.
      return hold({ tenantId, slot, token, grantedAt: now, grant: slot > cap ? 'alone' : 'share' });
    },
    flush: () => releases.flush(),
  };
}
