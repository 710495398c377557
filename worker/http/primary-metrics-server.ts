/**
 * The operations server of the primary of `compactor worker --processes N`: the worker processes'
 * metrics summed, their merged readiness, and `/healthz`; the same token rule as the worker's own
 * (metrics-access.ts). It opens no connection: what it serves it asks the worker processes for.
 */
import type { Logger } from 'pino';
import { assertMetricsExposure, guarded, type MetricsAddress } from './metrics-access.ts';
import { type Listening, listenOwning, opsRoutes, type ReadinessReport } from './ops.ts';

/**
 * Starts the server of the primary of `compactor worker --processes N`: `/metrics` is `metrics()`
 * (the worker processes' registries summed, prom-client's `AggregatorRegistry.clusterMetrics`),
 * `/readyz` is `ready()`; the same token rule as the worker's own server (metrics-server.ts).
 * @throws {ConfigError} on a non-loopback host without a token.
 * @throws {Error} when the address cannot be bound.
 */
export function startPrimaryMetricsServer(
  source: { metrics(): Promise<string>; contentType: string; ready(): Promise<ReadinessReport> },
  address: MetricsAddress,
  logger: Logger,
): Promise<Listening> {
  assertMetricsExposure(address);
  const registry = { metrics: () => source.metrics(), contentType: source.contentType };
  return listenOwning(
    opsRoutes({ ...guarded(address), registry, ready: () => source.ready(), logger }),
    address,
    logger,
    async () => {},
  );
}
