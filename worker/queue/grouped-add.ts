/**
 * Adds jobs to a queue the way a database commits a group: the first add goes at once, alone, and
 * the adds asked for while it is in flight wait for it and then go together in one `addBulk`. Under
 * a light load each add is sent alone with `add`, without any wait (no timer); under load the adds
 * of many jobs share one round trip, which is what a worker at concurrency 128 that publishes once
 * per job needs. For queues on Redis, where `addBulk` is one MULTI of the adds' scripts. (BullMQ's
 * PostgreSQL backend makes and drops two temporary tables in every `addBulk`: 9.5 ms of the
 * database's time a call, measured with pg_stat_statements, where a single add took 0.4 ms.)
 *
 * Each add resolves once the batch holding it was added (its job stored, or already there by its
 * id), or rejects with that batch's error: the caller learns exactly what it would have learnt from
 * `queue.add`, so a job that publishes and then completes still never completes before its event
 * was stored.
 */

/** One job to add: `Queue.addBulk`'s entry. */
export interface GroupedJob<Data> {
  name: string;
  data: Data;
  opts?: { jobId?: string };
}

/** The part of a BullMQ Queue a grouped adder uses. */
export interface BulkAddingQueue<Data> {
  add(name: string, data: Data, opts?: GroupedJob<Data>['opts']): Promise<unknown>;
  addBulk(jobs: GroupedJob<Data>[]): Promise<unknown>;
}

/** Adds jobs one at a time from the caller's view, in groups on the wire. */
export interface GroupedAdder<Data> {
  /** Resolves once the job was added; rejects with the error of the `addBulk` that carried it. */
  add(job: GroupedJob<Data>): Promise<void>;
}

/** Most jobs sent in one `addBulk`; the rest go in the next. */
export const MAX_GROUP = 256;

/** A grouped adder over `queue` (see the file's comment). Never throws itself. */
export function groupedAdder<Data>(queue: BulkAddingQueue<Data>): GroupedAdder<Data> {
  type Waiting = { job: GroupedJob<Data>; resolve: () => void; reject: (error: unknown) => void };
  let waiting: Waiting[] = [];
  let sending = false;
  const send = async () => {
    sending = true;
    try {
      while (waiting.length > 0) {
        const group = waiting.slice(0, MAX_GROUP);
        waiting = waiting.slice(group.length);
        try {
          const [only] = group;
          if (group.length === 1 && only) await queue.add(only.job.name, only.job.data, only.job.opts);
          else await queue.addBulk(group.map((w) => w.job));
          for (const w of group) w.resolve();
        } catch (error) {
          for (const w of group) w.reject(error);
        }
      }
    } finally {
      sending = false;
    }
  };
  return {
    add(job) {
      return new Promise<void>((resolve, reject) => {
        waiting.push({ job, resolve, reject });
        if (!sending) void send();
      });
    },
  };
}
