/**
 * The HTTP API's per-tenant limits (shared/policy/limits.ts) where they are enforced in the API
 * process: the request rate and the context reads served at once. (The session size is enforced by
 * the producer's append, in Postgres; the context size by the context read, in its one statement.)
 *
 * The request rate is counted by rate-limiter-flexible, in Redis when the API is given a connection,
 * or in Postgres (its Drizzle store, worker/postgres/rate-limits.ts) when given compactor's
 * database, as on the `postgres` queue backend (so every API process of the install counts one
 * budget per tenant), else in this process's memory. A `BurstyRateLimiter` allows
 * `requestsPerSecond` per second and, on top of it, `burst` requests per {@link BURST_WINDOW_S} s.
 * When the store cannot answer, each process falls back to the same limits in its own memory
 * (`insuranceLimiter`) rather than refusing or waiting.
 */
import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterStoreAbstract,
} from 'rate-limiter-flexible';
import type { Db } from '../../../producer/postgres/db.ts';
import type { RedisConnection } from '../../../producer/redis/redis.ts';
import { BURST_WINDOW_S, DEFAULT_LIMITS, type Limits, resolveLimits } from '../../../shared/policy/limits.ts';
import type { PolicySource } from '../../postgres/policies.ts';
import { postgresRateLimiter } from '../../postgres/rate-limits.ts';

/**
 * How many requests a request whose body the API refused counts as against its tenant's rate
 * (`requestsPerSecond` and `burst`): 10, so a tenant can have at most a tenth of its rate's
 * requests refused for their body before it is answered 429.
 */
export const REFUSED_BODY_COST = 10;

/** Where the limits come from and where the request rate is counted. */
export interface TenantLimitsOptions {
  /** The tenants' policies (their `limits`), read per request: give a cache (worker/postgres/policy-cache.ts). */
  policies: PolicySource;
  /** The limits of a tenant whose policy sets none (default `DEFAULT_LIMITS`). */
  defaults?: Limits;
  /** Redis to count request rates in, shared by the API processes; absent: `postgres`, or memory. */
  redis?: RedisConnection;
  /** compactor's database to count request rates in (`rate_limits`), when there is no `redis`. */
  postgres?: Db;
  /** Prefix of the Redis keys (the install's queue prefix); default `compactor`. */
  prefix?: string;
}

/** The per-tenant limits of one API app. */
export class TenantLimits {
  /** The limits of a tenant whose policy sets none. */
  readonly defaults: Limits;
  private readonly limiters = new Map<string, BurstyRateLimiter>();
  private readonly reading = new Map<string, number>();

  constructor(private readonly options: TenantLimitsOptions) {
    this.defaults = options.defaults ?? DEFAULT_LIMITS;
  }

  /** The limits in force for `tenantId`: its own policy's `limits` over the defaults. */
  async of(tenantId: string): Promise<Limits> {
    const { tenant } = await this.options.policies.get(tenantId, null);
    return resolveLimits(tenant?.limits, this.defaults);
  }

  /**
   * Counts one request of `tenantId` against its rate.
   * @returns null when it may be served, else the ms until it may try again (at least 1).
   */
  async request(tenantId: string, limits: Limits): Promise<number | null> {
    try {
      await this.limiterFor(limits).consume(tenantId);
      return null;
    } catch (rejected) {
      if (rejected instanceof RateLimiterRes) return Math.max(1, rejected.msBeforeNext);
      throw rejected;
    }
  }

  /**
   * Counts a request of `tenantId` whose body was refused (worker/http/body/body-reader.ts
   * `bodyRefused`) as {@link REFUSED_BODY_COST} requests in all, so that a tenant sending bodies
   * the API refuses (malformed, nested too deep, too large, in a coding it does not decode) is
   * held to a tenth of its request rate, as a client that keeps sending them is not a client
   * that will succeed: its next requests are answered 429 with `retry-after`, before their
   * bodies are read. The request itself was already counted once, by {@link request}.
   * @throws what the store throws when neither it nor its in-memory insurance can count (the
   *   caller logs it; the refusal stands as it was answered).
   */
  async penalize(tenantId: string, limits: Limits): Promise<void> {
    try {
      await this.limiterFor(limits).consume(tenantId, REFUSED_BODY_COST - 1);
    } catch (rejected) {
      // Over the rate already: the points were counted all the same (rate-limiter-flexible counts
      // a refused consume), which is what a penalty is for.
      if (!(rejected instanceof RateLimiterRes)) throw rejected;
    }
  }

  /**
   * Starts a context read of `tenantId` if fewer than its `maxConcurrentContextReads` are under way
   * in this process.
   * @returns the function that ends it (call it once, when the response is sent or failed), or
   *   null when the tenant has as many under way as it may.
   */
  startContextRead(tenantId: string, limits: Limits): (() => void) | null {
    const now = this.reading.get(tenantId) ?? 0;
    if (now >= limits.maxConcurrentContextReads) return null;
    this.reading.set(tenantId, now + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.reading.get(tenantId) ?? 1) - 1;
      if (left <= 0) this.reading.delete(tenantId);
      else this.reading.set(tenantId, left);
    };
  }

  /** The limiter of one (rate, burst) pair; tenants with the same pair share it (keys are per tenant). */
  private limiterFor({ requestsPerSecond, burst }: Limits): BurstyRateLimiter {
    const key = `${requestsPerSecond}/${burst}`;
    let limiter = this.limiters.get(key);
    if (!limiter) {
      const prefix = `${this.options.prefix ?? 'compactor'}:limits`;
      limiter = new BurstyRateLimiter(
        this.store({
          keyPrefix: `${prefix}:rate:${requestsPerSecond}`,
          points: requestsPerSecond,
          duration: 1,
        }),
        this.store({ keyPrefix: `${prefix}:burst:${burst}`, points: burst, duration: BURST_WINDOW_S }),
      );
      this.limiters.set(key, limiter);
    }
    return limiter;
  }

  /** A counter of `points` per `duration` s: in Redis or Postgres (memory as its insurance), or in memory. */
  private store(opts: {
    keyPrefix: string;
    points: number;
    duration: number;
  }): RateLimiterStoreAbstract | RateLimiterMemory {
    const memory = new RateLimiterMemory(opts);
    if (!this.options.redis && this.options.postgres)
      return postgresRateLimiter(this.options.postgres, { ...opts, insuranceLimiter: memory });
    if (!this.options.redis) return memory;
    return new RateLimiterRedis({
      ...opts,
      storeClient: this.options.redis,
      rejectIfRedisNotReady: true,
      insuranceLimiter: memory,
    });
  }
}
