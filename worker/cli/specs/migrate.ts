/**
 * What the parser and the help know of `compactor migrate`: flags, help text, examples. Its run
 * (commands/migrate.ts) is imported only when the command runs, so `--help` loads none of it.
 */
import type { Command } from '../command.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary:
    "create or update compactor's tables in their own schema (COMPACTOR_SCHEMA), and BullMQ's (COMPACTOR_QUEUE_SCHEMA) on the postgres queue backend; safe to repeat",
  options: {},
  examples: [
    'DATABASE_URL=postgres://postgres@127.0.0.1:5432/app COMPACTOR_SCHEMA=compactor compactor migrate',
  ],
  async run(args, context) {
    const { runMigrate } = await import('../commands/migrate.ts');
    return runMigrate(args, context);
  },
};
