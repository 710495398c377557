/** `compactor sweep`: one sweep now, as the scheduler runs it. */
import { connectionOf, createProducer } from '../../../producer/index.ts';
import { assertSchema, openDatabase } from '../../../producer/postgres/db.ts';
import { countLiveSessions } from '../../postgres/queries/sessions.ts';
import { runRetention } from '../../queue/sweeps/retention.ts';
import { runSweep } from '../../queue/sweeps/sweep.ts';
import { type CommandContext, flag, type ParsedArgs } from '../command.ts';
import { jsonLine } from '../format.ts';
import { createProgress } from '../progress.ts';

/** Runs `compactor sweep` (its spec, flags and help: specs/sweep.ts); resolves with the exit code. */
export async function runSweepCommand(args: ParsedArgs, context: CommandContext): Promise<number> {
  const dryRun = flag(args, 'dry-run');
  const c = context.config();
  const database = openDatabase(c.databaseUrl, { max: 2, schema: c.databaseSchema });
  const producer = dryRun
    ? null
    : createProducer({ ...connectionOf(c), prefix: c.queuePrefix, db: database.db });
  const progress = createProgress(context.stderr);
  try {
    await assertSchema(database);
    if (progress.drawing) {
      // Only for the bar's total (the scan itself counts as it goes): the sessions the sweep
      // walks, those not continued in a child session. A stale count only misplaces the bar.
      const total = await countLiveSessions(database.db);
      progress.start('sweeping', total, 'sessions');
    }
    const result = await runSweep(database.db, producer, {
      dryRun,
      onPage: (scanned) => progress.update(scanned),
    });
    progress.stop();
    const retention = await runRetention(database.db, { dryRun });
    for (const due of result.sample) context.stdout.write(`${jsonLine(due)}\n`);
    for (const { tenantId, sessionId, ...dropped } of retention.sample) {
      context.stdout.write(`${jsonLine({ tenantId, sessionId, retention: dropped })}\n`);
    }
    const { sample: _sample, ...totals } = result;
    const { sample: _dropped, ...expired } = retention;
    context.stdout.write(
      `${JSON.stringify({
        dryRun,
        ...totals,
        ms: Math.round(totals.ms),
        retention: { ...expired, ms: Math.round(expired.ms) },
      })}\n`,
    );
    return 0;
  } finally {
    progress.stop();
    await producer?.close();
    await database.close();
  }
}
