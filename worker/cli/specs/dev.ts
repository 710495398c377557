/**
 * What the parser and the help know of `compactor dev`: flags, help text, examples. Its run
 * (commands/dev.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';
import { EMBEDDED_NOTES, EMBEDDED_OPTION } from '../spec-values.ts';

export const devCommand: Command = {
  name: 'dev',
  summary: 'run the worker, the API and the dashboard in one process until Ctrl-C',
  options: {
    concurrency: { type: 'string', value: 'N', description: 'worker concurrency (default 4)' },
    embedded: EMBEDDED_OPTION,
    insecure: { type: 'boolean', description: 'no authentication for the API and dashboard; loopback only' },
  },
  notes: [
    'For trying compactor on one machine: what `compactor worker`, `compactor api` and `compactor',
    'dashboard` do as three processes, in one (ports: COMPACTOR_API_PORT, COMPACTOR_DASHBOARD_PORT). It',
    'prints their URLs on stdout, with admin credentials made for this run unless COMPACTOR_DASHBOARD_*',
    "sets some; each of those URLs answers 200 with them (the API's, /v1, names its OpenAPI document,",
    'its MCP server and its docs). A configured database that does not exist yet is created, as demo',
    'does; a server that cannot be reached, or a role that may not create it, fails at once in one line.',
    'Ctrl-C (or SIGTERM) closes the servers, lets active jobs finish, stops the embedded',
    'database and exits 0; a second one exits at once.',
    ...EMBEDDED_NOTES,
  ],
  examples: ['compactor dev', 'COMPACTOR_DASHBOARD_PORT=8080 compactor dev --concurrency 8'],
  async run(args, context) {
    const { runDev } = await import('../commands/dev.ts');
    return runDev(args, context);
  },
};
