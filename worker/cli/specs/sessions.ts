/**
 * What the parser and the help know of `compactor sessions list`, `compactor sessions`: flags, help text, examples. Its run
 * (commands/sessions.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import { type Command, type CommandGroup, JSON_OPTION, TENANT_OPTION } from '../command.ts';
import { DEFAULT_SESSIONS_LIMIT } from '../spec-values.ts';

const listCommand: Command = {
  name: 'sessions list',
  summary: "list a tenant's sessions: size, compactions, and the child session if one continued it",
  options: {
    tenant: TENANT_OPTION,
    limit: {
      type: 'string',
      value: 'N',
      description: `most sessions to list (default ${DEFAULT_SESSIONS_LIMIT})`,
    },
    json: JSON_OPTION,
  },
  notes: [
    'By session id. "continued in" names the child session a newSession compaction wrote the',
    'compacted history to. --json prints each session with its latest ledger row, one per line.',
  ],
  examples: ['compactor sessions list --tenant acme --limit 20'],
  async run(args, context) {
    const { runSessionsList } = await import('../commands/sessions.ts');
    return runSessionsList(args, context);
  },
};

export const sessionsGroup: CommandGroup = {
  name: 'sessions',
  summary: "list a tenant's sessions",
  actions: [listCommand],
};
