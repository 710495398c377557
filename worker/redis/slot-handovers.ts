/**
 * Hand-overs of tenant slots (worker/redis/tenant-slots.ts) between the jobs of one process: a job
 * of a tenant that ends while the tenant's next job starts here passes its slot on, with no take.
 * A slot passes on only when its grant proved that a take now would grant it again, and only for
 * `handoverMs` after that grant (a hand-over keeps the grant's time; past it the slot goes back by
 * a take, which counts and checks again):
 *
 * - `share`: one of the tenant's own share, on Postgres a numbered place no higher than the cap
 *   (worker/postgres/tenant-slots.ts). A tenant holding only such places is under its cap after
 *   giving one back, so a take would grant it whoever else is active.
 * - `alone`: granted beyond the tenant's cap. A take that finds the tenant at its cap grants only
 *   when no other tenant is active (has work pending, or enqueued within the window), so such a
 *   grant proves the tenant was alone. A take refused for the tenant since (another tenant is
 *   active) ends the hand-overs of its slots granted before it.
 * - `counted`: granted under the cap with nothing more known (Redis counts, it does not number):
 *   never passes on.
 *
 * So a tenant no longer alone keeps slots beyond its cap for at most `handoverMs` plus one job,
 * and a busy tenant's jobs on one worker take their share with a round trip per slot and
 * `handoverMs`, not per job. Pure state; no I/O.
 */
import type { DeferredReleases } from './deferred-releases.ts';

/** What a slot's grant proved (see the module's comment). */
export type SlotGrant = 'share' | 'alone' | 'counted';

/** A released slot as a hand-over reads it. */
export interface HandedSlot {
  tenantId: string;
  /** When the take granted it (ms since the epoch, this process's clock); a hand-over keeps it. */
  grantedAt: number;
  grant: SlotGrant;
}

/** How long after its grant a slot may pass on, ms, unless configured. */
export const DEFAULT_HANDOVER_MS = 1_000;

/** The hand-overs of one process's tenant slots. */
export interface SlotHandovers<T extends HandedSlot> {
  /**
   * The oldest released slot of `tenantId` waiting in `releases` that may pass to the tenant's next
   * job at `now` (ms), removed from the wait; undefined when there is none.
   */
  claim(releases: DeferredReleases<T>, tenantId: string, now: number): T | undefined;
  /**
   * A take for `tenantId` was refused at `now` (ms): its slots granted beyond the cap before it no
   * longer pass on.
   */
  refused(tenantId: string, now: number): void;
}

/** Most tenants whose last refusal is remembered before those older than `handoverMs` are forgotten. */
const REMEMBERED_REFUSALS = 1_000;

/**
 * Hand-overs as described above.
 * @param handoverMs ms, ≥ 0; 0 passes no slot on (every job takes its own).
 * @throws {RangeError} when `handoverMs` is negative or not a number.
 */
export function slotHandovers<T extends HandedSlot>(handoverMs = DEFAULT_HANDOVER_MS): SlotHandovers<T> {
  if (!(handoverMs >= 0)) throw new RangeError(`slotHandovers: handoverMs must be ≥ 0, got ${handoverMs}`);
  // Tenants refused lately, and when: a slot granted beyond the cap before that may not pass on.
  const refusedAt = new Map<string, number>();
  const passes = (slot: T, since: number, now: number) =>
    now - slot.grantedAt < handoverMs &&
    (slot.grant === 'share' || (slot.grant === 'alone' && slot.grantedAt > since));
  return {
    claim(releases, tenantId, now) {
      if (handoverMs === 0) return undefined;
      const since = refusedAt.get(tenantId) ?? Number.NEGATIVE_INFINITY;
      return releases.claim((slot) => slot.tenantId === tenantId && passes(slot, since, now));
    },
    refused(tenantId, now) {
      if (handoverMs === 0) return;
      // A refusal older than `handoverMs` follows every grant that could still pass on: forgotten.
      if (refusedAt.size >= REMEMBERED_REFUSALS)
        for (const [tenant, at] of refusedAt) if (at <= now - handoverMs) refusedAt.delete(tenant);
      refusedAt.set(tenantId, now);
    },
  };
}
