/**
 * Where the workers listen, as every side sees it: the rules of the worker registry (the
 * `queue_workers` table) that producers and `compactor doctor` read to tell an event enqueued on
 * a queue no worker takes from. Pure: the rows come in, a sentence comes out.
 */
import type { QueueBackendKind } from './queue-backend.ts';

/** ms between a running worker's renewals of its registry row. One UPDATE by primary key each. */
export const WORKER_HEARTBEAT_MS = 15_000;

/**
 * ms after its last renewal that a worker's row counts as dead (a crashed worker's row stays until
 * then): four missed heartbeats. The default of a producer's `noWorkerWarningAfterMs` and of
 * `compactor doctor`.
 */
export const WORKER_STALE_AFTER_MS = 60_000;

/** A queue's place: its backend and namespace, and the server for people. */
export interface QueuePlace {
  backend: QueueBackendKind;
  /** The BullMQ prefix on Redis; BullMQ's schema on Postgres. */
  namespace: string;
  /** The Redis or database, without a password; shown, never compared (one server has many names). */
  target: string;
}

/** A worker of the registry that renewed its row within the staleness window. */
export interface LiveWorker extends QueuePlace {
  id: string;
  /** The queues it takes jobs from (`compaction`, ...). */
  queues: string[];
  lastSeenAt: Date;
}

/** Whether two places are one queue namespace: same backend, same prefix or schema. */
export function samePlace(a: QueuePlace, b: QueuePlace): boolean {
  return a.backend === b.backend && a.namespace === b.namespace;
}

/** `redis prefix "compactor" (redis://127.0.0.1:6379)`, `postgres schema "compactor_queue" (postgres://…)`. */
export function describePlace(place: QueuePlace): string {
  const what = place.backend === 'redis' ? 'prefix' : 'schema';
  return `${place.backend} ${what} "${place.namespace}" (${place.target})`;
}

/** The live workers' places, each once with its count: `redis prefix "x" (…) ×2, postgres …`. */
export function describeWorkers(workers: readonly LiveWorker[]): string {
  if (workers.length === 0) return 'none';
  const groups = new Map<string, { place: QueuePlace; count: number }>();
  for (const w of workers) {
    const key = `${w.backend}\u0000${w.namespace}\u0000${w.target}`;
    const group = groups.get(key) ?? { place: w, count: 0 };
    group.count++;
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => `${describePlace(g.place)} ×${g.count}`).join(', ');
}

/**
 * The one line that says `own`'s `queue` has no live worker, naming both sides, or null when a
 * live worker takes `queue` at `own`'s place. `who` names the side that asks (`this producer`,
 * `this environment`).
 */
export function mismatchOf(
  own: QueuePlace,
  queue: string,
  live: readonly LiveWorker[],
  options: { who: string; staleAfterMs: number },
): string | null {
  const listening = live.filter((w) => w.queues.includes(queue));
  if (listening.some((w) => samePlace(w, own))) return null;
  const seconds = Math.round(options.staleAfterMs / 1000);
  const elsewhere =
    listening.length === 0
      ? 'no worker is live on any queue'
      : `the live workers listen on ${describeWorkers(listening)}`;
  return (
    `queue mismatch: ${options.who} enqueues "${queue}" on ${describePlace(own)}, where no worker has ` +
    `listened in the last ${seconds} s; ${elsewhere}. Give both sides the same DATABASE_URL, REDIS_URL, ` +
    'COMPACTOR_QUEUE_BACKEND and COMPACTOR_QUEUE_PREFIX/COMPACTOR_QUEUE_SCHEMA'
  );
}
