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
 */
import { isPermanent, LeaseBusyError, RateLimitedError } from '../../shared/contract/errors.ts';

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
    return { type: 'delay', ms: options.leaseBusyDelayMs * (1 + options.random()) };
  }
  if (error instanceof RateLimitedError && error.retryAfterMs !== null) {
    return { type: 'pauseWorker', ms: error.retryAfterMs };
  }
  if (isPermanent(error)) return { type: 'fail' };
  return { type: 'retry' };
}
