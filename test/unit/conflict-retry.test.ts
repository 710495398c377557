/**
 * A call Postgres aborted to break a deadlock or a serialization conflict runs again; any other
 * failure is thrown at once, and a conflict that keeps coming is thrown after the last attempt.
 */
import { describe, expect, it } from 'vitest';
import { isConflictAbort, retryOnConflict } from '../../worker/queue/sweeps/conflict-retry.ts';

/** An error as node-postgres and postgres.js throw it: Postgres's SQLSTATE as `code`. */
const pgError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

describe('retryOnConflict', () => {
  it('runs a call again after a deadlock and a serialization failure, and returns its answer', async () => {
    const failures = [pgError('40P01'), pgError('40001')];
    let calls = 0;
    const answer = await retryOnConflict(async () => {
      calls++;
      const failure = failures.shift();
      if (failure) throw failure;
      return 'scheduled';
    });
    expect(answer).toBe('scheduled');
    expect(calls).toBe(3);
  });

  it('throws any other failure at once', async () => {
    let calls = 0;
    const refused = retryOnConflict(async () => {
      calls++;
      throw pgError('23505');
    });
    await expect(refused).rejects.toThrow('sqlstate 23505');
    expect(calls).toBe(1);
  });

  it('gives up after five attempts with the last conflict', async () => {
    let calls = 0;
    const stuck = retryOnConflict(async () => {
      calls++;
      throw pgError('40P01');
    });
    await expect(stuck).rejects.toThrow('sqlstate 40P01');
    expect(calls).toBe(5);
  });

  it('reads the SQLSTATE through a wrapping error', () => {
    expect(isConflictAbort(new Error('failed query', { cause: pgError('40P01') }))).toBe(true);
    expect(isConflictAbort(new Error('no code'))).toBe(false);
    expect(isConflictAbort(Object.assign(new Error('socket'), { code: 'ECONNRESET' }))).toBe(false);
  });
});
