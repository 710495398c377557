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
import { jobActionFor } from '../../worker/queue/job-actions.ts';

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
