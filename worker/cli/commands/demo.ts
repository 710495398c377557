/** `compactor demo`: the main job end to end on real transcripts (see ../demo.ts). */
import { type Command, flag, positiveInt, UsageError } from '../command.ts';
import { runDemo } from '../demo.ts';
import { EMBEDDED_NOTES, EMBEDDED_OPTION, openLocalDatabase } from '../local-database.ts';
import { createProgress } from '../progress.ts';

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
    if (args.positionals.length > 1) throw new UsageError('demo takes at most one directory');
    const concurrency = positiveInt(args, 'concurrency', 4);
    const database = await openLocalDatabase(context, { command: 'demo', forced: flag(args, 'embedded') });
    try {
      return await runDemo(database.config, {
        dir: args.positionals[0],
        concurrency,
        out: context.stdout,
        err: context.stderr,
        progress: createProgress(context.stderr),
        logger: context.logger,
      });
    } finally {
      await database.close();
    }
  },
};
