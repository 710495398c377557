/**
 * Releases of tenant slots (worker/redis/tenant-slots.ts) held back for a moment so they ride on
 * the next take: a busy worker ends a job and starts the next within a few milliseconds, and the
 * take that starts it can give the ended job's slot back in the same statement, one round trip and
 * one commit where a take and a release each cost one. A release no take carried within `delayMs`
 * is sent alone, with any others waiting; `flush` sends them at once (a worker's close).
 *
 * While it waits, a released slot still counts in other processes' view of its tenant (for at most
 * `delayMs` plus a round trip); this process's next take drops it before it counts. A release lost
 * to a crash is a crashed worker's slot: it expires after the slots' ttl, as before. Pure state and
 * a timer; the sending is the caller's.
 */

/** Releases waiting to be sent, and the means to send them. */
export interface DeferredReleases<T> {
  /** Holds `item` back until the next {@link take}, or sends it after the delay. */
  add(item: T): void;
  /**
   * The items waiting, oldest first, at most `max` (default all), removed from the wait: the caller
   * sends them with its take. Those left still wait for the next take or the delay.
   */
  take(max?: number): T[];
  /** The oldest waiting item `match` accepts, removed from the wait (it is not sent); or undefined. */
  claim(match: (item: T) => boolean): T | undefined;
  /** Puts back items a take could not send (its statement failed), to be sent after the delay. */
  restore(items: readonly T[]): void;
  /** Sends every waiting item now. Never rejects: a failed send leaves the slots to expire. */
  flush(): Promise<void>;
}

/** How long a release waits for a take to carry it, ms, unless configured. */
export const DEFAULT_RELEASE_DELAY_MS = 20;

/**
 * Deferred releases sent by `send` (one call for all waiting items) when no take carried them.
 * @param delayMs the most a release waits for a take, ms (a non-negative number).
 * @throws {RangeError} when `delayMs` is negative or not a number.
 */
export function deferredReleases<T>(
  send: (items: T[]) => Promise<unknown>,
  delayMs = DEFAULT_RELEASE_DELAY_MS,
): DeferredReleases<T> {
  if (!(delayMs >= 0)) throw new RangeError(`deferredReleases: delayMs must be ≥ 0, got ${delayMs}`);
  let waiting: T[] = [];
  let timer: NodeJS.Timeout | null = null;
  // Nothing left to send: no timer either.
  const disarmIfEmpty = () => {
    if (waiting.length === 0 && timer) {
      clearTimeout(timer);
      timer = null;
    }
  };
  const take = (max = Number.POSITIVE_INFINITY) => {
    const items = waiting.length <= max ? waiting : waiting.slice(0, max);
    waiting = waiting.length <= max ? [] : waiting.slice(max);
    disarmIfEmpty();
    return items;
  };
  const claim = (match: (item: T) => boolean) => {
    const at = waiting.findIndex(match);
    if (at < 0) return undefined;
    const [item] = waiting.splice(at, 1);
    disarmIfEmpty();
    return item;
  };
  const flush = async () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const items = take();
    if (items.length > 0) await send(items).catch(() => {});
  };
  const arm = () => {
    if (timer || waiting.length === 0) return;
    timer = setTimeout(() => void flush(), delayMs);
    timer.unref();
  };
  return {
    add(item) {
      waiting.push(item);
      arm();
    },
    take,
    claim,
    restore(items) {
      waiting.push(...items);
      arm();
    },
    flush,
  };
}
