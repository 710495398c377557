/**
 * Per-tenant limits: what keeps one tenant from taking the API, the database or the memory of an
 * API process from the others. Pure: the schema of a tenant policy's `limits`, the built-in
 * defaults, and the rule that merges them.
 *
 * Precedence, most specific first: the tenant policy's `limits` (each field on its own) > the
 * process's defaults (`COMPACTOR_LIMIT_*`, worker/config/config.ts) > {@link DEFAULT_LIMITS}.
 * Limits are per tenant: only the tenant's own policy carries them (an agent's policy cannot).
 *
 * A session never holds more than a read returns: an append is held to `maxContextTokens` as well
 * as to `maxSessionTokens` (producer/limits.ts, and the statement that counts it in), whatever the
 * two are set to, so no write can make a session whose context every read refuses. A policy that
 * sets both must set `maxSessionTokens` at most `maxContextTokens` (refused otherwise, naming both);
 * the process's defaults are held to the same rule (worker/config/config.ts).
 */
import { z } from 'zod';

/** A tenant policy's `limits`: any subset; what is left out comes from the defaults. */
export const limitsSchema = z
  .object({
    /**
     * Sustained API requests per second of the tenant, all routes and API processes together
     * (counted in Redis). Past it and its burst: 429 with `retry-after`.
     */
    requestsPerSecond: z.number().int().min(1).max(1_000_000).optional(),
    /** Requests above `requestsPerSecond` allowed in any 10 s window (a burst on top of the rate). */
    burst: z.number().int().min(0).max(10_000_000).optional(),
    /** Live messages a session may hold: an append that would pass it is refused (413). */
    maxSessionMessages: z.number().int().min(1).max(100_000_000).optional(),
    /**
     * Live estimated tokens a session may hold: an append that would pass it, or pass
     * `maxContextTokens`, is refused (413). At most `maxContextTokens` when both are set.
     */
    maxSessionTokens: z.number().int().min(1).max(10_000_000_000).optional(),
    /**
     * Largest context a read returns, bytes of the stored message content it renders: past it, the
     * read is refused (422) before anything is loaded. Default 32,000,000, the Messages API's own
     * request limit: a larger context could not be sent anyway.
     */
    maxContextBytes: z.number().int().min(1_024).max(1_073_741_824).optional(),
    /**
     * Largest context a read returns, estimated tokens of the live session: past it, the read is
     * refused (422) before anything is loaded. Default 1,000,000, the largest context window of a
     * Claude model: a larger context fits no model.
     */
    maxContextTokens: z.number().int().min(1_000).max(100_000_000).optional(),
    /** Context reads of the tenant served at once by one API process; more: 429 with `retry-after`. */
    maxConcurrentContextReads: z.number().int().min(1).max(1_000).optional(),
    /**
     * Compaction jobs of the tenant running at once, across all workers, while another tenant has
     * work pending (worker/redis/tenant-slots.ts); a job past it waits, no attempt used. Absent: the
     * worker's `COMPACTOR_TENANT_MAX_ACTIVE_JOBS`, else half its concurrency. Read by the workers,
     * not the API, so it is not among the API's {@link Limits}.
     */
    maxActiveJobs: z.number().int().min(1).max(100_000).optional(),
  })
  .strict()
  .refine(
    (limits) =>
      limits.maxSessionTokens === undefined ||
      limits.maxContextTokens === undefined ||
      limits.maxSessionTokens <= limits.maxContextTokens,
    {
      path: ['maxSessionTokens'],
      message:
        'must be at most maxContextTokens: a session larger than the largest context a read returns could never be read',
    },
  );

/** The API's limits in force for one tenant: every field set. */
export type Limits = Required<Omit<z.infer<typeof limitsSchema>, 'maxActiveJobs'>>;

/** The limits a tenant policy may set, each optional. */
export type LimitsInput = z.infer<typeof limitsSchema>;

/** The window of {@link Limits.burst}, seconds. */
export const BURST_WINDOW_S = 10;

/**
 * The built-in defaults: generous for an agent service (100 requests/s sustained, each of its
 * sessions as large as the largest context window of a Claude model, the most a read returns),
 * tight enough that no tenant can fill an API process: 4 context reads at once of at most 32 MB each.
 */
export const DEFAULT_LIMITS: Limits = {
  requestsPerSecond: 100,
  burst: 200,
  maxSessionMessages: 100_000,
  maxSessionTokens: 1_000_000,
  maxContextBytes: 32_000_000,
  maxContextTokens: 1_000_000,
  maxConcurrentContextReads: 4,
};

/**
 * The part of {@link Limits} an append checks: the session's size, and the largest context a read
 * returns, which the session may not pass either.
 */
export type SessionLimits = Pick<Limits, 'maxSessionMessages' | 'maxSessionTokens' | 'maxContextTokens'>;

/**
 * The limits in force: each field of the tenant policy's `limits` over `defaults`.
 * @param defaults the process's defaults (default {@link DEFAULT_LIMITS}).
 */
export function resolveLimits(tenant: LimitsInput | undefined, defaults: Limits = DEFAULT_LIMITS): Limits {
  const { maxActiveJobs: _workers, ...api } = tenant ?? {};
  const set = Object.fromEntries(Object.entries(api).filter(([, v]) => v !== undefined));
  return { ...defaults, ...set };
}
