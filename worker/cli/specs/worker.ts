/**
 * What the parser and the help know of `compactor worker`: flags, help text, examples. Its run
 * (commands/worker.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';

export const workerCommand: Command = {
  name: 'worker',
  summary: 'process compaction jobs until SIGTERM (with COMPACTOR_METRICS_PORT: /metrics, /healthz, /readyz)',
  options: {
    concurrency: { type: 'string', value: 'N', description: 'jobs at once in each process (default 4)' },
    processes: {
      type: 'string',
      value: 'N|auto',
      description: 'worker processes (default 1; auto: one per core): N × concurrency jobs in flight',
    },
  },
  notes: [
    'Waits for Postgres and applies the migrations first. The first SIGTERM/SIGINT stops taking jobs',
    'and lets the active ones finish, then exits 0; a second exits at once (BullMQ hands the',
    'unfinished job to another worker). Also runs the scheduled sweeps (COMPACTOR_SWEEP_EVERY_MS) and',
    "delivers the tenants' webhooks (compactor webhook set).",
    'Logs are JSON lines on stderr.',
    'With --processes N (N > 1) a primary process starts N worker processes, each an ordinary worker',
    'with its own --concurrency and its own Postgres pool, and restarts one that dies (5 restarts',
    'within a minute stop them all, exit 1). Signals go to the primary; /metrics on the primary sums',
    "the processes' metrics, /readyz is ready when every process is. Log lines carry `process`.",
  ],
  examples: [
    'COMPACTOR_METRICS_PORT=9464 compactor worker --concurrency 8',
    'compactor worker --processes auto --concurrency 32',
  ],
  async run(args, context) {
    const { runWorker } = await import('../commands/worker.ts');
    return runWorker(args, context);
  },
};
