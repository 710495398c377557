/** `compactor context`: the request an agent sends next for a session, as JSON. */
import { loadContext } from '../../../producer/context.ts';
import { assertSchema, openDatabase } from '../../../producer/postgres/db.ts';
import { type CommandContext, optionalText, type ParsedArgs, text, UsageError } from '../command.ts';
import { jsonLine } from '../format.ts';

/** What `--thinking` takes. */
const THINKING_MODES = ['keep', 'strip'] as const;

/** What `--compaction-block` takes. */
const BLOCK_MODES = ['native', 'text'] as const;

/** Runs `compactor context` (its spec, flags and help: specs/context.ts); resolves with the exit code. */
export async function runContext(args: ParsedArgs, context: CommandContext): Promise<number> {
  const tenantId = text(args, 'tenant');
  const sessionId = text(args, 'session');
  const thinking = optionalText(args, 'thinking') ?? 'keep';
  if (!(THINKING_MODES as readonly string[]).includes(thinking)) {
    throw new UsageError(`--thinking must be keep or strip, got "${thinking}"`);
  }
  const block = optionalText(args, 'compaction-block') ?? 'native';
  if (!(BLOCK_MODES as readonly string[]).includes(block)) {
    throw new UsageError(`--compaction-block must be native or text, got "${block}"`);
  }
  const database = openDatabase(context.config().databaseUrl, {
    max: 1,
    schema: context.config().databaseSchema,
  });
  try {
    await assertSchema(database);
    const loaded = await loadContext(database.db, {
      tenantId,
      sessionId,
      thinking: thinking as (typeof THINKING_MODES)[number],
      compactionBlock: block as (typeof BLOCK_MODES)[number],
      format: 'any',
    });
    context.stdout.write(`${jsonLine(loaded)}\n`);
    return 0;
  } finally {
    await database.close();
  }
}
