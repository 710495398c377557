/**
 * The long-running parts of compactor as the commands start them: the worker (`compactor worker`),
 * the HTTP API (`compactor api`) and the dashboard (`compactor dashboard`), each on services of its
 * own, as separate processes would have; `compactor dev` starts all three in one process.
 */
import type { Logger } from 'pino';
import { assertSchema } from '../../producer/postgres/db.ts';
import { WEBHOOKS_QUEUE } from '../../shared/contract/webhooks.ts';
import { COMPACTION_QUEUE } from '../../shared/protocol/events.ts';
import type { Config } from '../config/config.ts';
import { type ApiServer, startApi } from '../http/api/index.ts';
import { type Dashboard, startDashboard } from '../http/dashboard/index.ts';
import { assertMetricsExposure, openOpsSources, startMetricsServer } from '../http/metrics-server.ts';
import type { Readiness } from '../observability/health.ts';
import { createWorkerMetrics, type WorkerMetrics } from '../observability/metrics.ts';
import { describeDatabaseError } from '../postgres/errors.ts';
import { startWorker } from '../queue/compaction/worker.ts';
import { SWEEP_QUEUE, startSweepService } from '../queue/sweeps/sweep.ts';
import { startWebhookWorker } from '../queue/webhooks/webhook-worker.ts';
import { migrateInstall } from '../runtime/migrate-install.ts';
import { openServices, poolSizeFor, redactUrl, type Services } from '../runtime/services.ts';
import { retryUntilReady } from '../runtime/startup.ts';

/** A started worker: compaction jobs, webhooks, sweeps and (when configured) the metrics server. */
export interface ServedWorker {
  /** The worker's metrics registry and recorders. */
  metrics: WorkerMetrics;
  /**
   * Its readiness (Redis and Postgres answer), with `COMPACTOR_METRICS_PORT` set and
   * `metricsVia: 'primary'`; else null.
   */
  ready: (() => Promise<Readiness>) | null;
  /** Stops taking jobs and waits for the active ones (`force`: does not wait), then closes all. */
  close(force: boolean): Promise<void>;
}

/** How {@link serveWorker} runs besides its concurrency. */
export interface ServeWorkerOptions {
  /**
   * Who serves /metrics, /healthz and /readyz when `COMPACTOR_METRICS_PORT` is set: this process
   * (`listen`, the default), or the primary of `compactor worker --processes N` (`primary`: this
   * process only keeps its queue depth and readiness probe ready for the primary to ask).
   */
  metricsVia?: 'listen' | 'primary';
  /**
   * Aborted by the command's first SIGTERM/SIGINT while the worker starts (signals.ts
   * `startUntilSignal`): the migration stops retrying. Without it, serveWorker listens for those
   * signals itself during the migration.
   */
  starting?: AbortSignal;
}

/**
 * Starts the worker of `compactor worker`: waits for Postgres and applies the migrations (retrying,
 * each failed attempt logged as its cause and what to do, until it works or SIGTERM/SIGINT), then
 * the compaction jobs, the webhook deliveries, the scheduled sweeps and, with
 * `COMPACTOR_METRICS_PORT`, /metrics, /healthz and /readyz (or their sources, see
 * {@link ServeWorkerOptions}).
 * @throws {Error} the metrics exposure check's (before anything starts), or the last migration
 *   error once a signal stopped the retries.
 */
export async function serveWorker(
  c: Config,
  logger: Logger,
  concurrency: number,
  options: ServeWorkerOptions = {},
): Promise<ServedWorker> {
  // Before anything starts: an exposed metrics server without a token is refused.
  if (c.metrics.port !== null) assertMetricsExposure(c.metrics);
  await migrateUntilReady(c, logger, options.starting);
  const services = openServices(c, logger);
  const metrics = createWorkerMetrics();
  const running = startWorker(services, {
    concurrency,
    metrics,
    listensOn: [COMPACTION_QUEUE, WEBHOOKS_QUEUE, SWEEP_QUEUE],
  });
  const webhooks = startWebhookWorker(services);
  const sweeps = await startSweepService(services, { metrics });
  const ops = await startOps(services, metrics, options.metricsVia ?? 'listen');
  logger.info(
    {
      concurrency: running.worker.opts.concurrency,
      dbPoolSize: poolSizeFor(c),
      summarizer: services.summarizers.primary.name,
      queueBackend: services.queues.kind,
      queues: services.queues.where,
      ...(services.queues.kind === 'redis' ? { prefix: c.queuePrefix } : {}),
    },
    'worker started',
  );
  return {
    metrics,
    ready: ops?.ready ?? null,
    async close(force) {
      await sweeps.close();
      await webhooks.close(force);
      await running.close(force);
      await ops?.close();
    },
  };
}

/**
 * Waits for Postgres and migrates (see {@link serveWorker}); `stopped` aborting, or else
 * SIGTERM/SIGINT, stops the retries.
 */
async function migrateUntilReady(c: Config, logger: Logger, stopped?: AbortSignal): Promise<void> {
  const starting = new AbortController();
  const stopStarting = () => starting.abort();
  if (stopped) stopped.addEventListener('abort', stopStarting, { once: true });
  else process.once('SIGTERM', stopStarting).once('SIGINT', stopStarting);
  const migrate = () =>
    migrateInstall(c).catch((error: unknown) => {
      throw describeDatabaseError(error, { url: c.databaseUrl }) ?? error;
    });
  try {
    await retryUntilReady(migrate, {
      logger,
      what: `Postgres at ${redactUrl(c.databaseUrl)}`,
      signal: starting.signal,
    });
  } finally {
    stopped?.removeEventListener('abort', stopStarting);
    process.off('SIGTERM', stopStarting).off('SIGINT', stopStarting);
  }
}

/** The metrics server, or (`primary`) only its sources; null without `COMPACTOR_METRICS_PORT`. */
async function startOps(
  services: Services,
  metrics: WorkerMetrics,
  via: 'listen' | 'primary',
): Promise<{ ready: (() => Promise<Readiness>) | null; close(): Promise<void> } | null> {
  const { port, host, token } = services.config.metrics;
  if (port === null) return null;
  if (via === 'primary') return openOpsSources(services, metrics);
  const listening = await startMetricsServer(services, metrics, { port, host, token });
  services.logger.info({ url: listening.url }, 'metrics, /healthz and /readyz listening');
  return { ready: null, close: () => listening.close() };
}

/** Where an HTTP server of compactor listens, and whether it runs without authentication. */
export interface ServeOptions {
  port: number;
  host: string;
  insecure: boolean;
}

/**
 * Starts the HTTP API of `compactor api` on services of its own (closed with it).
 * @throws {Error} when compactor's tables are missing (run migrate), without credentials
 *   (unless `insecure` on loopback), or when the address cannot be bound.
 */
export function serveApi(c: Config, logger: Logger, options: ServeOptions): Promise<ApiServer> {
  return withOwnServices(openServices(c, logger), (services) => startApi(services, options));
}

/**
 * Starts the dashboard of `compactor dashboard` on services of its own (closed with it).
 * @throws {Error} as {@link serveApi}.
 */
export function serveDashboard(
  c: Config,
  logger: Logger,
  options: ServeOptions & { readOnly: boolean },
): Promise<Dashboard> {
  return withOwnServices(openServices(c, logger, { poolSize: 4 }), (services) =>
    startDashboard(services, options),
  );
}

/** Checks the schema and starts a server that owns `services`; closes them when it cannot start. */
async function withOwnServices<T>(services: Services, start: (services: Services) => Promise<T>): Promise<T> {
  try {
    await assertSchema(services.database);
    return await start(services);
  } catch (error) {
    await services.close();
    throw error;
  }
}
