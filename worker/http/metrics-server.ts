/**
 * The worker's operations server, on when `COMPACTOR_METRICS_PORT` is set: `/metrics` (the
 * worker's registry, and the depth of its queues read at scrape time), `/healthz`, `/readyz`.
 * It serves counts and timings only, never ids or content, yet it tells who can reach it how busy
 * the platform is: it binds 127.0.0.1 by default, and on any other address it needs a bearer token
 * (`COMPACTOR_METRICS_TOKEN`) for `/metrics`. `/readyz` answers ok or not per dependency to anyone;
 * its details (ms, errors) need that token. `/healthz` is open (liveness says nothing).
 */

import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { ConfigError } from '../../shared/contract/errors.ts';
import { WEBHOOKS_QUEUE } from '../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import { type Readiness, readinessProbe } from '../observability/health.ts';
import type { WorkerMetrics } from '../observability/metrics.ts';
import { SWEEP_QUEUE } from '../queue/sweeps/sweep.ts';
import { runAll, type Services } from '../runtime/services.ts';
import { isLoopback, safeEqual } from './dashboard/auth.ts';
import { ApiError } from './errors.ts';
import { type Listening, listenOwning, type OpsDeps, opsRoutes } from './ops.ts';

/** Where the metrics server listens, and its bearer token. */
export interface MetricsAddress {
  port: number;
  host: string;
  /** Required unless `host` is a loopback address. */
  token?: string | undefined;
}

/**
 * Refuses a metrics server on a non-loopback address without a token.
 * @throws {ConfigError} naming the variables to set.
 */
export function assertMetricsExposure(address: Pick<MetricsAddress, 'host' | 'token'>): void {
  if (address.token !== undefined || isLoopback(address.host)) return;
  throw new ConfigError(
    `COMPACTOR_METRICS_HOST "${address.host}" is not a loopback address: set COMPACTOR_METRICS_TOKEN (a bearer ` +
      'token of 16+ characters that Prometheus sends: authorization.credentials in its scrape config), or bind 127.0.0.1',
  );
}

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

/**
 * Starts the server of the primary of `compactor worker --processes N`: `/metrics` is `metrics()`
 * (the worker processes' registries summed, prom-client's `AggregatorRegistry.clusterMetrics`),
 * `/readyz` is `ready()`; the same token rule as {@link startMetricsServer}.
 * @throws {ConfigError} on a non-loopback host without a token.
 * @throws {Error} when the address cannot be bound.
 */
export function startPrimaryMetricsServer(
  source: { metrics(): Promise<string>; contentType: string; ready(): Promise<Readiness> },
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

/** The token checks of `address`: who may read `/readyz`'s details, and the guard of `/metrics`. */
function guarded(address: MetricsAddress): Pick<OpsDeps, 'mayReadDetails' | 'metricsGuard'> {
  return {
    mayReadDetails: (c) => holdsToken(c, address.token),
    ...(address.token === undefined ? {} : { metricsGuard: [tokenGuard(address.token)] }),
  };
}

/** Whether the request's `Authorization: Bearer` is `token` (constant time); false without a token. */
function holdsToken(c: Context, token: string | undefined): boolean {
  const header = c.req.header('authorization') ?? '';
  return token !== undefined && /^bearer /i.test(header) && safeEqual(header.slice(7).trim(), token);
}

/** 401 unless the request holds `token`. */
function tokenGuard(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (!holdsToken(c, token)) {
      c.header('www-authenticate', 'Bearer realm="compactor-metrics"');
      const refused = new ApiError(
        'authentication_error',
        'a bearer token (COMPACTOR_METRICS_TOKEN) is required',
      );
      return c.json(refused.body(), refused.status);
    }
    await next();
  };
}
