/**
 * The HTTP API's request-rate counters in Postgres (the `postgres` queue backend), counted by
 * rate-limiter-flexible's own Drizzle store (`RateLimiterDrizzle`, atomic: one upsert per request)
 * in the `rate_limits` table of compactor's schema, so every API process of the install counts one
 * budget per tenant, as `RateLimiterRedis` does on Redis.
 */
import { RateLimiterDrizzle, type RateLimiterMemory } from 'rate-limiter-flexible';
import type { Db } from '../../producer/postgres/db.ts';
import { rateLimits } from '../../producer/postgres/schema.ts';

/**
 * A counter of `points` per `duration` s under `keyPrefix`, in `db`; `insuranceLimiter` counts in
 * its place while Postgres cannot answer.
 */
export function postgresRateLimiter(
  db: Db,
  options: { keyPrefix: string; points: number; duration: number; insuranceLimiter: RateLimiterMemory },
): RateLimiterDrizzle {
  return new RateLimiterDrizzle({ ...options, storeClient: db, schema: rateLimits });
}
