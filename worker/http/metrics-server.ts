/**
 * The worker's operations server, on when `COMPACTOR_METRICS_PORT` is set: `/metrics` (the
 * worker's registry, and the depth of its queues read at scrape time), `/healthz`, `/readyz`.
 * Unauthenticated: it serves counts and timings only, never ids or content.
 */
import { Queue } from 'bullmq';
import { COMPACTION_QUEUE } from '../../shared/contract/events.ts';
import { WEBHOOKS_QUEUE } from '../../shared/contract/webhooks.ts';
import { duplicateConnection } from '../../shared/runtime/redis.ts';
import { readinessProbe } from '../observability/health.ts';
import type { WorkerMetrics } from '../observability/metrics.ts';
import { SWEEP_QUEUE } from '../queue/sweep.ts';
import { runAll, type Services } from '../runtime/services.ts';
import { type Listening, listen, opsRoutes } from './ops.ts';

/**
 * Starts the server on `port` and `host`; `close()` stops it and closes the queues and the probe
 * connection it opened (not `services`).
 * @throws {Error} when the address cannot be bound.
 */
export async function startMetricsServer(
  services: Services,
  metrics: WorkerMetrics,
  address: { port: number; host: string },
): Promise<Listening> {
  const { config, logger } = services;
  const connection = duplicateConnection(services.redis);
  const queues = [COMPACTION_QUEUE, SWEEP_QUEUE, WEBHOOKS_QUEUE].map(
    (name) => new Queue(name, { connection, prefix: config.queuePrefix }),
  );
  for (const queue of queues) services.redisState.watch(queue, `${queue.name} queue`);
  metrics.watchQueues(queues);
  const probe = readinessProbe(services.redis, services.database.sql);
  const release = () =>
    runAll(logger, [...queues.map((q) => () => q.close()), () => probe.close(), () => connection.quit()]);
  let listening: Listening;
  try {
    listening = await listen(
      opsRoutes({ registry: metrics.registry, ready: () => probe.check() }),
      address.port,
      address.host,
    );
  } catch (error) {
    await release();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    ...listening,
    close: () => {
      closing ??= runAll(logger, [() => listening.close(), release]);
      return closing;
    },
  };
}
