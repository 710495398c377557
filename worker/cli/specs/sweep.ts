/**
 * What the parser and the help know of `compactor sweep`: flags, help text, examples. Its run
 * (commands/sweep.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';

export const sweepCommand: Command = {
  name: 'sweep',
  summary:
    'scan every session now; enqueue a compaction for each one over its trigger; drop archived originals past retention',
  options: {
    'dry-run': {
      type: 'boolean',
      description: 'only list the sessions over their trigger and what retention would drop; change nothing',
    },
  },
  notes: [
    'Prints each due session (the first 100) as a JSON line, then each session whose archived originals',
    'the retention pass dropped (policies with retentionDays; the first 100) as {"tenantId", "sessionId",',
    '"retention": {...}}, then the totals as one JSON line. Each drop is an "expired" ledger row.',
    'The worker runs the same sweep every COMPACTOR_SWEEP_EVERY_MS.',
  ],
  examples: ['compactor sweep --dry-run'],
  async run(args, context) {
    const { runSweepCommand } = await import('../commands/sweep.ts');
    return runSweepCommand(args, context);
  },
};
