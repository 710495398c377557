/** `compactor worker`: processes compaction jobs until SIGTERM/SIGINT. */
import { assertMetricsExposure, startMetricsServer } from '../../http/metrics-server.ts';
import { createWorkerMetrics } from '../../observability/metrics.ts';
import { describeDatabaseError } from '../../postgres/errors.ts';

import { startWorker } from '../../queue/compaction/worker.ts';
import { startSweepService } from '../../queue/sweeps/sweep.ts';
import { startWebhookWorker } from '../../queue/webhooks/webhook-worker.ts';
import { migrateInstall } from '../../runtime/migrate-install.ts';
import { openServices, poolSizeFor, redactUrl } from '../../runtime/services.ts';
import { retryUntilReady } from '../../runtime/startup.ts';
import { type Command, positiveInt } from '../command.ts';
import { waitForSignals } from '../signals.ts';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'process compaction jobs until SIGTERM (with COMPACTOR_METRICS_PORT: /metrics, /healthz, /readyz)',
  options: {
    concurrency: { type: 'string', value: 'N', description: 'jobs at once (default 4)' },
  },
  notes: [
    'Waits for Postgres and applies the migrations first. The first SIGTERM/SIGINT stops taking jobs',
    'and lets the active ones finish, then exits 0; a second exits at once (BullMQ hands the',
    'unfinished job to another worker). Also runs the scheduled sweeps (COMPACTOR_SWEEP_EVERY_MS) and',
    "delivers the tenants' webhooks (compactor webhook set).",
    'Logs are JSON lines on stderr.',
  ],
  examples: ['COMPACTOR_METRICS_PORT=9464 compactor worker --concurrency 8'],
  async run(args, context) {
    const concurrency = positiveInt(args, 'concurrency', 4);
    const c = context.config();
    // Before anything starts: an exposed metrics server without a token is refused.
    if (c.metrics.port !== null) assertMetricsExposure(c.metrics);
    const logger = context.logger(c.logLevel);
    const starting = new AbortController();
    const stopStarting = () => starting.abort();
    process.once('SIGTERM', stopStarting).once('SIGINT', stopStarting);
    // Each failed attempt is logged as its cause and what to do (a stopped server, a missing
    // database, a refused login), not as the driver's bare message.
    const migrate = () =>
      migrateInstall(c).catch((error: unknown) => {
        throw describeDatabaseError(error, { url: c.databaseUrl }) ?? error;
      });
    await retryUntilReady(migrate, {
      logger,
      what: `Postgres at ${redactUrl(c.databaseUrl)}`,
      signal: starting.signal,
    });
    process.off('SIGTERM', stopStarting).off('SIGINT', stopStarting);
    const poolSize = poolSizeFor(c, concurrency);
    const services = openServices(c, logger, { poolSize });
    const metrics = createWorkerMetrics();
    const running = startWorker(services, { concurrency, metrics });
    const webhooks = startWebhookWorker(services);
    const sweeps = await startSweepService(services, { metrics });
    const { port: metricsPort, host: metricsHost } = c.metrics;
    const ops =
      metricsPort === null
        ? null
        : await startMetricsServer(services, metrics, {
            port: metricsPort,
            host: metricsHost,
            token: c.metrics.token,
          });
    if (ops) logger.info({ url: ops.url }, 'metrics, /healthz and /readyz listening');
    logger.info(
      {
        concurrency: running.worker.opts.concurrency,
        dbPoolSize: poolSize,
        summarizer: services.summarizers.primary.name,
        queueBackend: services.queues.kind,
        queues: services.queues.where,
        ...(services.queues.kind === 'redis' ? { prefix: c.queuePrefix } : {}),
      },
      'worker started',
    );
    return waitForSignals(async (force) => {
      logger.info({ force }, force ? 'second signal: forcing exit' : 'signal: finishing active jobs');
      await sweeps.close();
      await webhooks.close(force);
      await running.close(force);
      await ops?.close();
    });
  },
};
