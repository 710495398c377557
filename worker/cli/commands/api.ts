/** `compactor api`: the HTTP API (sessions, messages, events, context, compaction) until SIGTERM/SIGINT. */
import { DEFAULT_API_MAX_HEAP_MB } from '../../config/config.ts';
import { type CommandContext, flag, optionalText, type ParsedArgs, UsageError } from '../command.ts';
import { followParent, hasHeapFlag, heapLimitMb, runWithHeapBound } from '../heap.ts';
import { serveApi } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

/** Runs `compactor api` (its spec, flags and help: specs/api.ts); resolves with the exit code. */
export async function runApi(args: ParsedArgs, context: CommandContext): Promise<number> {
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
}
