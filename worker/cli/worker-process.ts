/**
 * One worker process of `compactor worker --processes N`, started by the primary (worker-primary.ts)
 * through `node:cluster`: an ordinary worker (serve.ts) whose log lines carry `process` (its cluster
 * worker id: 1..N, and a new id for each restart), whose metrics the primary collects through
 * prom-client's `AggregatorRegistry`, and which answers the primary's readiness requests. It does
 * not listen on the metrics port itself.
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config/config.ts';
import type { Readiness } from '../observability/health.ts';
import { isReadinessRequest, type ReadinessAnswer } from '../runtime/processes/messages.ts';
import { serveWorker } from './serve.ts';
import { startUntilSignal } from './signals.ts';

/**
 * Runs this worker process until SIGTERM/SIGINT (from the primary, or from a terminal's Ctrl-C to
 * the whole process group: the same stop, taken once); resolves with the exit code, after closing
 * the IPC channel so the process can end.
 * @throws {Error} as {@link serveWorker}.
 */
export async function runWorkerProcess(c: Config, logger: Logger, concurrency: number): Promise<number> {
  const log = logger.child({ process: cluster.worker?.id ?? 0 });
  // Constructing it makes prom-client answer the primary's metric requests, before the worker has
  // metrics (an empty answer) as after (its registry).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([]);
  let ready: (() => Promise<Readiness>) | null = null;
  const onMessage = (message: unknown) => {
    if (!isReadinessRequest(message)) return;
    const answer = (readiness: Readiness | null): void => {
      const reply: ReadinessAnswer = { type: 'compactor:readiness', id: message.id, readiness };
      if (process.connected) process.send?.(reply);
    };
    if (!ready) answer(null);
    else ready().then(answer, () => answer(null));
  };
  process.on('message', onMessage);
  try {
    // Signals are taken from the start: the primary may stop a process that is still migrating.
    return await startUntilSignal(
      async (starting) => {
        const worker = await serveWorker(c, log, concurrency, { metricsVia: 'primary', starting });
        AggregatorRegistry.setRegistries([worker.metrics.registry]);
        ready = worker.ready;
        return worker;
      },
      async (worker) => {
        log.info('signal: finishing active jobs');
        await worker.close(false);
      },
      { repeat: 'ignore' },
    );
  } finally {
    process.off('message', onMessage);
    cluster.worker?.disconnect();
  }
}
