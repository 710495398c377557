/**
 * What the parser and the help know of `compactor dashboard`: flags, help text, examples. Its run
 * (commands/dashboard.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';

export const dashboardCommand: Command = {
  name: 'dashboard',
  summary: 'serve Bull Board, the ledger API and the session pages until SIGTERM',
  options: {
    port: { type: 'string', value: 'N', description: 'port (default COMPACTOR_DASHBOARD_PORT, else 3000)' },
    host: {
      type: 'string',
      value: 'H',
      description: 'address (default COMPACTOR_DASHBOARD_HOST, else 127.0.0.1)',
    },
    'read-only': { type: 'boolean', description: 'Bull Board read-only; the API refuses every change' },
    insecure: { type: 'boolean', description: 'no authentication; only on a loopback host' },
  },
  notes: [
    'Refuses to start without credentials: set COMPACTOR_DASHBOARD_TOKEN, _USER and _PASSWORD, or',
    '_TOKENS (see compactor --help), issue a key (compactor key create), or pass --insecure on a',
    'loopback host. Issued keys are taken as bearer tokens or as the basic-auth password.',
  ],
  examples: ['COMPACTOR_DASHBOARD_TOKEN=$(openssl rand -hex 24) compactor dashboard --port 8080'],
  async run(args, context) {
    const { runDashboard } = await import('../commands/dashboard.ts');
    return runDashboard(args, context);
  },
};
