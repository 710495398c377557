/**
 * The contract between producer and worker, in one file both import: queue name, job name and the
 * zod schema of `session.run.completed`. Parsed on enqueue and again on dequeue, so a bad event is
 * refused at the producer and a job written by anything else is still checked by the worker.
 */
import { z } from 'zod';
import { printable } from '../contract/errors.ts';
import { strategySchema } from '../strategies/index.ts';

/** BullMQ queue that carries compaction jobs. */
export const COMPACTION_QUEUE = 'compaction';
/** BullMQ job name of the event. */
export const RUN_COMPLETED = 'session.run.completed';

/**
 * Ids: 1-200 printable characters. No whitespace or control characters, no invisible formatting
 * characters (a bidi override or a zero-width space makes two different ids look the same), no
 * unpaired surrogates (Postgres and Redis would store U+FFFD instead), and no `.`/`..` path
 * segments (an id is never a path).
 */
export const idSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s\p{Cc}]*$/u, 'must not contain spaces, newlines or other control characters')
  .regex(
    /^[^\p{Cf}\p{Cs}]*$/u,
    'must not contain invisible formatting characters (bidi overrides, zero-width) or unpaired surrogates',
  )
  .refine((v) => !/(^|[/\\])\.\.?([/\\]|$)/.test(v), 'must not contain "." or ".." path segments');

/**
 * `session.run.completed`: an agent run finished on a session.
 * - `eventId` is the idempotency key, unique within the tenant (a UUID is best); the BullMQ job id
 *   is `jobIdOf(tenantId, eventId)`, so two tenants may use the same ids. BullMQ forbids `:` in
 *   custom ids and ids that are plain integers.
 * - `occurredAt`: ISO-8601 time the run finished.
 * - `strategy` overrides the built-in default / policy for this event.
 * - `inputTokens`: the prompt tokens of the run's last request as the Messages API counted them
 *   (`usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens`: with
 *   prompt caching, `input_tokens` alone counts only what follows the last cache breakpoint). Token
 *   triggers then measure the session by this figure instead of compactor's estimate.
 */
export const runCompletedEventSchema = z
  .object({
    eventId: idSchema.refine((v) => !v.includes(':') && !/^-?\d+$/.test(v), {
      message: 'must not contain ":" nor be a plain integer (BullMQ custom job id rules)',
    }),
    tenantId: idSchema,
    sessionId: idSchema,
    runId: idSchema.optional(),
    occurredAt: z.iso.datetime({ offset: true }).optional(),
    strategy: strategySchema.optional(),
    inputTokens: z.number().int().min(0).max(100_000_000).optional(),
    /**
     * Of `inputTokens`, how many the request read from the prompt cache
     * (`usage.cache_read_input_tokens`; OpenAI: `cached_tokens`). Optional; when given, the
     * measured payback of the last compaction prices its saved tokens at the cache-read rate (or
     * the input rate when 0) instead of assuming the policy's `payback.promptCaching`.
     */
    cacheReadTokens: z.number().int().min(0).max(100_000_000).optional(),
    /**
     * What produced the event: an agent service (`event`) or the CLI / API (`manual`, which
     * compacts now whatever the triggers say).
     */
    trigger: z.enum(['event', 'manual']).default('event'),
  })
  .strict()
  .refine((e) => e.cacheReadTokens === undefined || (e.inputTokens ?? -1) >= e.cacheReadTokens, {
    message: 'must come with inputTokens and be at most inputTokens (cache reads are part of the prompt)',
    path: ['cacheReadTokens'],
  });

export type RunCompletedEvent = z.infer<typeof runCompletedEventSchema>;

/** BullMQ job name of a compaction a sweep found due (internal; producers send RUN_COMPLETED). */
export const SWEEP_COMPACTION = 'session.sweep.compact';

/**
 * A sweep's compaction job: the session and the compaction version the sweep saw it at. The
 * idempotency key derives from that version, so a repeated or overlapping sweep never compacts
 * one version twice, and a compaction since then makes the job moot.
 */
export const sweepCompactionJobSchema = z
  .object({
    eventId: idSchema,
    tenantId: idSchema,
    sessionId: idSchema,
    expectedVersion: z.number().int().min(0),
  })
  .strict();

export type SweepCompactionJob = z.infer<typeof sweepCompactionJobSchema>;
/** What a producer passes in (defaults not yet applied). */
export type RunCompletedInput = z.input<typeof runCompletedEventSchema>;

/**
 * Formats the first three zod issues as `field: message`, naming the field that is wrong. Each is
 * made {@link printable}: zod quotes unknown keys as given, and a key may be megabytes long.
 */
export function describeZodError(error: z.ZodError, root = 'event'): string {
  return error.issues
    .slice(0, 3)
    .map((i) => printable(`${[root, ...i.path.map(String)].join('.')}: ${i.message}`))
    .join('; ');
}

/** Idempotency key of an event: one effect per key, enforced by a unique index on the ledger. */
export function idempotencyKeyOf(event: Pick<RunCompletedEvent, 'eventId' | 'tenantId'>): string {
  return `event:${event.tenantId}:${event.eventId}`;
}

/**
 * The queue compactor publishes on after each applied compaction (same Redis and key prefix as
 * `compaction`): a service consumes it with a BullMQ `Worker` of its own.
 */
export const SESSION_EVENTS_QUEUE = 'session-events';
/** The job name of an applied compaction on {@link SESSION_EVENTS_QUEUE}. */
export const SESSION_COMPACTED = 'session.compacted';

/**
 * `session.compacted`: what an applied compaction did, for the agent service that owns the
 * session. The job id is the compaction id, so a retried publish adds no second job. Tokens are
 * compactor's estimates.
 */
export const sessionCompactedEventSchema = z.object({
  compactionId: z.string(),
  tenantId: idSchema,
  sessionId: idSchema,
  /** The session's `compaction_version` after it: `loadContext` returns the same number. */
  version: z.number().int(),
  /** The highest seq that left. */
  cutoffSeq: z.number().int().nullable(),
  strategy: z.string(),
  mode: z.enum(['inPlace', 'newSession']).nullable(),
  /** The session the history continues in after a `newSession` compaction. */
  childSessionId: z.string().nullable(),
  messagesBefore: z.number().int().nullable(),
  messagesAfter: z.number().int().nullable(),
  tokensBefore: z.number().int().nullable(),
  tokensAfter: z.number().int().nullable(),
  /** The checkpoint (structured summary) the compaction wrote, or null when it wrote none. */
  checkpoint: z.unknown().nullable(),
  /**
   * The payback compactor predicted before the compaction (shared/policy/payback.ts): USD saved
   * over the requests the session is expected to make, USD it costs (summary call + prompt-cache
   * rewrite), their ratio (null: it costs nothing), the requests counted and where that number came
   * from (`policy`: `payback.horizonRequests`; `history`: as many again as the session has made).
   * Null for a compaction made without a prediction.
   */
  payback: z
    .object({
      savingsUsd: z.number(),
      costUsd: z.number(),
      ratio: z.number().nullable(),
      requests: z.number().int(),
      horizon: z.enum(['policy', 'history']),
      tokensSavedPerRequest: z.number().int(),
    })
    .nullable(),
  /** ISO-8601 time of the ledger row. */
  appliedAt: z.string(),
});

export type SessionCompactedEvent = z.infer<typeof sessionCompactedEventSchema>;

/**
 * What a finished compaction job returns (BullMQ's `returnvalue`; Bull Board shows it, and
 * `compactNow` resolves with it).
 */
export interface CompactionJobResult {
  /** The pipeline's outcome: `applied`, `skipped`, `failed`, `duplicate` (the key was used), `batched`. */
  status: string;
  /** The ledger row's status, or `batched` while a batch summary is pending. */
  ledgerStatus: string;
  /** The ledger row's id; null while a batch summary is pending. */
  compactionId: string | null;
  messagesBefore: number | null;
  messagesAfter: number | null;
  /** Why it was skipped or failed. */
  reason: string | null;
}

/**
 * Job options every compaction job gets: 5 attempts with exponential backoff from 2 s; completed
 * jobs kept a day (at most 10,000), failed ones a week, so Bull Board can show them. On BullMQ's
 * PostgreSQL backend use {@link jobOptionsFor}, which keeps completed jobs by age alone.
 */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/**
 * How long a queue keeps its completed jobs, on each queue backend: a day, and on Redis at most
 * 10,000 of them (its memory is the bound). On BullMQ's PostgreSQL backend the count is left out:
 * there every completion trims by count with a statement that reads every completed job the
 * queue keeps (BullMQ 6.7's `apply_retention`: `delete … where id not in (select … limit
 * count)`), so with 10,000 kept each job read about 20,000 buffer pages and the worker slowed
 * run after run (bench part 17b); trimming by age reads only the rows it removes.
 */
export function keepCompletedFor(backend: 'redis' | 'postgres'): { age: number; count?: number } {
  return backend === 'postgres' ? { age: 24 * 3600 } : { age: 24 * 3600, count: 10_000 };
}

/** {@link DEFAULT_JOB_OPTIONS} with the completed jobs kept as {@link keepCompletedFor} says for `backend`. */
export function jobOptionsFor(backend: 'redis' | 'postgres') {
  return { ...DEFAULT_JOB_OPTIONS, removeOnComplete: keepCompletedFor(backend) };
}

/**
 * `tenantId:sessionId`, unambiguous: `%` and `:` in the tenant id are escaped, so tenant `a:b`'s
 * session `c` and tenant `a`'s session `b:c` never share a key (a lease or a deduplication id).
 */
export function sessionKeyOf(tenantId: string, sessionId: string): string {
  return `${tenantId.replaceAll('%', '%25').replaceAll(':', '%3A')}:${sessionId}`;
}

/**
 * BullMQ job id of a tenant's job: `<tenant>~<id>`, the tenant percent-encoded
 * (`encodeURIComponent`, and `~` as `%7E`). Ids a caller chooses (an `eventId`) are only unique
 * within its tenant, so a bare id as the job id would let one tenant's event take the place of
 * another's: tenant `evil` sending `run-100` first would make tenant `acme`'s `run-100` a
 * duplicate, never processed. Unambiguous (the first `~` ends the tenant), never a plain integer,
 * free of `:` as long as `id` is (BullMQ's custom id rules), and of `/`, so it stays one segment of
 * a URL path (Bull Board's routes).
 */
export function jobIdOf(tenantId: string, id: string): string {
  return `${encodeURIComponent(tenantId).replaceAll('~', '%7E')}~${id}`;
}

/** Deduplication id of a session: at most one active and one waiting job per session. */
export function deduplicationIdOf(event: Pick<RunCompletedEvent, 'tenantId' | 'sessionId'>): string {
  return sessionKeyOf(event.tenantId, event.sessionId);
}

/** Idempotency key of a sweep's job: one effect per session and compaction version. */
export function sweepIdempotencyKeyOf(
  job: Pick<SweepCompactionJob, 'tenantId' | 'sessionId' | 'expectedVersion'>,
): string {
  return `sweep:${sessionKeyOf(job.tenantId, job.sessionId)}:v${job.expectedVersion}`;
}
