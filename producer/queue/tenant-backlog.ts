/**
 * The tenants' backlog counts that give each compaction job its fair priority
 * (producer/redis/tenant-backlog.ts explains the order), wherever the queue backend keeps them:
 * sorted sets under the queue prefix on Redis, rows of `tenant_backlogs` in compactor's schema on
 * Postgres (producer/postgres/tenant-backlog.ts).
 */
import type { Db } from '../postgres/db.ts';
import * as onPostgres from '../postgres/tenant-backlog.ts';
import type { RedisConnection } from '../redis/redis.ts';
import * as onRedis from '../redis/tenant-backlog.ts';

/** Counts a tenant's pending compaction jobs in and out. */
export interface TenantBacklog {
  /**
   * Counts a job in and returns the priority to add it with: its rank in its tenant's backlog, 1 to
   * 2^21. @throws when the store cannot be reached.
   */
  take(tenantId: string): Promise<number>;
  /** Counts a finished (or never added) job out; never below zero. @returns the count left. */
  release(tenantId: string): Promise<number>;
}

/** The counts in Redis, under the queue prefix. */
export function redisTenantBacklog(redis: RedisConnection, prefix: string): TenantBacklog {
  return {
    take: (tenantId) => onRedis.takeJobPriority(redis, prefix, tenantId),
    release: (tenantId) => onRedis.releaseJobPriority(redis, prefix, tenantId),
  };
}

/** The counts in compactor's schema of `db`. */
export function postgresTenantBacklog(db: Db): TenantBacklog {
  return {
    take: (tenantId) => onPostgres.takeJobPriority(db, tenantId),
    release: (tenantId) => onPostgres.releaseJobPriority(db, tenantId),
  };
}
