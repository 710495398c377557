/**
 * A producer's look at the worker registry: after an enqueue, whether any worker has listened on
 * the producer's queue lately (`queue_workers`, shared/protocol/queue-workers.ts). When none has,
 * the producer says so once, in one line naming its queue and where the live workers listen: an
 * event on a queue nobody takes from would otherwise wait there silently.
 *
 * Cheap: one indexed read at the first enqueue, then at most one per staleness window until it has
 * warned; never on the enqueue's path (it runs after, and its errors are swallowed: the registry
 * is advice, and a database without it (before migration 0022) only means no warning).
 */

import { COMPACTION_QUEUE } from '../shared/protocol/events.ts';
import { mismatchOf, type QueuePlace } from '../shared/protocol/queue-workers.ts';
import type { Db } from './postgres/db.ts';
import { liveQueueWorkers } from './postgres/queue-workers.ts';

/** What {@link watchWorkers} needs. */
export interface WorkerWatchOptions {
  /** The producer's queue. */
  place: QueuePlace;
  /** compactor's database, where the registry is; resolved at the first check (opened lazily). */
  db: () => Db;
  /** ms without a worker's renewal after which the queue counts as unserved; 0: never check. */
  staleAfterMs: number;
  /** Receives the warning, once. */
  warn: (line: string) => void;
}

/** The watch of one producer. */
export interface WorkerWatch {
  /** Schedules a check if one is due; returns at once. */
  afterEnqueue(): void;
  /** Resolves once a running check has ended (close() waits for it). */
  settled(): Promise<void>;
}

/** A watch that checks after enqueues as {@link WorkerWatchOptions} say. */
export function watchWorkers(options: WorkerWatchOptions): WorkerWatch {
  let warned = options.staleAfterMs <= 0;
  let nextCheckAt = 0;
  let running: Promise<void> | undefined;
  const check = async () => {
    const live = await liveQueueWorkers(options.db(), options.staleAfterMs);
    const line = mismatchOf(options.place, COMPACTION_QUEUE, live, {
      who: 'this producer',
      staleAfterMs: options.staleAfterMs,
    });
    if (line && !warned) {
      warned = true;
      options.warn(`compactor: ${line}`);
    }
  };
  return {
    afterEnqueue() {
      if (warned || running || Date.now() < nextCheckAt) return;
      nextCheckAt = Date.now() + options.staleAfterMs;
      running = check()
        .catch(() => {})
        .finally(() => {
          running = undefined;
        });
    },
    settled: () => running ?? Promise.resolve(),
  };
}
