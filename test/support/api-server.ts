/**
 * The HTTP API app served over real HTTP for one integration test file: on the file's database
 * and producer, a free loopback port, the credentials given; closed in the file's teardown.
 */

import { createApiApp } from '../../worker/http/api/index.ts';
import type { Credentials } from '../../worker/http/dashboard/auth.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import type { Integration } from './integration.ts';

/**
 * Serves `createApiApp` for `ctx`'s database and producer. Call it in a `beforeAll`.
 * @param tokens each tenant's bearer token.
 * @param options.adminToken the admin's bearer token (default none).
 * @param options.maxBodyBytes the body limit, bytes.
 */
export async function serveApi(
  ctx: Integration,
  tokens: Record<string, string>,
  options: { adminToken?: string; maxBodyBytes: number },
): Promise<Listening> {
  const credentials: Credentials = {
    adminToken: options.adminToken,
    adminUser: undefined,
    adminPassword: undefined,
    tenantTokens: Object.entries(tokens).map(([tenantId, token]) => ({ tenantId, token })),
  };
  const app = createApiApp(
    { db: ctx.tdb.database.db, producer: ctx.producer },
    { credentials, maxBodyBytes: options.maxBodyBytes },
  );
  const server = await listen(app, 0, '127.0.0.1');
  ctx.onTeardown(() => server.close());
  return server;
}
