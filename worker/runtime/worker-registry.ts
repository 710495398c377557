/**
 * A running worker's entry in the worker registry (`queue_workers`): where it listens, written at
 * start, renewed every {@link WORKER_HEARTBEAT_MS}, deleted on a graceful close, so producers and
 * `compactor doctor` can tell a queue no worker takes from (shared/protocol/queue-workers.ts).
 * The registry is advice: a failed write is logged and never stops the worker.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { WORKER_HEARTBEAT_MS } from '../../shared/protocol/queue-workers.ts';
import {
  registerWorker,
  renewWorker,
  unregisterWorker,
  type WorkerRegistration,
} from '../postgres/queue-workers.ts';
import type { Services } from './services.ts';

/** A worker's registration; `close()` stops the heartbeat and deletes the row. Memoized, never throws. */
export interface RegisteredWorker {
  readonly id: string;
  close(): Promise<void>;
}

/**
 * Registers this process as a worker of `queues` at `services.queues.place` and keeps its row
 * fresh. Nothing is awaited: the first write runs in the background.
 * @param options.heartbeatMs ms between renewals (default {@link WORKER_HEARTBEAT_MS}).
 */
export function registerQueueWorker(
  services: Pick<Services, 'database' | 'queues' | 'logger'>,
  queues: string[],
  options: { heartbeatMs?: number } = {},
): RegisteredWorker {
  const registration: WorkerRegistration = {
    id: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    ...services.queues.place,
    queues,
  };
  const { db } = services.database;
  const warn = (what: string) => (error: unknown) =>
    services.logger.warn({ err: (error as Error).message }, `worker registry: ${what} failed`);
  // Each write waits for the one before, so a renewal never overtakes the insert or the delete.
  let last: Promise<void> = registerWorker(db, registration).catch(warn('register'));
  const timer = setInterval(() => {
    last = last.then(() => renewWorker(db, registration).catch(warn('heartbeat')));
  }, options.heartbeatMs ?? WORKER_HEARTBEAT_MS);
  timer.unref();
  let closing: Promise<void> | undefined;
  return {
    id: registration.id,
    close: () => {
      clearInterval(timer);
      closing ??= last.then(() => unregisterWorker(db, registration.id).catch(warn('unregister')));
      return closing;
    },
  };
}
