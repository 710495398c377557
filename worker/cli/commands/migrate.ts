/** `compactor migrate`: applies the SQL migrations. */
import { migrateDatabase } from '../../postgres/migrate.ts';
import type { Command } from '../command.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the SQL migrations in drizzle/ (safe to repeat)',
  options: {},
  examples: ['DATABASE_URL=postgres://postgres@127.0.0.1:5432/compactor compactor migrate'],
  async run(_args, context) {
    await migrateDatabase(context.config().databaseUrl);
    context.stdout.write('migrations applied\n');
    return 0;
  },
};
