/**
 * The worker's operations server, on when `COMPACTOR_METRICS_PORT` is set: `/metrics` (the
 * worker's registry, and the depth of its queues read at scrape time), `/healthz`, `/readyz`.
 * It serves counts and timings only, never ids or content, yet it tells who can reach it how busy
 * the platform is: it binds 127.0.0.1 by default, and on any other address it needs a bearer token
 * (`COMPACTOR_METRICS_TOKEN`) for `/metrics`. `/readyz` answers ok or not per dependency to anyone;
 * its details (ms, errors) need that token. `/healthz` is open (liveness says nothing).
 */

import { WEBHOOKS_QUEUE } from '../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import { type Readiness, readinessProbe } from '../observability/health.ts';
import type { WorkerMetrics } from '../observability/metrics.ts';
import { SWEEP_QUEUE } from '../queue/sweeps/sweep.ts';
import { runAll, type Services } from '../runtime/services.ts';
import { assertMetricsExposure, guarded, type MetricsAddress } from './metrics-access.ts';
import { type Listening, listenOwning, opsRoutes } from './ops.ts';

export { assertMetricsExposure, type MetricsAddress };

/** What the operations endpoints of one worker process read: its readiness, and what to close. */
export interface OpsSources {
  ready(): Promise<Readiness>;
  /** Closes the queues and the probe connection it opened (not `services`). Every step runs. */
  close(): Promise<void>;
}

/**
 * Opens what a worker process's `/metrics` and `/readyz` read: queues whose depth `metrics` reports
 * at scrape time, and a readiness probe of its own. Used by {@link startMetricsServer}, and by each
 * worker process of `compactor worker --processes N`, whose primary serves the endpoints.
 */
export function openOpsSources(services: Services, metrics: WorkerMetrics): OpsSources {
  const link = services.queues.link();
  const queues = [COMPACTION_QUEUE, SWEEP_QUEUE, WEBHOOKS_QUEUE].map(
    (name) => new services.queues.Queue(name, { ...link.options }),
  );
  for (const queue of queues) services.queueState.watch(queue, `${queue.name} queue`);
  metrics.watchQueues(queues);
  const probe = readinessProbe(services.redis, services.database.sql);
  return {
    ready: () => probe.check(),
    close: () =>
      runAll(services.logger, [
        ...queues.map((q) => () => q.close()),
        () => probe.close(),
        () => link.close(),
      ]),
  };
}

/**
 * Starts the server on `port` and `host`; `close()` stops it and closes the queues and the probe
 * connection it opened (not `services`).
 * @throws {ConfigError} on a non-loopback host without a token ({@link assertMetricsExposure}).
 * @throws {Error} when the address cannot be bound.
 */
export async function startMetricsServer(
  services: Services,
  metrics: WorkerMetrics,
  address: MetricsAddress,
): Promise<Listening> {
  assertMetricsExposure(address);
  const sources = openOpsSources(services, metrics);
  return listenOwning(
    opsRoutes({
      ...guarded(address),
      registry: metrics.registry,
      ready: sources.ready,
      logger: services.logger,
    }),
    address,
    services.logger,
    sources.close,
  );
}
