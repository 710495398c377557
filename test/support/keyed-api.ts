/**
 * The HTTP API served on a loopback port for a test file, taking the issued keys of the file's
 * database (and, when given, a bootstrap admin token), closed with the file's other resources.
 */
import type { Logger } from 'pino';
import { createApiApp } from '../../worker/http/api/index.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import { keyStore } from '../../worker/postgres/api-keys.ts';
import type { Integration } from './integration.ts';

/** Starts the API on `ctx`'s database and producer; call it from `beforeAll`. */
export async function startKeyedApi(
  ctx: Integration,
  options: { adminToken?: string; logger?: Logger } = {},
): Promise<Listening> {
  const db = ctx.tdb.database.db;
  const app = createApiApp(
    { db, producer: ctx.producer, ...(options.logger ? { logger: options.logger } : {}) },
    {
      credentials: {
        adminToken: options.adminToken,
        adminUser: undefined,
        adminPassword: undefined,
        tenantTokens: [],
        keys: keyStore(db),
      },
    },
  );
  const server = await listen(app, 0, '127.0.0.1');
  ctx.onTeardown(() => server.close());
  return server;
}
