/** `compactor purge`: deletes a session (with its lineage) or a whole tenant, everything held of it. */
import { assertSchema } from '../../../producer/postgres/db.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { purgeSessions } from '../../postgres/purge.ts';
import { openServices } from '../../runtime/services.ts';
import { type Command, flag, optionalText, TENANT_OPTION, text } from '../command.ts';
import { jsonLine } from '../format.ts';

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
  },
};
