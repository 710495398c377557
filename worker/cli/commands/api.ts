/** `compactor api`: the HTTP API (sessions, messages, events, context, compaction) until SIGTERM/SIGINT. */
import { DEFAULT_API_MAX_HEAP_MB } from '../../config/config.ts';
import { type Command, flag, optionalText, UsageError } from '../command.ts';
import { followParent, hasHeapFlag, heapLimitMb, runWithHeapBound } from '../heap.ts';
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
    'document is at /v1/openapi.json, and /v1 names it.',
    'It serves under a bounded heap: started without --max-old-space-size, it starts itself again in a',
    'child process of the same Node with --max-old-space-size=COMPACTOR_API_MAX_HEAP_MB (default 256;',
    "0: node's own bound), relaying its output, SIGINT and SIGTERM and its exit code. The line",
    '"api listening" gives the serving process\'s pid and heapLimitMb (V8\'s bound: old space plus',
    'about 48 MB of young generation).',
  ],
  examples: ['COMPACTOR_DASHBOARD_TOKENS=acme:$(openssl rand -hex 24) compactor api --port 8080'],
  async run(args, context) {
    const portText = optionalText(args, 'port');
    const c = context.config();
    const port = portText === undefined ? (c.api?.port ?? 3100) : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new UsageError(`--port must be a port number (0-65535), got "${portText}"`);
    const host = optionalText(args, 'host') ?? c.api?.host ?? '127.0.0.1';
    const insecure = flag(args, 'insecure');
    const heapMb = c.api?.maxHeapMb ?? DEFAULT_API_MAX_HEAP_MB;
    if (heapMb > 0 && !hasHeapFlag(process.execArgv)) {
      const again = ['api', '--port', String(port), '--host', host, ...(insecure ? ['--insecure'] : [])];
      return runWithHeapBound(heapMb, again, context, context.env);
    }
    if (hasHeapFlag(process.execArgv)) followParent();
    const logger = context.logger(c.logLevel);
    const server = await serveApi(c, logger, { port, host, insecure });
    // Signals are ours before the line that says it listens (a client may stop it right then).
    const stopped = waitForSignals(async () => {
      logger.info('signal: closing the api');
      await server.close();
    });
    logger.info({ url: server.url, prefix: c.queuePrefix, heapLimitMb: heapLimitMb() }, 'api listening');
    return stopped;
  },
};
