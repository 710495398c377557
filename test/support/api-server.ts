/**
 * The HTTP API app served over real HTTP for one integration test file: on the file's database
 * and producer, a free loopback port, the credentials given; closed in the file's teardown.
 */

import { DEFAULT_LIMITS } from '../../shared/policy/limits.ts';
import { createApiApp } from '../../worker/http/api/index.ts';
import { apiOffload } from '../../worker/http/api/offload.ts';
import { TenantLimits } from '../../worker/http/api/tenant-limits.ts';
import type { Credentials } from '../../worker/http/dashboard/auth.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import { PolicyCache } from '../../worker/postgres/policy-cache.ts';
import type { Integration } from './integration.ts';

/**
 * Serves `createApiApp` for `ctx`'s database and producer. Call it in a `beforeAll`.
 * @param tokens each tenant's bearer token.
 * @param options.adminToken the admin's bearer token (default none).
 * @param options.maxBodyBytes the body limit, bytes.
 * @param options.threads large appends and context reads in worker threads on the file's database,
 *   as `compactor api` runs them (default: on the event loop, as a mounted app without a database
 *   URL does).
 * @param options.unlimitedRate a request rate no suite of requests in a row reaches, for a file
 *   whose cases are about input, not rates (default: the built-in limits, under which refused
 *   bodies count ten requests each).
 */
export async function serveApi(
  ctx: Integration,
  tokens: Record<string, string>,
  options: { adminToken?: string; maxBodyBytes: number; threads?: boolean; unlimitedRate?: boolean },
): Promise<Listening> {
  const credentials: Credentials = {
    adminToken: options.adminToken,
    adminUser: undefined,
    adminPassword: undefined,
    tenantTokens: Object.entries(tokens).map(([tenantId, token]) => ({ tenantId, token })),
  };
  const offload = options.threads
    ? apiOffload({ maxBodyBytes: options.maxBodyBytes, database: { url: ctx.tdb.url } })
    : undefined;
  if (offload) ctx.onTeardown(() => offload.close());
  const db = ctx.tdb.database.db;
  const limits = options.unlimitedRate
    ? new TenantLimits({
        policies: new PolicyCache(db),
        defaults: { ...DEFAULT_LIMITS, requestsPerSecond: 1_000_000, burst: 10_000_000 },
      })
    : undefined;
  const app = createApiApp(
    { db, producer: ctx.producer, ...(offload ? { offload } : {}), ...(limits ? { limits } : {}) },
    { credentials, maxBodyBytes: options.maxBodyBytes },
  );
  const server = await listen(app, 0, '127.0.0.1');
  ctx.onTeardown(() => server.close());
  return server;
}
