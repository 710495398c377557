/** `compactor dashboard`: Bull Board, the ledger API and the session pages until SIGTERM/SIGINT. */
import { type Command, flag, optionalText, UsageError } from '../command.ts';
import { serveDashboard } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

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
    const portText = optionalText(args, 'port');
    const c = context.config();
    const port = portText === undefined ? c.dashboard.port : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new UsageError(`--port must be a port number (0-65535), got "${portText}"`);
    const host = optionalText(args, 'host') ?? c.dashboard.host;
    const readOnly = flag(args, 'read-only');
    const logger = context.logger(c.logLevel);
    const dashboard = await serveDashboard(c, logger, {
      port,
      host,
      readOnly,
      insecure: flag(args, 'insecure'),
    });
    logger.info({ url: dashboard.url, readOnly, prefix: c.queuePrefix }, 'dashboard listening');
    return waitForSignals(async () => {
      logger.info('signal: closing the dashboard');
      await dashboard.close();
    });
  },
};
