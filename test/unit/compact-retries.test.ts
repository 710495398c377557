/**
 * `compactor compact`'s retries: the worker's table executed in-process, each wait told on stderr.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitedError, SessionNotFoundError, TransientError } from '../../shared/contract/errors.ts';
import { retryLine, withRetries } from '../../worker/cli/commands/compact.ts';

const fast = { leaseBusyDelayMs: 0, random: () => 0, backoffMs: 0 };

/** An attempt that throws `errors` in turn, then answers `done`. */
function scripted(errors: Error[]) {
  let calls = 0;
  const attempt = async () => {
    const error = errors[calls++];
    if (error) throw error;
    return 'done';
  };
  return { attempt, calls: () => calls };
}

describe('withRetries', () => {
  it('retries a 429 and a 529 and tells each wait', async () => {
    const lines: string[] = [];
    const run = scripted([
      new RateLimitedError('429', { retryAfterMs: 0, requestId: null }),
      new TransientError('529', { status: 529, requestId: null }),
    ]);
    await expect(withRetries(run.attempt, (l) => lines.push(l), fast)).resolves.toBe('done');
    expect(run.calls()).toBe(3);
    expect(lines).toEqual([
      '429 from the Messages API: retrying in 0 s (attempt 2 of 5)',
      '529 from the Messages API: retrying in 0 s (attempt 3 of 5)',
    ]);
  });

  it('gives up on a permanent error at once, and on the rest after the last attempt', async () => {
    const lines: string[] = [];
    const missing = scripted([new SessionNotFoundError('t', 's')]);
    await expect(withRetries(missing.attempt, (l) => lines.push(l), fast)).rejects.toThrow(/not found/);
    expect(missing.calls()).toBe(1);
    const down = scripted(
      Array.from({ length: 9 }, () => new TransientError('500', { status: 500, requestId: null })),
    );
    await expect(withRetries(down.attempt, (l) => lines.push(l), { ...fast, attempts: 3 })).rejects.toThrow(
      '500',
    );
    expect(down.calls()).toBe(3);
    expect(lines).toHaveLength(2);
  });
});

describe('retryLine', () => {
  it("names the API's status and the wait in seconds", () => {
    const limited = new RateLimitedError('x', { retryAfterMs: 1_000, requestId: null });
    expect(retryLine(limited, 1_000, 2, 5)).toBe(
      '429 from the Messages API: retrying in 1 s (attempt 2 of 5)',
    );
    const unreachable = new TransientError('Anthropic API unreachable: reset', {
      status: null,
      requestId: null,
    });
    expect(retryLine(unreachable, 1_500, 3, 5)).toBe(
      'Anthropic API unreachable: reset: retrying in 1.5 s (attempt 3 of 5)',
    );
  });
});
