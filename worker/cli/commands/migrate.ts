/**
 * `compactor migrate`: applies the SQL migrations in compactor's own schema, and on the `postgres`
 * queue backend BullMQ's in the queue schema.
 */
import { migrateInstall } from '../../runtime/migrate-install.ts';
import type { CommandContext, ParsedArgs } from '../command.ts';

/** Runs `compactor migrate` (its spec, flags and help: specs/migrate.ts); resolves with the exit code. */
export async function runMigrate(_args: ParsedArgs, context: CommandContext): Promise<number> {
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
}
