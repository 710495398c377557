/**
 * What the parser and the help know of `compactor doctor`: flags, help text, examples. Its run
 * (commands/doctor.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { WORKER_STALE_AFTER_MS } from '../../../shared/protocol/queue-workers.ts';
import type { Command } from '../command.ts';

export const doctorCommand: Command = {
  name: 'doctor',
  summary:
    "check the database, its migrations, the queue backend, each queue's jobs and live workers, and name a mismatch",
  options: {},
  notes: [
    'Reads the same environment as `compactor worker` and a producer created without queue options,',
    "so run it with your service's environment. A worker is live when it renewed its row of the",
    `worker registry in the last ${WORKER_STALE_AFTER_MS / 1000} s. Exit 1 when the database cannot be`,
    "reached, or when workers are live but none on this environment's queue (the mismatch line says",
    'where they are); exit 0 otherwise, also with no worker live. Each probe gives up after 5 s.',
  ],
  examples: ['compactor doctor', 'REDIS_URL=redis://127.0.0.1:6379 compactor doctor'],
  async run(args, context) {
    const { runDoctor } = await import('../commands/doctor.ts');
    return runDoctor(args, context);
  },
};
