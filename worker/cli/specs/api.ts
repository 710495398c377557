/**
 * What the parser and the help know of `compactor api`: flags, help text, examples. Its run
 * (commands/api.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';

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
    const { runApi } = await import('../commands/api.ts');
    return runApi(args, context);
  },
};
