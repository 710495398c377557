/**
 * What the `postgres` queue backend keeps in compactor's schema instead of Redis: the per-session
 * lease (taken once, expires, renewed while held, released only by its holder's token, a stolen
 * lease refused), the tenants' backlog counts that rank their jobs, and the worker slots that hold
 * a noisy tenant to its share; and `compactor migrate` creating BullMQ's schema. Runs in the
 * `postgres` vitest project only.
 */
import { PostgresConnection } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASYNC_COMMIT } from '../../producer/postgres/async-commit.ts';
import { postgresQueueBackend } from '../../producer/queue/backend.ts';
import { postgresTenantBacklog } from '../../producer/queue/tenant-backlog.ts';
import { PostgresLeases } from '../../worker/postgres/lease.ts';
import { createPostgresTenantSlots } from '../../worker/postgres/tenant-slots.ts';
import { runCli } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase, waitFor } from '../support/fixtures.ts';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
});

afterAll(async () => {
  await tdb.drop();
});

/** The lease row of a session, as Postgres holds it. */
async function leaseRow(tenantId: string, sessionId: string) {
  const [row] = await tdb.database.sql<{ token: string; fence: number; live: boolean }[]>`
    select token::text as token, fence::int as fence, expires_at > now() as live
      from session_leases where tenant_id = ${tenantId} and session_id = ${sessionId}`;
  return row;
}

/** A tenant's worker-slot rows in Postgres (`n`) and how many of them are held now (`held`). */
async function placesOf(tenantId: string) {
  const [row] = await tdb.database.sql<{ n: number; held: number }[]>`
    select count(*)::int as n, count(*) filter (where expires_at > now())::int as held
      from tenant_worker_slots where tenant_id = ${tenantId}`;
  return row ?? { n: 0, held: 0 };
}

/**
 * Tenant slots with a cap of 1 and an active window of `windowMs`, once the window of the tenants
 * the tests before enqueued for has passed (so a tenant asking next is alone).
 */
async function slotsOnceQuiet(windowMs: number, options: { releaseDelayMs?: number } = {}) {
  const slots = createPostgresTenantSlots(tdb.database.db, {
    prefix: 'unused',
    maxActive: 1,
    activeWindowMs: windowMs,
    ...options,
  });
  await new Promise((resolve) => setTimeout(resolve, windowMs + 100));
  return slots;
}

describe('the session lease in Postgres', () => {
  it('is held by one worker at a time, per session and tenant', async () => {
    const leases = new PostgresLeases(tdb.database.db, { ttlMs: 5_000 });
    const first = await leases.acquire('acme', 's1');
    expect(first).not.toBeNull();
    expect(await leases.acquire('acme', 's1')).toBeNull();
    // Another session, and the same session id of another tenant, are other leases.
    const other = await leases.acquire('acme', 's2');
    const otherTenant = await leases.acquire('globex', 's1');
    expect(other).not.toBeNull();
    expect(otherTenant).not.toBeNull();
    expect((await leaseRow('acme', 's1'))?.token).toBe(first?.token);
    await Promise.all([first?.release(), other?.release(), otherTenant?.release()]);
    expect(await leaseRow('acme', 's1')).toBeUndefined();
    // Released: the next worker takes it at once.
    const next = await leases.acquire('acme', 's1');
    expect(next).not.toBeNull();
    await next?.release();
  });

  it('expires when its holder stops renewing, and the next holder gets a higher fence', async () => {
    const leases = new PostgresLeases(tdb.database.db, { ttlMs: 300 });
    const first = await leases.acquire('acme', 'crashed');
    if (!first) throw new Error('lease not taken');
    const fenceBefore = (await leaseRow('acme', 'crashed'))?.fence ?? 0;
    // A crashed holder: its renewals stop (the timer of a dead process), its row stays.
    await tdb.database.sql`
      update session_leases set expires_at = now() - interval '1 second'
       where tenant_id = 'acme' and session_id = 'crashed'`;
    const second = await leases.acquire('acme', 'crashed');
    expect(second).not.toBeNull();
    expect((await leaseRow('acme', 'crashed'))?.fence).toBe(fenceBefore + 1);
    // The first holder learns it lost the lease on its next renewal, and its release takes nothing.
    await waitFor(async () => (first.signal.aborted ? true : undefined), 5_000);
    await first.release();
    expect((await leaseRow('acme', 'crashed'))?.token).toBe(second?.token);
    await second?.release();
  });

  it('stays held past its TTL while its holder renews it', async () => {
    const leases = new PostgresLeases(tdb.database.db, { ttlMs: 300 });
    const held = await leases.acquire('acme', 'long');
    if (!held) throw new Error('lease not taken');
    // Three TTLs later (renewed every 100 ms), it is still the holder's and still live.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(held.signal.aborted).toBe(false);
    expect(await leaseRow('acme', 'long')).toMatchObject({ token: held.token, live: true });
    expect(await leases.acquire('acme', 'long')).toBeNull();
    await held.release();
  });

  it('is released only by its own token: a stolen lease is refused to the old holder', async () => {
    const leases = new PostgresLeases(tdb.database.db, { ttlMs: 5_000 });
    const mine = await leases.acquire('acme', 'stolen');
    if (!mine) throw new Error('lease not taken');
    // Another holder takes the row over (as after an expiry).
    await tdb.database.sql`
      update session_leases set token = gen_random_uuid()
       where tenant_id = 'acme' and session_id = 'stolen'`;
    const thief = (await leaseRow('acme', 'stolen'))?.token;
    await mine.release();
    // The old holder's release leaves the new holder's lease alone.
    expect((await leaseRow('acme', 'stolen'))?.token).toBe(thief);
    expect(await leases.acquire('acme', 'stolen')).toBeNull();
  });

  it('refuses a TTL under 100 ms, naming it', () => {
    expect(() => new PostgresLeases(tdb.database.db, { ttlMs: 50 })).toThrow(
      /ttlMs must be an integer ≥ 100/,
    );
  });
});

describe('the fair order in Postgres', () => {
  it('ranks each tenant’s jobs by its own backlog, so a quiet tenant’s first job comes first', async () => {
    const backlog = postgresTenantBacklog(tdb.database.db);
    const noisy = [];
    for (let i = 0; i < 5; i++) noisy.push(await backlog.take('noisy'));
    expect(noisy).toEqual([1, 2, 3, 4, 5]);
    expect(await backlog.take('quiet')).toBe(1);
    // Counted out as jobs finish; never below zero; the row stays at zero (its last enqueue says
    // the tenant was active lately).
    expect(await backlog.release('noisy')).toBe(4);
    expect(await backlog.release('quiet')).toBe(0);
    expect(await backlog.release('quiet')).toBe(0);
    const rows = await tdb.database.sql<{ tenant_id: string; pending: number }[]>`
      select tenant_id, pending from tenant_backlogs order by tenant_id`;
    expect(rows.map((r) => [r.tenant_id, r.pending])).toEqual([
      ['noisy', 4],
      ['quiet', 0],
    ]);
    for (let i = 0; i < 4; i++) await backlog.release('noisy');
  });

  it('forgets a count its tenant left an hour ago: the next job ranks first again', async () => {
    const backlog = postgresTenantBacklog(tdb.database.db);
    await backlog.take('leaky');
    await backlog.take('leaky');
    await tdb.database.sql`
      update tenant_backlogs set last_enqueued_at = now() - interval '2 hours' where tenant_id = 'leaky'`;
    expect(await backlog.take('leaky')).toBe(1);
    await backlog.release('leaky');
  });

  it('holds a tenant at its share while another has work or enqueued lately, and not when alone', async () => {
    const backlog = postgresTenantBacklog(tdb.database.db);
    const windowMs = 1_000;
    const slots = await slotsOnceQuiet(windowMs);
    // Alone with work, a tenant runs on every slot.
    const a = await slots.acquire('solo');
    const b = await slots.acquire('solo');
    expect(a).not.toBeNull();
    expect(b).not.toBeNull();
    // Another tenant has a job pending: the busy one gets no slot past its share.
    await backlog.take('calm');
    expect(await slots.acquire('solo')).toBeNull();
    const calm = await slots.acquire('calm');
    expect(calm).not.toBeNull();
    // The calm tenant's job done and counted out: it enqueued a moment ago, so it is still active.
    await Promise.all([b?.release(), calm?.release()]);
    await backlog.release('calm');
    expect(await slots.acquire('solo')).toBeNull();
    // Once its window has passed, the busy tenant is alone again and runs on every slot.
    await new Promise((resolve) => setTimeout(resolve, windowMs + 100));
    const again = await slots.acquire('solo');
    expect(again).not.toBeNull();
    await Promise.all([a?.release(), again?.release()]);
    await slots.flush();
    const [left] = await tdb.database.sql<{ n: number }[]>`
      select count(*)::int as n from tenant_worker_slots where expires_at > now()`;
    expect(left?.n).toBe(0);
  });
  it('gives a tenant no more than its share when its workers ask at once', async () => {
    const backlog = postgresTenantBacklog(tdb.database.db);
    const slots = createPostgresTenantSlots(tdb.database.db, { prefix: 'unused', maxActive: 3 });
    // Another tenant has a job pending, so the crowded one is held to its share of 3.
    await backlog.take('waiting');
    const asked = await Promise.all(Array.from({ length: 24 }, () => slots.acquire('crowded')));
    const held = asked.filter((slot) => slot !== null);
    expect(held).toHaveLength(3);
    await Promise.all(held.map((slot) => slot.release()));
    await backlog.release('waiting');
    await slots.flush();
    expect((await placesOf('crowded')).held).toBe(0);
  });
  it('keeps a tenant to about as many rows as it held places at once, however many jobs it runs', async () => {
    // Every job takes its place (none passed on), so the takes are what reuse the places.
    const slots = createPostgresTenantSlots(tdb.database.db, {
      prefix: 'unused',
      maxActive: 4,
      handoverMs: 0,
    });
    for (let job = 0; job < 30; job++) {
      const pair = await Promise.all([slots.acquire('steady'), slots.acquire('steady')]);
      expect(pair.every((slot) => slot !== null)).toBe(true);
      await Promise.all(pair.map((slot) => slot?.release()));
    }
    await slots.flush();
    const rows = await placesOf('steady');
    // Two places at once; a take that raced another's give-back may have added one more. Not 60.
    expect(rows.held).toBe(0);
    expect(rows.n).toBeGreaterThanOrEqual(2);
    expect(rows.n).toBeLessThanOrEqual(4);
  });

  it("reuses a crashed holder's place once it expires, and the old holder's release leaves the new one's alone", async () => {
    const slots = createPostgresTenantSlots(tdb.database.db, { prefix: 'unused', maxActive: 1 });
    const crashed = await slots.acquire('crashed');
    // Its worker stopped renewing it: the place expired.
    await tdb.database.sql`
      update tenant_worker_slots set expires_at = now() - interval '1 second' where tenant_id = 'crashed'`;
    const next = await slots.acquire('crashed');
    expect(next).not.toBeNull();
    expect(await placesOf('crashed')).toEqual({ n: 1, held: 1 });
    await crashed?.release();
    await slots.flush();
    expect(await placesOf('crashed')).toEqual({ n: 1, held: 1 });
    await next?.release();
    await slots.flush();
    expect(await placesOf('crashed')).toEqual({ n: 1, held: 0 });
  });

  it('gives a released slot back with the next take, or alone once no take came, and counts it out', async () => {
    const backlog = postgresTenantBacklog(tdb.database.db);
    const releaseDelayMs = 300;
    const slots = createPostgresTenantSlots(tdb.database.db, {
      prefix: 'unused',
      maxActive: 1,
      releaseDelayMs,
      // The next take carries the release: no place is passed on without one.
      handoverMs: 0,
    });
    const slotsOf = async (tenant: string) => (await placesOf(tenant)).held;
    // Another tenant is waiting, so the busy one is held to its one slot.
    await backlog.take('patient');
    const first = await slots.acquire('busy');
    expect(first).not.toBeNull();
    await first?.release();
    // Held back: still a row, but the next take gives it back before it counts, and takes the slot.
    expect(await slotsOf('busy')).toBe(1);
    const second = await slots.acquire('busy');
    expect(second).not.toBeNull();
    expect(await slotsOf('busy')).toBe(1);
    // No take comes: the release goes alone once its delay has passed.
    await second?.release();
    await new Promise((resolve) => setTimeout(resolve, releaseDelayMs + 200));
    expect(await slotsOf('busy')).toBe(0);
    await backlog.release('patient');
  });
});

describe("passing a tenant's place to its next job", () => {
  /** A tenant's places and their holders' tokens, held ones only. */
  async function heldPlaces(tenantId: string) {
    return tdb.database.sql<{ slot: number; token: string }[]>`
      select slot, token::text as token from tenant_worker_slots
        where tenant_id = ${tenantId} and expires_at > now() order by slot`;
  }

  it('passes a place of its share, or one granted while it was alone, with no statement; not once another tenant is refused in', async () => {
    const backlog = postgresTenantBacklog(tdb.database.db);
    const slots = await slotsOnceQuiet(500, { releaseDelayMs: 60_000 });
    // Place 1 is its share; place 2, beyond its cap of 1, was granted because it was alone.
    const share = await slots.acquire('handing');
    const alone = await slots.acquire('handing');
    const before = await heldPlaces('handing');
    expect(before.map((p) => p.slot)).toEqual([1, 2]);
    await alone?.release();
    const next = await slots.acquire('handing');
    expect(next).not.toBeNull();
    // The same holder's token on both places: the next job took place 2 over, no take ran.
    expect(await heldPlaces('handing')).toEqual(before);
    // Another tenant has a job pending: a take past the share is refused...
    await backlog.take('arriving');
    expect(await slots.acquire('handing')).toBeNull();
    // ...and place 2, granted before that, goes back by a take, which refuses the next job too.
    await next?.release();
    expect(await slots.acquire('handing')).toBeNull();
    expect((await heldPlaces('handing')).map((p) => p.slot)).toEqual([1]);
    // Its own share still passes on, whoever else is active.
    await share?.release();
    const own = await slots.acquire('handing');
    expect(own).not.toBeNull();
    expect(await heldPlaces('handing')).toEqual(before.slice(0, 1));
    await own?.release();
    await backlog.release('arriving');
    await slots.flush();
    expect((await placesOf('handing')).held).toBe(0);
  });
});

describe('asynchronous commit of what a Postgres crash may forget', () => {
  /** `synchronous_commit` inside a transaction that ran `statement`, and on the connection after it. */
  async function settingAround(statement: string, params: unknown[] = []) {
    const connection = await tdb.database.sql.reserve();
    try {
      await connection`begin`;
      await connection.unsafe(statement, params as never[]);
      const [inside] = await connection<{ synchronous_commit: string }[]>`show synchronous_commit`;
      await connection`commit`;
      const [after] = await connection<{ synchronous_commit: string }[]>`show synchronous_commit`;
      return { inside: inside?.synchronous_commit, after: after?.synchronous_commit };
    } finally {
      connection.release();
    }
  }

  it('turns it off for the transaction of a tenant slot only, and for a statement led by the CTE, even one that matches no row', async () => {
    expect(
      await settingAround(
        "select take_tenant_worker_slot('async', gen_random_uuid(), 60000, 4, 60000, 60000, '{}', '{}', '{}')",
      ),
    ).toEqual({ inside: 'off', after: 'on' });
    expect(
      await settingAround(
        `${ASYNC_COMMIT} update tenant_backlogs set pending = pending where tenant_id = $1 and exists (select from async_commit)`,
        ['nobody'],
      ),
    ).toEqual({ inside: 'off', after: 'on' });
    await tdb.database.sql`delete from tenant_worker_slots where tenant_id = 'async'`;
  });

  it("gives a queue link that asks for it a pool whose every commit is asynchronous, in BullMQ's schema", async () => {
    const backend = postgresQueueBackend({ connection: tdb.url, schema: 'jobs_async' });
    const settingsOf = async (asyncCommit: boolean) => {
      const config = backend.link({ asyncCommit }).options.connection as object;
      const connection = new PostgresConnection({ ...config, skipVersionCheck: true });
      try {
        const { rows } = await connection.pool.query(
          "select current_setting('synchronous_commit') as commit, current_setting('search_path') as path",
        );
        return rows[0];
      } finally {
        await connection.close();
      }
    };
    expect(await settingsOf(true)).toEqual({ commit: 'off', path: '"jobs_async"' });
    expect(await settingsOf(false)).toEqual({ commit: 'on', path: '"jobs_async"' });
  });
});

describe('compactor migrate on the postgres queue backend', () => {
  it("creates BullMQ's tables in the queue schema it is given, and says so; again, changes nothing", async () => {
    const env = {
      DATABASE_URL: tdb.url,
      COMPACTOR_QUEUE_BACKEND: 'postgres',
      COMPACTOR_QUEUE_SCHEMA: 'jobs_elsewhere',
      COMPACTOR_LOG_LEVEL: 'warn',
    };
    const first = await runCli(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^queue schema "jobs_elsewhere" is at BullMQ schema version \d+$/m);
    const [made] = await tdb.database.sql<{ ledger: string | null }[]>`
      select to_regclass('jobs_elsewhere.migration')::text as ledger`;
    expect(made?.ledger).toBe('jobs_elsewhere.migration');
    const again = await runCli(['migrate'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(first.stdout.trim().split('\n').at(-1));
    await tdb.database.sql`drop schema jobs_elsewhere cascade`;
  });

  it("refuses a queue schema equal to compactor's, naming both variables, and creates nothing", async () => {
    const run = await runCli(['migrate'], {
      DATABASE_URL: tdb.url,
      COMPACTOR_QUEUE_BACKEND: 'postgres',
      COMPACTOR_QUEUE_SCHEMA: 'compactor',
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('COMPACTOR_QUEUE_SCHEMA and COMPACTOR_SCHEMA are both "compactor"');
  });
});
