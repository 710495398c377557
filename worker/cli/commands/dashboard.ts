/** `compactor dashboard`: Bull Board, the ledger API and the session pages until SIGTERM/SIGINT. */
import { type CommandContext, flag, optionalText, type ParsedArgs, UsageError } from '../command.ts';
import { serveDashboard } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

/** Runs `compactor dashboard` (its spec, flags and help: specs/dashboard.ts); resolves with the exit code. */
export async function runDashboard(args: ParsedArgs, context: CommandContext): Promise<number> {
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
}
