/** `compactor worker`: processes compaction jobs until SIGTERM/SIGINT. */
import cluster from 'node:cluster';
import os from 'node:os';
import { parseProcessCount } from '../../runtime/processes/process-count.ts';
import { type CommandContext, type ParsedArgs, positiveInt, UsageError } from '../command.ts';

/** Runs `compactor worker` (its spec, flags and help: specs/worker.ts); resolves with the exit code. */
export async function runWorker(args: ParsedArgs, context: CommandContext): Promise<number> {
  const concurrency = positiveInt(args, 'concurrency', 4);
  const raw = args.values.processes;
  const processes = parseProcessCount(typeof raw === 'string' ? raw : undefined, os.availableParallelism());
  if (processes === null)
    throw new UsageError(`--processes must be a positive integer or auto, got "${raw}"`);
  const c = context.config();
  const logger = context.logger(c.logLevel);
  if (processes > 1 && cluster.isWorker) {
    const { runWorkerProcess } = await import('../worker-process.ts');
    return runWorkerProcess(c, logger, concurrency);
  }
  if (processes > 1) {
    const { assertMetricsExposure } = await import('../../http/metrics-access.ts');
    const { port, host, token } = c.metrics;
    if (port !== null) assertMetricsExposure({ host, token });
    const { runPrimary } = await import('../worker-primary.ts');
    return runPrimary(
      { processes, env: context.env, metrics: port === null ? null : { port, host, token } },
      logger,
    );
  }
  const [{ serveWorker }, { startUntilSignal }] = await Promise.all([
    import('../serve.ts'),
    import('../signals.ts'),
  ]);
  return startUntilSignal(
    (starting) => serveWorker(c, logger, concurrency, { starting }),
    async (worker, force) => {
      logger.info({ force }, force ? 'second signal: forcing exit' : 'signal: finishing active jobs');
      await worker.close(force);
    },
  );
}
