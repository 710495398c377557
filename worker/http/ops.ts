/**
 * The operations endpoints every long-running compactor process serves: `/healthz` (the process
 * is up), `/readyz` (Redis and Postgres answer) and `/metrics` (Prometheus text format), and the
 * small HTTP listener the worker runs them on when `COMPACTOR_METRICS_PORT` is set.
 */
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Readiness } from '../observability/health.ts';
import { runAll } from '../runtime/services.ts';

export interface OpsDeps {
  registry: Registry;
  ready: () => Promise<Readiness>;
  /** Guards `/metrics` (the dashboard asks for admin credentials); absent: open. */
  metricsGuard?: MiddlewareHandler[];
}

/** The three routes, mountable on any Hono app. */
export function opsRoutes(deps: OpsDeps): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const readiness = await deps.ready();
    return c.json(
      { status: readiness.ready ? 'ready' : 'not ready', ...readiness },
      readiness.ready ? 200 : 503,
    );
  });
  for (const guard of deps.metricsGuard ?? []) app.use('/metrics', guard);
  app.get('/metrics', async (c) =>
    c.body(await deps.registry.metrics(), 200, { 'content-type': deps.registry.contentType }),
  );
  return app;
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
