/**
 * What the parser and the help know of `compactor restore`: flags, help text, examples. Its run
 * (commands/restore.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, SESSION_OPTION, TENANT_OPTION } from '../command.ts';
import { SHORT_ID } from '../spec-values.ts';

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'undo one compaction: its archived messages go back exactly; print the result as JSON',
  options: {
    tenant: TENANT_OPTION,
    session: SESSION_OPTION,
    compaction: {
      type: 'string',
      value: 'ID',
      description: `the compaction id, or its first ${SHORT_ID}+ characters as history shows them`,
      required: true,
    },
    'dry-run': { type: 'boolean', description: 'list the seqs that would come back; write nothing' },
  },
  notes: [
    'The archived messages return with their seq, content and order, the summary message goes, the',
    'checkpoint it replaced comes back, and the ledger row becomes "restored". Restore stacked',
    'compactions newest first; restoring twice changes nothing.',
  ],
  examples: ['compactor restore --tenant acme --session run-42 --compaction 3f2a1b9c --dry-run'],
  async run(args, context) {
    const { runRestore } = await import('../commands/restore.ts');
    return runRestore(args, context);
  },
};
