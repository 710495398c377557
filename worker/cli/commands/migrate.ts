/**
 * `compactor migrate`: applies the SQL migrations in compactor's own schema, and on the `postgres`
 * queue backend BullMQ's in the queue schema.
 */
import { migrateInstall } from '../../runtime/migrate-install.ts';
import type { Command } from '../command.ts';

export const migrateCommand: Command = {
  name: 'migrate',
  summary:
    "create or update compactor's tables in their own schema (COMPACTOR_SCHEMA), and BullMQ's (COMPACTOR_QUEUE_SCHEMA) on the postgres queue backend; safe to repeat",
  options: {},
  examples: [
    'DATABASE_URL=postgres://postgres@127.0.0.1:5432/app COMPACTOR_SCHEMA=compactor compactor migrate',
  ],
  async run(_args, context) {
    const c = context.config();
    const report = await migrateInstall(c);
    if (report.moved.length > 0)
      context.stdout.write(
        `moved ${report.moved.length} tables from schema "public" to "${report.schema}": ${report.moved.join(', ')}\n`,
      );
    context.stdout.write(
      report.applied === 0
        ? `schema "${report.schema}" is up to date (${report.total} migrations)\n`
        : `applied ${report.applied} migrations to schema "${report.schema}" (${report.total} in all)\n`,
    );
    if (report.queue)
      context.stdout.write(
        `queue schema "${report.queue.schema}" is at BullMQ schema version ${report.queue.version}\n`,
      );
    return 0;
  },
};
