/**
 * The queue backends compactor runs on: BullMQ on Redis, or BullMQ's PostgreSQL backend. The names
 * are what `COMPACTOR_QUEUE_BACKEND` takes and what logs and `/readyz` call them.
 */

/** The backends, as `COMPACTOR_QUEUE_BACKEND` spells them. */
export const QUEUE_BACKENDS = ['redis', 'postgres'] as const;

/** One of {@link QUEUE_BACKENDS}. */
export type QueueBackendKind = (typeof QUEUE_BACKENDS)[number];

/**
 * The Postgres schema BullMQ's tables live in on the `postgres` backend unless configured
 * otherwise (`COMPACTOR_QUEUE_SCHEMA`): apart from compactor's own schema, in the same database.
 */
export const DEFAULT_QUEUE_SCHEMA = 'compactor_queue';
