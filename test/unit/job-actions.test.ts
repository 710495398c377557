/** The one table from an error to a BullMQ job action, and the normalizer of unknown throws. */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  FenceError,
  InvalidInputError,
  LeaseBusyError,
  RateLimitedError,
  SessionNotFoundError,
  SummarizerConfigError,
  SummaryRejectedError,
  TranscriptError,
  TransientError,
  toError,
} from '../../shared/contract/errors.ts';
import {
  IN_PROCESS_ATTEMPTS,
  inProcessRetry,
  jobActionFor,
} from '../../worker/queue/compaction/job-actions.ts';

const options = { leaseBusyDelayMs: 1_000, random: () => 0.5 };

describe('jobActionFor', () => {
  it('delays a job whose session lease is busy, with jitter, using no attempt', () => {
    expect(jobActionFor(new LeaseBusyError('busy'), options)).toEqual({ type: 'delay', ms: 1_500 });
  });

  it("pauses the worker for the LLM's retry-after, and retries when the API gave none", () => {
    const limited = (retryAfterMs: number | null) =>
      new RateLimitedError('429', { retryAfterMs, requestId: null });
    expect(jobActionFor(limited(7_000), options)).toEqual({ type: 'pauseWorker', ms: 7_000 });
    expect(jobActionFor(limited(null), options)).toEqual({ type: 'retry' });
  });

  it('fails for good what can never succeed', () => {
    for (const error of [
      new InvalidInputError('bad event'),
      new SessionNotFoundError('t', 's'),
      new TranscriptError('line 3'),
      new SummarizerConfigError('401'),
      new ConfigError('COMPACTOR_X'),
    ]) {
      expect(jobActionFor(error, options), error.name).toEqual({ type: 'fail' });
    }
  });

  it('retries with backoff what may pass: fence conflicts, rejected summaries, outages, the unknown', () => {
    for (const error of [
      new FenceError('stale'),
      new SummaryRejectedError('refusal'),
      new TransientError('529', { status: 529, requestId: null }),
      new Error('socket hang up'),
    ]) {
      expect(jobActionFor(error, options), error.name).toEqual({ type: 'retry' });
    }
  });
});

describe('inProcessRetry', () => {
  const limited = (retryAfterMs: number | null) =>
    new RateLimitedError('429', { retryAfterMs, requestId: null });
  const overloaded = new TransientError('529', { status: 529, requestId: null });
  const tries = (attempt: number, backoffs = 0) => ({ attempt, backoffs });

  it("waits a 429's retry-after, and the jobs' exponential backoff for what else may pass", () => {
    expect(inProcessRetry(limited(1_000), tries(1), options)).toEqual({ ms: 1_000, backoff: false });
    expect(inProcessRetry(new LeaseBusyError('busy'), tries(1), options)).toEqual({
      ms: 1_500,
      backoff: false,
    });
    // A 429 waited out uses no backoff: the 529 after it waits the first one.
    expect(inProcessRetry(overloaded, tries(2, 0), options)).toEqual({ ms: 2_000, backoff: true });
    expect(inProcessRetry(overloaded, tries(3, 1), options)).toEqual({ ms: 4_000, backoff: true });
    expect(inProcessRetry(limited(null), tries(4, 2), options)).toEqual({ ms: 8_000, backoff: true });
  });

  it('gives up at once on what can never succeed, and after the last attempt on the rest', () => {
    expect(inProcessRetry(new SummarizerConfigError('401'), tries(1), options)).toBeNull();
    expect(inProcessRetry(new SessionNotFoundError('t', 's'), tries(1), options)).toBeNull();
    expect(inProcessRetry(overloaded, tries(IN_PROCESS_ATTEMPTS - 1), options)).not.toBeNull();
    expect(inProcessRetry(overloaded, tries(IN_PROCESS_ATTEMPTS), options)).toBeNull();
    expect(inProcessRetry(limited(1_000), tries(2), { ...options, attempts: 2 })).toBeNull();
  });
});

describe('toError', () => {
  it('passes errors through and describes anything else that was thrown', () => {
    const error = new FenceError('x');
    expect(toError(error)).toBe(error);
    expect(toError('plain text').message).toBe('plain text');
    expect(toError({ code: 42 }).message).toBe('non-error thrown: {"code":42}');
    expect(toError(undefined).message).toBe('non-error thrown: undefined');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toError(cyclic).message).toBe('non-error thrown: [object Object]');
  });
});
