/**
 * Who may reach the worker's operations endpoints (metrics-server.ts, primary-metrics-server.ts):
 * off loopback a bearer token (`COMPACTOR_METRICS_TOKEN`) is required for `/metrics` and for the
 * details of `/readyz`. Kept apart from the servers so the primary of `compactor worker
 * --processes N`, which serves them without running any job, loads nothing else of the worker.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { ConfigError } from '../../shared/contract/errors.ts';
import { isLoopback, safeEqual } from './access-checks.ts';
import { ApiError } from './errors.ts';
import type { OpsDeps } from './ops.ts';

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

/** The token checks of `address`: who may read `/readyz`'s details, and the guard of `/metrics`. */
export function guarded(address: MetricsAddress): Pick<OpsDeps, 'mayReadDetails' | 'metricsGuard'> {
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
