/**
 * `compactor api`: the HTTP API (app.ts) on its own listening socket, with the producer it
 * enqueues through. Refuses to start without credentials unless `insecure` on a loopback host,
 * like the dashboard (the same credentials serve both).
 */
import type { Hono } from 'hono';
import { connectionOf, createProducer } from '../../../producer/index.ts';
import { DEFAULT_API_MAX_BODY_BYTES } from '../../config/config.ts';
import { runAll, type Services } from '../../runtime/services.ts';
import { serverCredentials } from '../credentials.ts';
import { type Listening, listenOwning } from '../ops.ts';
import { type ApiEnv, createApiApp } from './app.ts';
import { apiOffload } from './offload.ts';
import { TenantLimits } from './tenant-limits.ts';

/** A running API server. */
export interface ApiServer extends Listening {
  app: Hono<ApiEnv>;
}

/**
 * Starts `compactor api` on `services`: checks it may start, opens a producer on the config's
 * Redis and prefix, and listens on `host:port` (0: any free port). Tenants' request rates are
 * counted in that Redis. Closing it closes the producer and `services`.
 * @throws {DashboardConfigError} without credentials (in the environment or issued), unless
 *   `insecure` on a loopback host.
 * @throws {Error} when the address cannot be bound.
 */
export async function startApi(
  services: Services,
  options: { port: number; host: string; insecure: boolean },
): Promise<ApiServer> {
  const { config, logger } = services;
  const credentials = await serverCredentials(services, options);
  const producer = createProducer({
    ...connectionOf(config),
    prefix: config.queuePrefix,
    db: services.database.db,
  });
  const maxBodyBytes = config.api?.maxBodyBytes ?? DEFAULT_API_MAX_BODY_BYTES;
  // Large appends and context reads run in worker threads on connections of their own.
  const offload = apiOffload({
    maxBodyBytes,
    database: { url: config.databaseUrl, schema: config.databaseSchema },
  });
  const app = createApiApp(
    {
      db: services.database.db,
      offload,
      producer,
      logger,
      // Counted where the queues are, Redis or Postgres (one rate per tenant across API
      // processes), read from the policy cache that policy writes notify.
      limits: new TenantLimits({
        policies: services.policies,
        ...(services.redis ? { redis: services.redis } : { postgres: services.database.db }),
        prefix: config.queuePrefix,
        ...(config.api?.limits ? { defaults: config.api.limits } : {}),
      }),
    },
    {
      credentials,
      maxBodyBytes,
      loopbackOnly: options.insecure,
    },
  );
  const cleanup = () =>
    runAll(logger, [() => offload.close(), () => producer.close(), () => services.close()]);
  return { ...(await listenOwning(app, options, logger, cleanup)), app };
}
