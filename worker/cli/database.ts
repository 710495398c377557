/** The database of a command that reads or writes a few rows and exits. */
import { assertSchema, type Db, openDatabase } from '../../producer/postgres/db.ts';
import type { CommandContext } from './command.ts';

/**
 * Runs `work` with a one-connection database of the configured URL and schema, checked to hold
 * compactor's tables first, and closed afterwards.
 * @throws {Error} the schema check's (one line saying what to do) or `work`'s errors.
 */
export async function withDatabase<T>(context: CommandContext, work: (db: Db) => Promise<T>): Promise<T> {
  const database = openDatabase(context.config().databaseUrl, {
    max: 1,
    schema: context.config().databaseSchema,
  });
  try {
    await assertSchema(database);
    return await work(database.db);
  } finally {
    await database.close();
  }
}
