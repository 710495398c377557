/**
 * The primary of `compactor worker --processes N` (N > 1): it runs no jobs and opens no connection;
 * it starts N worker processes through `node:cluster` (each an ordinary worker, worker-process.ts),
 * restarts one that exits on its own after a backoff (runtime/processes/restart-policy.ts: a crash
 * loop stops the whole worker with exit code 1), forwards the first SIGTERM/SIGINT to every worker
 * process and exits 0 once all have finished their active jobs and exited 0; a second signal ends
 * them at once (SIGKILL; BullMQ hands their unfinished jobs to another worker) and exits 1. With
 * `COMPACTOR_METRICS_PORT` it serves /metrics (the worker processes' metrics summed by prom-client's
 * `AggregatorRegistry`), /healthz and /readyz (ready when every worker process is).
 *
 * `node:cluster` rather than `child_process.fork`: prom-client's aggregation speaks cluster's IPC,
 * and a cluster worker re-runs this command with the same arguments and environment, so a worker
 * process is configured exactly as a single `compactor worker` is.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { MetricsAddress } from '../http/metrics-access.ts';
import type { Listening } from '../http/ops.ts';
import { startPrimaryMetricsServer } from '../http/primary-metrics-server.ts';
import type { Readiness } from '../observability/health.ts';
import { mergeReadiness, type ProcessesReadiness } from '../observability/processes-readiness.ts';
import { isReadinessAnswer, type ReadinessRequest } from '../runtime/processes/messages.ts';
import { decideRestart, pruneRestarts } from '../runtime/processes/restart-policy.ts';

/** How the primary runs. */
export interface PrimaryOptions {
  /** Worker processes to keep running (2 or more). */
  processes: number;
  /** The environment of the worker processes, over this process's own. */
  env: NodeJS.ProcessEnv;
  /** Where to serve /metrics, /healthz and /readyz; null: nowhere. */
  metrics: MetricsAddress | null;
}

/** How long the primary waits for a worker process's readiness answer, ms. */
const READINESS_ANSWER_MS = 3_000;
/** After a second signal: how long the SIGKILLed worker processes have to be reaped, ms. */
const FORCE_EXIT_MS = 2_000;

/** One of the N places a worker process runs in, and its restarts (ms since the epoch). */
interface Slot {
  /** Its index, 0..N-1: the log lines of its processes carry it as `slot`. */
  index: number;
  worker: Worker | null;
  restarts: number[];
  timer: NodeJS.Timeout | null;
}

/**
 * Runs the primary until every worker process has exited after a signal, or a crash loop stopped
 * them; resolves with the exit code (0: all stopped gracefully and exited 0).
 * @throws {Error} when the metrics address cannot be bound (before any worker process starts).
 */
export async function runPrimary(options: PrimaryOptions, logger: Logger): Promise<number> {
  // Before the first fork: its listener must be in place when the first answers come back.
  const aggregator = options.metrics ? new AggregatorRegistry() : null;
  const slots: Slot[] = Array.from({ length: options.processes }, (_, index) => ({
    index,
    worker: null,
    restarts: [],
    timer: null,
  }));
  const ops =
    options.metrics && aggregator
      ? await startPrimaryMetricsServer(
          {
            metrics: () => aggregator.clusterMetrics(),
            contentType: aggregator.contentType,
            ready: () => readinessOf(slots),
          },
          options.metrics,
          logger,
        )
      : null;
  if (ops) logger.info({ url: ops.url }, 'metrics, /healthz and /readyz listening');
  logger.info({ processes: options.processes }, 'starting worker processes');
  return supervise(slots, options.env, logger, ops);
}

/** Forks into every slot, restarts, and stops on signals; resolves with the exit code. */
function supervise(
  slots: Slot[],
  env: NodeJS.ProcessEnv,
  logger: Logger,
  ops: Listening | null,
): Promise<number> {
  return new Promise((resolve) => {
    const slotOf = new Map<number, Slot>();
    let stopping: 'graceful' | 'force' | null = null;
    let failed = false;
    const fork = (slot: Slot) => {
      const worker = cluster.fork(env);
      slot.worker = worker;
      slotOf.set(worker.id, slot);
      logger.info(
        { process: worker.id, pid: worker.process.pid, slot: slot.index },
        'worker process started',
      );
    };
    const finishIfDone = () => {
      if (!stopping || slots.some((s) => s.worker)) return;
      cluster.off('exit', onExit);
      process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
      const code = failed || stopping === 'force' ? 1 : 0;
      void (ops?.close() ?? Promise.resolve()).finally(() => resolve(code));
    };
    const stopAll = (signal: 'SIGTERM' | 'SIGKILL') => {
      for (const slot of slots) {
        if (slot.timer) clearTimeout(slot.timer);
        slot.timer = null;
        slot.worker?.process.kill(signal);
      }
      finishIfDone();
    };
    const onExit = (worker: Worker, code: number | null, signal: string | null) => {
      const slot = slotOf.get(worker.id);
      if (!slot) return;
      slotOf.delete(worker.id);
      slot.worker = null;
      const exit = { process: worker.id, slot: slot.index, code, signal };
      if (stopping) {
        if (code !== 0 && stopping === 'graceful') {
          failed = true;
          logger.warn(exit, 'worker process did not stop cleanly');
        }
        return finishIfDone();
      }
      const now = Date.now();
      const decision = decideRestart(slot.restarts, now);
      if (decision.action === 'give-up') {
        failed = true;
        logger.error(
          { ...exit, restarts: decision.recent },
          `worker process exited ${decision.recent + 1} times within a minute; stopping every worker process`,
        );
        stopping = 'graceful';
        return stopAll('SIGTERM');
      }
      slot.restarts = [...pruneRestarts(slot.restarts, now), now];
      logger.warn({ ...exit, restartInMs: decision.delayMs }, 'worker process exited; restarting it');
      slot.timer = setTimeout(() => {
        slot.timer = null;
        if (!stopping) fork(slot);
      }, decision.delayMs);
    };
    const onSignal = () => {
      if (!stopping) {
        logger.info('signal: every worker process finishes its active jobs');
        stopping = 'graceful';
        return stopAll('SIGTERM');
      }
      if (stopping === 'force') return;
      logger.info('second signal: forcing exit');
      stopping = 'force';
      setTimeout(() => process.exit(1), FORCE_EXIT_MS).unref();
      stopAll('SIGKILL');
    };
    cluster.on('exit', onExit);
    process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
    for (const slot of slots) fork(slot);
  });
}

let requests = 0;

/** Asks every running worker process for its readiness and merges the answers. */
async function readinessOf(slots: readonly Slot[]): Promise<ProcessesReadiness> {
  const answers = await Promise.all(slots.map((slot) => (slot.worker ? askReadiness(slot.worker) : null)));
  return mergeReadiness(slots.length, answers);
}

/** One worker process's readiness; null when it is starting, gone, or silent for too long. */
function askReadiness(worker: Worker): Promise<Readiness | null> {
  if (!worker.isConnected()) return Promise.resolve(null);
  const id = ++requests;
  return new Promise((resolve) => {
    const done = (readiness: Readiness | null) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      resolve(readiness);
    };
    const onMessage = (message: unknown) => {
      if (isReadinessAnswer(message) && message.id === id) done(message.readiness);
    };
    const timer = setTimeout(() => done(null), READINESS_ANSWER_MS);
    worker.on('message', onMessage);
    const request: ReadinessRequest = { type: 'compactor:readiness-request', id };
    worker.send(request);
  });
}
