/**
 * The tenants' shares of the workers on the `postgres` queue backend: the worker slots of
 * worker/redis/tenant-slots.ts (which explains the cap) as rows of `tenant_slots`, one per running
 * job. A slot is taken in one transaction under a per-tenant advisory lock (so two workers cannot
 * both take a tenant's last slot): drop the tenant's expired slots, count the rest, and refuse
 * when the tenant is at its cap while another tenant is active: it has jobs pending or enqueued
 * within the active window (`tenant_backlogs`, stale counts ignored). A slot is renewed while held and released by token; a crashed worker's slot
 * stops counting at `expires_at` (on the database's clock).
 */
import { randomUUID } from 'node:crypto';
import { type Db, executePrepared } from '../../producer/postgres/db.ts';
import { BACKLOG_TTL_MS } from '../../producer/postgres/tenant-backlog.ts';
import {
  DEFAULT_ACTIVE_WINDOW_MS,
  heldSlot,
  type TenantSlots,
  type TenantSlotsOptions,
} from '../redis/tenant-slots.ts';

const LOCK_TENANT = `select pg_advisory_xact_lock(hashtextextended('compactor.tenant_slots:' || $1::text, 0))`;
const DROP_EXPIRED = 'delete from tenant_slots where tenant_id = $1::text and expires_at <= now()';
/**
 * $1 tenant, $2 stale after (ms), $3 active window (ms). The tenant's running slots, and whether
 * another tenant is active: it has jobs pending, or it enqueued within the window.
 */
const COUNT = `select (select count(*) from tenant_slots where tenant_id = $1::text)::int as active,
  exists (select 1 from tenant_backlogs where tenant_id <> $1::text
          and last_enqueued_at >= now() - $2::int * interval '1 millisecond'
          and (pending > 0 or last_enqueued_at >= now() - $3::int * interval '1 millisecond')) as others`;
const TAKE = `insert into tenant_slots (tenant_id, token, expires_at)
  values ($1::text, $2::uuid, now() + $3::int * interval '1 millisecond')`;
const RENEW = `update tenant_slots set expires_at = now() + $3::int * interval '1 millisecond'
  where tenant_id = $1::text and token = $2::uuid`;
const RELEASE = 'delete from tenant_slots where tenant_id = $1::text and token = $2::uuid';

/**
 * Per-tenant worker slots in compactor's schema of `db` (`options.prefix` is not used: the schema
 * is the namespace).
 * @throws {Error} when `maxActive` is not a positive integer.
 */
export function createPostgresTenantSlots(db: Db, options: TenantSlotsOptions): TenantSlots {
  const { maxActive } = options;
  const ttlMs = options.ttlMs ?? 60_000;
  const activeWindowMs = options.activeWindowMs ?? DEFAULT_ACTIVE_WINDOW_MS;
  if (!Number.isInteger(maxActive) || maxActive < 1)
    throw new Error(`tenant slots: maxActive must be a positive integer, got ${maxActive}`);
  return {
    async acquire(tenantId) {
      const cap = (await options.maxActiveOf?.(tenantId)) ?? maxActive;
      const token = randomUUID();
      const taken = await db.transaction(async (tx) => {
        await executePrepared(tx, { sql: LOCK_TENANT, params: [tenantId] });
        await executePrepared(tx, { sql: DROP_EXPIRED, params: [tenantId] });
        const [count] = await executePrepared<{ active: number; others: boolean }>(tx, {
          sql: COUNT,
          params: [tenantId, BACKLOG_TTL_MS, activeWindowMs],
        });
        if (count && count.active >= cap && count.others) return false;
        await executePrepared(tx, { sql: TAKE, params: [tenantId, token, ttlMs] });
        return true;
      });
      if (!taken) return null;
      return heldSlot(
        ttlMs,
        () => executePrepared(db, { sql: RENEW, params: [tenantId, token, ttlMs] }),
        () => executePrepared(db, { sql: RELEASE, params: [tenantId, token] }),
      );
    },
  };
}
