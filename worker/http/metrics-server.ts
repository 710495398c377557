/**
 * The worker's operations server, on when `COMPACTOR_METRICS_PORT` is set: `/metrics` (the
 * worker's registry, and the depth of its queues read at scrape time), `/healthz`, `/readyz`.
 * It serves counts and timings only, never ids or content, yet it tells who can reach it how busy
 * the platform is: it binds 127.0.0.1 by default, and on any other address it needs a bearer token
 * (`COMPACTOR_METRICS_TOKEN`) for `/metrics`. `/readyz` answers ok or not per dependency to anyone;
 * its details (ms, errors) need that token. `/healthz` is open (liveness says nothing).
 */

import type { Context, MiddlewareHandler } from 'hono';
import { ConfigError } from '../../shared/contract/errors.ts';
import { WEBHOOKS_QUEUE } from '../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import { readinessProbe } from '../observability/health.ts';
import type { WorkerMetrics } from '../observability/metrics.ts';
import { SWEEP_QUEUE } from '../queue/sweeps/sweep.ts';
import { runAll, type Services } from '../runtime/services.ts';
import { isLoopback, safeEqual } from './dashboard/auth.ts';
import { ApiError } from './errors.ts';
import { type Listening, listen, opsRoutes } from './ops.ts';

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
  const { logger } = services;
  const link = services.queues.link();
  const queues = [COMPACTION_QUEUE, SWEEP_QUEUE, WEBHOOKS_QUEUE].map(
    (name) => new services.queues.Queue(name, { ...link.options }),
  );
  for (const queue of queues) services.queueState.watch(queue, `${queue.name} queue`);
  metrics.watchQueues(queues);
  const probe = readinessProbe(services.redis, services.database.sql);
  const release = () =>
    runAll(logger, [...queues.map((q) => () => q.close()), () => probe.close(), () => link.close()]);
  let listening: Listening;
  try {
    listening = await listen(
      opsRoutes({
        registry: metrics.registry,
        ready: () => probe.check(),
        logger,
        mayReadDetails: (c) => holdsToken(c, address.token),
        ...(address.token === undefined ? {} : { metricsGuard: [tokenGuard(address.token)] }),
      }),
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
