/**
 * What the parser and the help know of `compactor history`: flags, help text, examples. Its run
 * (commands/history.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, JSON_OPTION, SESSION_OPTION, TENANT_OPTION } from '../command.ts';
import { SHORT_ID } from '../spec-values.ts';

export const historyCommand: Command = {
  name: 'history',
  summary: "print a session's compactions: a table, or JSON lines with --json",
  options: { tenant: TENANT_OPTION, session: SESSION_OPTION, json: JSON_OPTION },
  notes: [
    'Oldest first. The table fits the terminal by cutting the reason; its id column is the first',
    `${SHORT_ID} characters of the compaction id, which restore --compaction accepts. --json prints each`,
    'ledger row whole, one per line.',
  ],
  examples: [
    'compactor history --tenant acme --session run-42',
    'compactor history --tenant acme --session run-42 --json | jq .costUsd',
  ],
  async run(args, context) {
    const { runHistory } = await import('../commands/history.ts');
    return runHistory(args, context);
  },
};
