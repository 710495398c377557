/** `compactor worker`: processes compaction jobs until SIGTERM/SIGINT. */
import { type CommandContext, type ParsedArgs, positiveInt } from '../command.ts';
import { serveWorker } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

/** Runs `compactor worker` (its spec, flags and help: specs/worker.ts); resolves with the exit code. */
export async function runWorker(args: ParsedArgs, context: CommandContext): Promise<number> {
  const concurrency = positiveInt(args, 'concurrency', 4);
  const c = context.config();
  const logger = context.logger(c.logLevel);
  const worker = await serveWorker(c, logger, concurrency);
  return waitForSignals(async (force) => {
    logger.info({ force }, force ? 'second signal: forcing exit' : 'signal: finishing active jobs');
    await worker.close(force);
  });
}
