/**
 * The per-session lease on the `postgres` queue backend: a row of `session_leases` per session
 * (producer/postgres/schema.ts), taken by insert (or by taking over a row whose `expires_at` has
 * passed, which counts its `fence` up), renewed while held and released by the holder's token, the
 * same contract as the Redis lease (worker/redis/lease.ts). Expiry is read on the database's clock
 * (`now()`), so the workers' clocks need not agree. It stops two workers from paying for the same
 * LLM call; it is NOT what keeps data correct (the version fence in worker/postgres/writes.ts is).
 * Its rows commit asynchronously (producer/postgres/async-commit.ts): a Postgres crash may forget
 * the last of them, as it ends their holders' connections.
 */
import { randomUUID } from 'node:crypto';
import { ASYNC_COMMIT } from '../../producer/postgres/async-commit.ts';
import type { Db } from '../../producer/postgres/db.ts';
import { executePrepared } from '../../producer/postgres/db.ts';
import { sessionKeyOf } from '../../shared/protocol/events.ts';
import type { Lease, Leases } from '../pipeline/ports.ts';
import { holdLease } from '../redis/lease.ts';

/** $1 tenant, $2 session, $3 token, $4 ttl ms. Returns the row when the lease is ours. */
const TAKE = `${ASYNC_COMMIT} insert into session_leases (tenant_id, session_id, token, expires_at)
  select $1::text, $2::text, $3::uuid, now() + $4::int * interval '1 millisecond' from async_commit
  on conflict (tenant_id, session_id) do update
    set token = excluded.token, fence = session_leases.fence + 1, expires_at = excluded.expires_at
    where session_leases.expires_at <= now()
  returning fence`;

/** $1 tenant, $2 session, $3 token, $4 ttl ms. A row when the lease was still ours and alive. */
const RENEW = `${ASYNC_COMMIT} update session_leases set expires_at = now() + $4::int * interval '1 millisecond'
  where tenant_id = $1::text and session_id = $2::text and token = $3::uuid and expires_at > now()
    and exists (select from async_commit)
  returning fence`;

/** $1 tenant, $2 session, $3 token. Deletes the row only while it is ours. */
const RELEASE = `${ASYNC_COMMIT} delete from session_leases
  where tenant_id = $1::text and session_id = $2::text and token = $3::uuid and exists (select from async_commit)`;

export interface PostgresLeasesOptions {
  /** Lease time-to-live, ms, ≥ 100. Renewed every ttl/3. Default 30,000. */
  ttlMs?: number;
}

/** Per-session leases in compactor's schema. */
export class PostgresLeases implements Leases {
  private readonly ttlMs: number;

  /** @throws {Error} when `ttlMs` is not an integer ≥ 100. */
  constructor(
    private readonly db: Db,
    options: PostgresLeasesOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    if (!Number.isInteger(this.ttlMs) || this.ttlMs < 100)
      throw new Error('PostgresLeases: ttlMs must be an integer ≥ 100');
  }

  /** The lease's name in logs and in {@link Lease.key}: `lease:<tenant/session key>`. */
  keyOf(tenantId: string, sessionId: string): string {
    return `lease:${sessionKeyOf(tenantId, sessionId)}`;
  }

  /**
   * Tries once to take the lease.
   * @returns the lease, or null while another holder's lease has not expired.
   * @throws when Postgres cannot be reached.
   */
  async acquire(tenantId: string, sessionId: string): Promise<Lease | null> {
    const token = randomUUID();
    const params = [tenantId, sessionId, token, this.ttlMs];
    const taken = await executePrepared(this.db, { sql: TAKE, params });
    if (taken.length === 0) return null;
    return holdLease({
      key: this.keyOf(tenantId, sessionId),
      token,
      ttlMs: this.ttlMs,
      renew: async () => (await executePrepared(this.db, { sql: RENEW, params })).length === 1,
      release: async () => {
        await executePrepared(this.db, { sql: RELEASE, params: [tenantId, sessionId, token] });
      },
    });
  }
}
