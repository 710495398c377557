/**
 * The one table from an error to what BullMQ does with the job. Pure: the processor executes the
 * action it returns.
 *
 * | error                                   | action                                              |
 * |-----------------------------------------|-----------------------------------------------------|
 * | LeaseBusyError                          | delay: back to delayed, no attempt used             |
 * | RateLimitedError with a retry-after     | pause the worker for that long, no attempt used     |
 * | InvalidInputError, SummarizerConfigError, ConfigError | fail for good (UnrecoverableError)    |
 * | anything else (FenceError, SummaryRejectedError, TransientError, unknown) | retry with backoff |
 *
 * A run outside BullMQ (`compactor compact`) follows the same table by waiting in-process:
 * {@link inProcessRetry}.
 */

import { isPermanent, LeaseBusyError, RateLimitedError } from '../../../shared/contract/errors.ts';
import { DEFAULT_JOB_OPTIONS } from '../../../shared/protocol/events.ts';

/** What the processor does with a job whose run threw. */
export type JobAction =
  /** Move the job back to delayed for `ms` (BullMQ `moveToDelayed` + `DelayedError`). */
  | { type: 'delay'; ms: number }
  /** Pause the whole worker for `ms` (BullMQ `worker.rateLimit` + `RateLimitError`). */
  | { type: 'pauseWorker'; ms: number }
  /** Fail the job now, whatever attempts remain (BullMQ `UnrecoverableError`). */
  | { type: 'fail' }
  /** Throw the error: BullMQ retries with the job's backoff until its attempts run out. */
  | { type: 'retry' };

export interface JobActionOptions {
  /** Base delay before a job whose session lease is busy runs again, ms. */
  leaseBusyDelayMs: number;
  /** Jitter source in [0, 1): the delay is `leaseBusyDelayMs × (1 + random())`. */
  random: () => number;
}

/** The action for `error` (already normalised by `toError`). */
export function jobActionFor(error: Error, options: JobActionOptions): JobAction {
  if (error instanceof LeaseBusyError) {
    // Whole ms: BullMQ's Postgres backend keeps a delayed job's due time as a bigint.
    return { type: 'delay', ms: Math.round(options.leaseBusyDelayMs * (1 + options.random())) };
  }
  if (error instanceof RateLimitedError && error.retryAfterMs !== null) {
    return { type: 'pauseWorker', ms: error.retryAfterMs };
  }
  if (isPermanent(error)) return { type: 'fail' };
  return { type: 'retry' };
}

/** How a run outside BullMQ retries: the worker's attempts and backoff by default. */
export interface InProcessRetryOptions extends JobActionOptions {
  /** Attempts in all, the first included. Default the jobs' own (`DEFAULT_JOB_OPTIONS.attempts`). */
  attempts?: number;
  /**
   * First backoff of a `retry`, ms; each further retry waits twice as long, as BullMQ's
   * exponential backoff does. Default the jobs' own (`DEFAULT_JOB_OPTIONS.backoff.delay`).
   */
  backoffMs?: number;
}

/** Attempts of a run outside BullMQ, the first included: as many as a compaction job gets. */
export const IN_PROCESS_ATTEMPTS: number = DEFAULT_JOB_OPTIONS.attempts;

/** Where a run outside BullMQ stands after an attempt failed. */
export interface InProcessTries {
  /** The attempt that just failed, 1-based. */
  attempt: number;
  /** Backoff waits before it (waits of the table's `retry`), as BullMQ counts the attempts it backs off after. */
  backoffs: number;
}

/** The wait before the next attempt of a run outside BullMQ. */
export interface InProcessWait {
  /** ms. */
  ms: number;
  /** True when it is the exponential backoff of a `retry` (it counts toward the next backoff). */
  backoff: boolean;
}

/**
 * What a run outside BullMQ (`compactor compact`) does after an attempt threw `error`, by the
 * worker's table: a busy lease waits as a delayed job would, a 429 with a retry-after waits that
 * long as the paused worker would, a permanent error gives up, anything else waits the job's
 * exponential backoff (2 s, 4 s, 8 s, ... by default, counting backoffs only, as BullMQ counts
 * only the attempts a job used). Unlike the worker, every attempt counts toward `attempts`, a busy
 * lease and a 429 included, so the run always ends.
 * @returns the wait before the next attempt; null to give up (permanent, or no attempt left).
 */
export function inProcessRetry(
  error: Error,
  tries: InProcessTries,
  options: InProcessRetryOptions,
): InProcessWait | null {
  if (tries.attempt >= (options.attempts ?? IN_PROCESS_ATTEMPTS)) return null;
  const action = jobActionFor(error, options);
  switch (action.type) {
    case 'fail':
      return null;
    case 'delay':
    case 'pauseWorker':
      return { ms: action.ms, backoff: false };
    case 'retry':
      return {
        ms: (options.backoffMs ?? DEFAULT_JOB_OPTIONS.backoff.delay) * 2 ** tries.backoffs,
        backoff: true,
      };
  }
}
