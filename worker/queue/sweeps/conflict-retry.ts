/**
 * Retries a call that Postgres aborted to break a deadlock (SQLSTATE 40P01 `deadlock_detected`) or
 * a serialization conflict (40001 `serialization_failure`): Postgres rolls back one of the
 * transactions involved and expects the application to run it again ("Transaction Isolation" and
 * "Explicit Locking: Deadlocks" in the PostgreSQL manual). Several workers starting at once on the
 * PostgreSQL queue backend upsert the same job schedulers, and BullMQ's backend can deadlock them
 * with each other; each attempt is its own transaction, so running it again is safe.
 */

/** SQLSTATEs after which the same call may simply run again. */
const RETRYABLE = new Set(['40P01', '40001']);

/** Attempts in all, the first included. */
const ATTEMPTS = 5;

/** The longest pause before the first retry, ms; it doubles with each retry (full jitter). */
const FIRST_PAUSE_MS = 50;

/** Whether `error`, or an error it wraps as `cause`, carries a retryable SQLSTATE. */
export function isConflictAbort(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * `call()`, run again after a random pause (up to 50 ms, doubling) when Postgres aborted it as a
 * deadlock victim or a serialization failure, at most 5 attempts in all.
 * @throws the call's error when it is not such an abort, or the last one after 5 attempts.
 */
export async function retryOnConflict<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isConflictAbort(error)) throw error;
      const pauseMs = Math.random() * FIRST_PAUSE_MS * 2 ** (attempt - 1);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}
