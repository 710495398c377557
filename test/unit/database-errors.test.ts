/**
 * describeDatabaseError's own rules, without a database: what it quotes from DATABASE_URL, what it
 * leaves alone. The errors Postgres really throws are in test/integration/database-errors.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DatabaseError } from '../../shared/contract/errors.ts';
import { describeDatabaseError } from '../../worker/postgres/errors.ts';

/** A socket error as Node makes it (`connect ECONNREFUSED ...` with code, errno, address, port). */
function refused(address: string, port: number): Error {
  return Object.assign(new Error(`connect ECONNREFUSED ${address}:${port}`), {
    errno: -111,
    code: 'ECONNREFUSED',
    syscall: 'connect',
    address,
    port,
  });
}

describe('describeDatabaseError', () => {
  it('takes host and the default port from the URL, never its password', () => {
    const error = describeDatabaseError(refused('10.0.0.7', 5432), {
      url: 'postgres://app:s3cret@db.internal/compactor',
    });
    expect(error?.message).toBe(
      'connection refused at db.internal:5432: is PostgreSQL running there? (DATABASE_URL)',
    );
    expect(error?.message).not.toContain('s3cret');
  });

  it('looks inside an AggregateError (a host with several addresses)', () => {
    const both = new AggregateError([refused('::1', 5433), refused('127.0.0.1', 5433)], 'connect failed');
    expect(describeDatabaseError(both, { url: 'postgres://localhost:5433/x' })?.problem).toBe(
      'connection refused at localhost:5433',
    );
  });

  it('returns a DatabaseError as it is, and null for anything else', () => {
    const error = new DatabaseError('no compactor schema in database "x"', { hint: 'run it', code: null });
    expect(describeDatabaseError(error)).toBe(error);
    expect(describeDatabaseError(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBeNull();
    expect(describeDatabaseError(null)).toBeNull();
  });
});
