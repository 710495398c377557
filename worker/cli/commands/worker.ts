/** `compactor worker`: processes compaction jobs until SIGTERM/SIGINT. */
import { type Command, positiveInt } from '../command.ts';
import { serveWorker } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'process compaction jobs until SIGTERM (with COMPACTOR_METRICS_PORT: /metrics, /healthz, /readyz)',
  options: {
    concurrency: { type: 'string', value: 'N', description: 'jobs at once (default 4)' },
  },
  notes: [
    'Waits for Postgres and applies the migrations first. The first SIGTERM/SIGINT stops taking jobs',
    'and lets the active ones finish, then exits 0; a second exits at once (BullMQ hands the',
    'unfinished job to another worker). Also runs the scheduled sweeps (COMPACTOR_SWEEP_EVERY_MS) and',
    "delivers the tenants' webhooks (compactor webhook set).",
    'Logs are JSON lines on stderr.',
  ],
  examples: ['COMPACTOR_METRICS_PORT=9464 compactor worker --concurrency 8'],
  async run(args, context) {
    const concurrency = positiveInt(args, 'concurrency', 4);
    const c = context.config();
    const logger = context.logger(c.logLevel);
    const worker = await serveWorker(c, logger, concurrency);
    return waitForSignals(async (force) => {
      logger.info({ force }, force ? 'second signal: forcing exit' : 'signal: finishing active jobs');
      await worker.close(force);
    });
  },
};
