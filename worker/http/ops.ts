/**
 * The operations endpoints every long-running compactor process serves: `/healthz` (the process
 * is up), `/readyz` (Redis and Postgres answer) and `/metrics` (Prometheus text format), and the
 * small HTTP listener the worker runs them on when `COMPACTOR_METRICS_PORT` is set. `/readyz`
 * tells anyone whether each dependency is ok; how long it took and why it failed (an error that
 * can name hosts, ports and users) only a caller with the server's credential sees, and the
 * server's log gets each failure once, when a dependency's state changes.
 */
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { ReadinessCheck } from '../observability/health.ts';
import { runAll } from '../runtime/run-all.ts';

/**
 * What `/readyz` serves: whether ready, and each check by name (a process's `redis` and
 * `postgres`, health.ts; the primary of `compactor worker --processes N` adds `processes`).
 */
export interface ReadinessReport {
  ready: boolean;
  checks: { [name: string]: ReadinessCheck | undefined };
}

export interface OpsDeps {
  /** What `/metrics` serves: a registry, or anything that renders one (the primary's aggregate). */
  registry: { metrics(): Promise<string>; readonly contentType: string };
  ready: () => Promise<ReadinessReport>;
  /** Guards `/metrics` (the dashboard asks for admin credentials); absent: open. */
  metricsGuard?: MiddlewareHandler[];
  /**
   * Whether the request holds the credential that may see `/readyz`'s details (each check's ms and
   * error); absent: nobody does.
   */
  mayReadDetails?: (c: Context) => boolean | Promise<boolean>;
  /** Where a dependency's failure (with its error) and recovery are logged, once per change. */
  logger?: Logger;
}

/** The three routes, mountable on any Hono app. */
export function opsRoutes(deps: OpsDeps): Hono {
  const app = new Hono();
  const logChange = stateLogger(deps.logger);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const readiness = await deps.ready();
    logChange(readiness);
    const shown = (await deps.mayReadDetails?.(c)) ? readiness : withoutDetails(readiness);
    return c.json({ status: readiness.ready ? 'ready' : 'not ready', ...shown }, readiness.ready ? 200 : 503);
  });
  for (const guard of deps.metricsGuard ?? []) app.use('/metrics', guard);
  app.get('/metrics', async (c) => {
    try {
      return c.body(await deps.registry.metrics(), 200, { 'content-type': deps.registry.contentType });
    } catch (error) {
      // A collector that failed, or (the primary of `compactor worker --processes N`) a worker
      // process that did not answer in 5 s, such as one still starting: this scrape is lost, the
      // next one answers.
      deps.logger?.warn({ err: error }, 'metrics unavailable for this scrape');
      return c.text('metrics unavailable for this scrape; try again\n', 503);
    }
  });
  return app;
}

/** `readiness` with each check's `ok` alone. */
function withoutDetails(readiness: ReadinessReport): {
  ready: boolean;
  checks: Record<string, { ok: boolean }>;
} {
  const checks = Object.fromEntries(
    Object.entries(readiness.checks).flatMap(([name, check]) => (check ? [[name, { ok: check.ok }]] : [])),
  );
  return { ready: readiness.ready, checks };
}

/**
 * Logs each dependency's change of state: a failure at warn with its error (the details `/readyz`
 * hides), a recovery at info. Nothing while the state stays, however often the probe runs.
 */
function stateLogger(logger: Logger | undefined): (readiness: ReadinessReport) => void {
  const last = new Map<string, boolean>();
  return (readiness) => {
    for (const [name, check] of Object.entries(readiness.checks)) {
      if (!check) continue;
      const was = last.get(name);
      last.set(name, check.ok);
      if (was === check.ok || (was === undefined && check.ok)) continue;
      if (check.ok) logger?.info({ dependency: name, ms: check.ms }, 'readiness check ok again');
      else logger?.warn({ dependency: name, ms: check.ms, err: check.error }, 'readiness check failed');
    }
  };
}

/** A listening HTTP server. */
export interface Listening {
  /** `http://host:port` (the port actually bound, when 0 was asked). */
  url: string;
  port: number;
  /** Stops accepting, ends idle keep-alive connections, resolves when closed. Memoized. */
  close(): Promise<void>;
}

/**
 * Serves `app` on `host:port` (0: any free port).
 * @throws {Error} when the address cannot be bound (in use, not permitted), naming it.
 */
export async function listen(app: { fetch: Hono['fetch'] }, port: number, host: string): Promise<Listening> {
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(new Error(`cannot listen on ${host}:${port}: ${error.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${bound}`,
    port: bound,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        if (!('closeIdleConnections' in server)) return;
        server.closeIdleConnections();
        // A request still running after 5 s (a stuck scrape, a slow page) does not hold shutdown.
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      });
      return closing;
    },
  };
}

/**
 * Serves `app` like {@link listen} on behalf of a server that owns what the app runs on: `release`
 * (closing its queues, pools, services) runs once the server has closed, or at once when the
 * address cannot be bound. Every step runs even if one fails (see `runAll`).
 * @throws {Error} when the address cannot be bound, after `release`.
 */
export async function listenOwning(
  app: { fetch: Hono['fetch'] },
  address: { port: number; host: string },
  logger: Logger,
  release: () => Promise<unknown>,
): Promise<Listening> {
  let listening: Listening;
  try {
    listening = await listen(app, address.port, address.host);
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
