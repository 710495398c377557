/**
 * What the parser and the help know of `compactor demo`: flags, help text, examples. Its run
 * (commands/demo.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';
import { EMBEDDED_NOTES, EMBEDDED_OPTION } from '../spec-values.ts';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'import the corpus under a fresh tenant, compact every session through BullMQ, print a table',
  positionals: '[dir]',
  options: {
    concurrency: { type: 'string', value: 'N', description: 'worker concurrency (default 4)' },
    embedded: EMBEDDED_OPTION,
  },
  notes: [
    "Migrates, imports every transcript in dir (default: the repository's corpus/sessions) under a new",
    'tenant, starts a worker in-process, enqueues one session.run.completed per session plus a',
    'duplicate of each, waits for them to settle, then prints what happened and checks that nothing was',
    'lost. Safe to run again: every run has its own tenant.',
    ...EMBEDDED_NOTES,
  ],
  examples: [
    'compactor demo',
    'compactor demo ./my-transcripts --concurrency 8',
    'compactor demo --embedded',
  ],
  async run(args, context) {
    const { runDemoCommand } = await import('../commands/demo.ts');
    return runDemoCommand(args, context);
  },
};
