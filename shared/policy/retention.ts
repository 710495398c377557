/**
 * Retention of archived originals: a policy's `retentionDays` says how long the messages a
 * compaction moved to the archive are kept. Pure: the cutoff and the words the ledger and the
 * errors use. No I/O, no clock (the caller passes `now`).
 */

/** One day in ms. */
export const DAY_MS = 86_400_000;

/**
 * The instant before which archived messages are past retention: `now` minus `retentionDays`
 * whole days (24 h each, whatever the calendar does).
 * @param retentionDays the policy's retention, days (a positive whole number).
 * @param now wall-clock time, ms since the epoch.
 * @throws {RangeError} when `retentionDays` is not a positive whole number.
 */
export function retentionCutoff(retentionDays: number, now: number): Date {
  if (!Number.isInteger(retentionDays) || retentionDays < 1) {
    throw new RangeError(`retentionDays must be a positive whole number of days, got ${retentionDays}`);
  }
  return new Date(now - retentionDays * DAY_MS);
}

/** The strategy column of an `expired` ledger row: `retention:30d`. */
export function retentionLabel(retentionDays: number): string {
  return `retention:${retentionDays}d`;
}

/** The reason of an `expired` ledger row: which policy dropped what, and from before when. */
export function expiryReason(retentionDays: number, before: Date): string {
  const days = `${retentionDays} day${retentionDays === 1 ? '' : 's'}`;
  return `retention of ${days}: archived originals from before ${before.toISOString()} dropped`;
}

/** What an `expired` ledger row says, as {@link expiredRestoreMessage} reads it. */
export interface ExpiryRecord {
  /** The `expired` ledger row's id. */
  id: string;
  /** When the retention pass dropped the originals. */
  createdAt: Date;
  /** Its reason ({@link expiryReason}). */
  reason: string | null;
}

/**
 * Why compaction `compactionId` cannot be restored: its archived originals were dropped by the
 * retention pass that `expiry` records.
 */
export function expiredRestoreMessage(compactionId: string, expiry: ExpiryRecord): string {
  return (
    `compaction ${compactionId} cannot be restored: its archived originals were dropped ` +
    `${expiry.createdAt.toISOString()} by the sweep's retention pass (${expiry.reason ?? 'retention policy'}; ` +
    `ledger row ${expiry.id}); nothing was changed`
  );
}
