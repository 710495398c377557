/** `compactor restore`: puts a compaction's archived messages back exactly. */
import { assertSchema } from '../../../producer/postgres/db.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { restoreCompaction } from '../../postgres/restore.ts';
import { openServices, type Services } from '../../runtime/services.ts';
import { type CommandContext, flag, type ParsedArgs, text } from '../command.ts';
import { jsonLine } from '../format.ts';
import { SHORT_ID } from '../spec-values.ts';

/** A compaction id cut short, as `history` shows it: hex (and dashes), shorter than a whole UUID. */
const ID_PREFIX = new RegExp(`^[0-9a-f][0-9a-f-]{${SHORT_ID - 1},34}$`, 'i');

/**
 * The whole id of the session's compaction whose id starts with `id`, when `id` is such a prefix;
 * any other text is returned as is (restoreCompaction judges it).
 * @throws {InvalidInputError} when no compaction of the session, or more than one, starts with it.
 */
export async function resolveCompactionId(
  services: Pick<Services, 'reads'>,
  request: { tenantId: string; sessionId: string; compactionId: string },
): Promise<string> {
  const { tenantId, sessionId, compactionId } = request;
  if (!ID_PREFIX.test(compactionId)) return compactionId;
  const prefix = compactionId.toLowerCase();
  const matches = (await services.reads.history(tenantId, sessionId)).filter((r) => r.id.startsWith(prefix));
  if (matches.length === 1) return (matches[0] as { id: string }).id;
  if (matches.length === 0) {
    await services.reads.assertSession(tenantId, sessionId);
    throw new InvalidInputError(
      `no compaction of session "${sessionId}" has an id starting with "${prefix}"`,
    );
  }
  throw new InvalidInputError(
    `${matches.length} compactions of session "${sessionId}" have ids starting with "${prefix}"; give more of the id`,
  );
}

/** Runs `compactor restore` (its spec, flags and help: specs/restore.ts); resolves with the exit code. */
export async function runRestore(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const sessionId = text(args, 'session');
  const c = context.config();
  const services = openServices(c, context.logger(c.logLevel), { poolSize: 2, listenForPolicies: false });
  try {
    await assertSchema(services.database);
    const compactionId = await resolveCompactionId(services, {
      tenantId,
      sessionId,
      compactionId: text(args, 'compaction'),
    });
    // The lease keeps a running compaction from paying for a summary the restore will fence off.
    const lease = await services.leases.acquire(tenantId, sessionId);
    if (!lease) throw new InvalidInputError(`session "${sessionId}" is being compacted right now; try again`);
    try {
      const result = await restoreCompaction(services.database.db, {
        tenantId,
        sessionId,
        compactionId,
        dryRun: flag(args, 'dry-run'),
      });
      context.stdout.write(`${jsonLine(result)}\n`);
      return 0;
    } finally {
      await lease.release();
    }
  } finally {
    await services.close();
  }
}
