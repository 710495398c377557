/** `compactor api`: the HTTP API (sessions, messages, events, context, compaction) until SIGTERM/SIGINT. */
import { type Command, flag, optionalText, UsageError } from '../command.ts';
import { serveApi } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

export const apiCommand: Command = {
  name: 'api',
  summary: 'serve the HTTP API (create, append, enqueue, context, compact, delete) until SIGTERM',
  options: {
    port: { type: 'string', value: 'N', description: 'port (default COMPACTOR_API_PORT, else 3100)' },
    host: {
      type: 'string',
      value: 'H',
      description: 'address (default COMPACTOR_API_HOST, else 127.0.0.1)',
    },
    insecure: { type: 'boolean', description: 'no authentication; only on a loopback host' },
  },
  notes: [
    'Takes keys issued with `compactor key create` (each route needs one scope) and the',
    "dashboard's credentials: COMPACTOR_DASHBOARD_TOKEN (the bootstrap admin: every scope; name the",
    'tenant in the Compactor-Tenant header) or a tenant token of COMPACTOR_DASHBOARD_TOKENS (every',
    'tenant scope). After 10 failed authentications in a minute a client gets 429. The OpenAPI',
    'document is at /v1/openapi.json.',
  ],
  examples: ['COMPACTOR_DASHBOARD_TOKENS=acme:$(openssl rand -hex 24) compactor api --port 8080'],
  async run(args, context) {
    const portText = optionalText(args, 'port');
    const c = context.config();
    const port = portText === undefined ? (c.api?.port ?? 3100) : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new UsageError(`--port must be a port number (0-65535), got "${portText}"`);
    const host = optionalText(args, 'host') ?? c.api?.host ?? '127.0.0.1';
    const logger = context.logger(c.logLevel);
    const server = await serveApi(c, logger, { port, host, insecure: flag(args, 'insecure') });
    logger.info({ url: server.url, prefix: c.queuePrefix }, 'api listening');
    return waitForSignals(async () => {
      logger.info('signal: closing the api');
      await server.close();
    });
  },
};
