/**
 * The worker registry, written: a running worker's row in `queue_workers`, saying where it listens
 * (producer/postgres/queue-workers.ts reads the rows; shared/protocol/queue-workers.ts compares
 * them). Inserted at start, renewed every `WORKER_HEARTBEAT_MS` (one UPDATE by primary key),
 * deleted when the worker closes gracefully.
 */
import { type Db, executePrepared } from '../../producer/postgres/db.ts';
import type { QueuePlace } from '../../shared/protocol/queue-workers.ts';

/** $1 id, $2 backend, $3 namespace, $4 target, $5 queues. */
const REGISTER = `insert into queue_workers (id, backend, namespace, target, queues, started_at, last_seen_at)
  values ($1::text, $2::text, $3::text, $4::text, $5::text[], now(), now())
  on conflict (id) do update set backend = excluded.backend, namespace = excluded.namespace,
    target = excluded.target, queues = excluded.queues, last_seen_at = now()`;
/** $1 id. Returns the row when it is there (a row deleted by hand is written again). */
const RENEW = 'update queue_workers set last_seen_at = now() where id = $1::text returning id';
const REMOVE = 'delete from queue_workers where id = $1::text';

/** A worker's row, as {@link registerWorker} writes it. */
export interface WorkerRegistration extends QueuePlace {
  id: string;
  queues: string[];
}

/**
 * Writes (or rewrites) the worker's row, seen now.
 * @throws when Postgres cannot be reached.
 */
export async function registerWorker(db: Db, worker: WorkerRegistration): Promise<void> {
  await executePrepared(db, {
    sql: REGISTER,
    params: [worker.id, worker.backend, worker.namespace, worker.target, worker.queues],
  });
}

/**
 * Renews the worker's row; writes it again when it is gone.
 * @throws when Postgres cannot be reached.
 */
export async function renewWorker(db: Db, worker: WorkerRegistration): Promise<void> {
  const rows = await executePrepared(db, { sql: RENEW, params: [worker.id] });
  if (rows.length === 0) await registerWorker(db, worker);
}

/** Deletes the worker's row (a graceful close). @throws when Postgres cannot be reached. */
export async function unregisterWorker(db: Db, id: string): Promise<void> {
  await executePrepared(db, { sql: REMOVE, params: [id] });
}
