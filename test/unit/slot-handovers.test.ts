/**
 * Hand-overs of tenant slots between one process's jobs (worker/redis/slot-handovers.ts): a
 * released slot passes to its tenant's next job only when its grant proved a take would grant it
 * again (a place of the tenant's own share, or a grant beyond the cap while the tenant was alone),
 * only within `handoverMs` of that grant, and a refused take ends the passing of what was granted
 * beyond the cap before it. What does not pass stays waiting for a take to give back.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deferredReleases } from '../../worker/redis/deferred-releases.ts';
import { type HandedSlot, type SlotGrant, slotHandovers } from '../../worker/redis/slot-handovers.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

type Slot = HandedSlot & { id: string };
const slot = (id: string, tenantId: string, grant: SlotGrant, grantedAt: number): Slot => ({
  id,
  tenantId,
  grant,
  grantedAt,
});

/** Releases that record what was sent (given back) rather than passed on. */
function waiting() {
  const sent: string[] = [];
  const releases = deferredReleases<Slot>(async (items) => sent.push(...items.map((s) => s.id)), 50);
  return { releases, sent };
}

describe('slot hand-overs', () => {
  it("passes a slot of the tenant's own share, or one granted while it was alone, to its next job", async () => {
    const handovers = slotHandovers<Slot>(1_000);
    const { releases, sent } = waiting();
    releases.add(slot('other tenant', 'b', 'share', 0));
    releases.add(slot('counted', 'a', 'counted', 0));
    releases.add(slot('place 1', 'a', 'share', 0));
    releases.add(slot('place 3', 'a', 'alone', 0));
    expect(handovers.claim(releases, 'a', 10)?.id).toBe('place 1');
    expect(handovers.claim(releases, 'a', 10)?.id).toBe('place 3');
    // A slot granted under the cap with nothing more known goes back by a take, as does another tenant's.
    expect(handovers.claim(releases, 'a', 10)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(50);
    expect(sent).toEqual(['other tenant', 'counted']);
  });

  it('passes nothing once handoverMs has passed since the grant, nor after a refusal for what was granted alone', () => {
    const handovers = slotHandovers<Slot>(1_000);
    const { releases } = waiting();
    releases.add(slot('old', 'a', 'share', 0));
    expect(handovers.claim(releases, 'a', 1_000)).toBeUndefined();
    expect(releases.take().map((s) => s.id)).toEqual(['old']);
    // Another tenant became active: the take refused. A place of the share still passes on.
    releases.add(slot('alone before', 'a', 'alone', 100));
    releases.add(slot('share before', 'a', 'share', 100));
    handovers.refused('a', 200);
    expect(handovers.claim(releases, 'a', 300)?.id).toBe('share before');
    expect(handovers.claim(releases, 'a', 300)).toBeUndefined();
    // Granted alone after the refusal (the other tenant went quiet): passes on again.
    releases.add(slot('alone after', 'a', 'alone', 250));
    expect(handovers.claim(releases, 'a', 300)?.id).toBe('alone after');
    // A refusal of another tenant changes nothing for this one.
    handovers.refused('b', 400);
    releases.add(slot('alone later', 'a', 'alone', 350));
    expect(handovers.claim(releases, 'a', 400)?.id).toBe('alone later');
  });

  it('passes nothing with handoverMs 0, and refuses a negative one', () => {
    const handovers = slotHandovers<Slot>(0);
    const { releases } = waiting();
    releases.add(slot('place 1', 'a', 'share', 0));
    expect(handovers.claim(releases, 'a', 0)).toBeUndefined();
    expect(() => slotHandovers(-1)).toThrow(/handoverMs must be ≥ 0/);
  });
});
