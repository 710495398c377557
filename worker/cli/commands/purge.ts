/** `compactor purge`: deletes a session (with its lineage) or a whole tenant, everything held of it. */
import { assertSchema } from '../../../producer/postgres/db.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { purgeSessions } from '../../postgres/purge.ts';
import { openServices } from '../../runtime/services.ts';
import { type CommandContext, flag, optionalText, type ParsedArgs, text } from '../command.ts';
import { jsonLine } from '../format.ts';

/** Runs `compactor purge` (its spec, flags and help: specs/purge.ts); resolves with the exit code. */
export async function runPurge(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const sessionId = optionalText(args, 'session');
  if (sessionId === undefined && !flag(args, 'yes')) {
    throw new InvalidInputError(
      `purge of every session of tenant "${tenantId}": add --yes, or name --session`,
    );
  }
  const c = context.config();
  const services = openServices(c, context.logger(c.logLevel), { poolSize: 2, listenForPolicies: false });
  try {
    await assertSchema(services.database);
    const result = await purgeSessions(services.database.db, {
      tenantId,
      ...(sessionId ? { sessionId } : {}),
    });
    context.stdout.write(`${jsonLine(result)}\n`);
    return 0;
  } finally {
    await services.close();
  }
}
