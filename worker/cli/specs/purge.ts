/**
 * What the parser and the help know of `compactor purge`: flags, help text, examples. Its run
 * (commands/purge.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, TENANT_OPTION } from '../command.ts';

export const purgeCommand: Command = {
  name: 'purge',
  summary:
    "delete a session's data (or a tenant's): messages, archive, ledger, batches, webhook log; print the counts as JSON",
  options: {
    tenant: TENANT_OPTION,
    session: {
      type: 'string',
      value: 'S',
      description: 'the session to delete, with the sessions it continued from and in',
    },
    yes: { type: 'boolean', description: 'required without --session: delete every session of the tenant' },
  },
  notes: [
    'One transaction: live and archived messages, ledger rows, batch rows and the session rows go',
    'together, and nothing of them can be restored afterwards. Queued jobs of a purged session find',
    'no session and end without effect.',
  ],
  examples: ['compactor purge --tenant acme --session run-42', 'compactor purge --tenant acme --yes'],
  async run(args, context) {
    const { runPurge } = await import('../commands/purge.ts');
    return runPurge(args, context);
  },
};
