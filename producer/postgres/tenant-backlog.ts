/**
 * The tenants' fair order on the `postgres` queue backend: the backlog counts of
 * producer/redis/tenant-backlog.ts (which explains the order) as rows of `tenant_backlogs`. A job
 * counts itself in and takes its count as its BullMQ priority; the worker counts it out when it
 * finishes. A count whose tenant last enqueued over {@link BACKLOG_TTL_MS} ago is stale (a leak:
 * a job removed by hand, a worker killed between finishing a job and counting it out): the next
 * enqueue starts it again at 1, and the worker slots ignore it. The counts commit asynchronously
 * (./async-commit.ts): a Postgres crash may forget the last of them, which the time-to-live covers.
 */
import { BACKLOG_TTL_MS, MAX_JOB_PRIORITY } from '../redis/tenant-backlog.ts';
import { ASYNC_COMMIT } from './async-commit.ts';
import { type Db, executePrepared } from './db.ts';

export { BACKLOG_TTL_MS };

/** $1 tenant, $2 stale after (ms). Returns the tenant's new count. */
const TAKE = `${ASYNC_COMMIT} insert into tenant_backlogs (tenant_id, pending, last_enqueued_at)
  select $1::text, 1, now() from async_commit
  on conflict (tenant_id) do update set
    pending = case when tenant_backlogs.last_enqueued_at < now() - $2::int * interval '1 millisecond'
                   then 1 else tenant_backlogs.pending + 1 end,
    last_enqueued_at = now()
  returning pending`;

/**
 * $1 tenant. Counts one out, never below zero. The row stays at 0 rather than going: its last
 * enqueue is what tells the worker share that the tenant was active lately (a stale row counts as
 * nothing, and the next enqueue starts it again). Returns the count left (no row: 0).
 */
const RELEASE = `${ASYNC_COMMIT} update tenant_backlogs set pending = greatest(pending - 1, 0)
  where tenant_id = $1::text and exists (select from async_commit)
  returning pending`;

/**
 * Counts a job into its tenant's backlog and returns the BullMQ priority it should be added with:
 * its rank in that backlog, 1 to {@link MAX_JOB_PRIORITY}.
 * @throws when Postgres cannot be reached.
 */
export async function takeJobPriority(db: Db, tenantId: string): Promise<number> {
  const [row] = await executePrepared<{ pending: number }>(db, {
    sql: TAKE,
    params: [tenantId, BACKLOG_TTL_MS],
  });
  return Math.min(Math.max(Number(row?.pending ?? 1), 1), MAX_JOB_PRIORITY);
}

/**
 * Counts a finished (or never added) job out of its tenant's backlog. Never goes below zero.
 * @returns the tenant's jobs still counted.
 */
export async function releaseJobPriority(db: Db, tenantId: string): Promise<number> {
  const [row] = await executePrepared<{ pending: number }>(db, { sql: RELEASE, params: [tenantId] });
  return Number(row?.pending ?? 0);
}
