/**
 * The worker registry, read: the `queue_workers` rows renewed within a staleness window, which a
 * producer and `compactor doctor` compare with their own queue (shared/protocol/queue-workers.ts).
 * The worker writes them (worker/postgres/queue-workers.ts).
 */
import type { QueueBackendKind } from '../../shared/protocol/queue-backend.ts';
import type { LiveWorker } from '../../shared/protocol/queue-workers.ts';
import { type Db, executePrepared } from './db.ts';

/** $1 stale after (ms), on the database's clock (the workers renew on it too). */
const LIVE = `select id, backend, namespace, target, queues, last_seen_at from queue_workers
  where last_seen_at > now() - $1::int * interval '1 millisecond' order by backend, namespace, id`;

/**
 * The workers whose row was renewed within the last `staleAfterMs` ms.
 * @throws when Postgres cannot be reached, or the database lacks migration 0022 (`queue_workers`).
 */
export async function liveQueueWorkers(db: Db, staleAfterMs: number): Promise<LiveWorker[]> {
  const rows = await executePrepared<{
    id: string;
    backend: string;
    namespace: string;
    target: string;
    queues: string[];
    last_seen_at: Date | string;
  }>(db, { sql: LIVE, params: [Math.round(staleAfterMs)] });
  return rows.map((r) => ({
    id: r.id,
    backend: r.backend as QueueBackendKind,
    namespace: r.namespace,
    target: r.target,
    queues: r.queues,
    lastSeenAt: new Date(r.last_seen_at),
  }));
}
