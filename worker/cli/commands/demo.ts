/** `compactor demo`: the main job end to end on real transcripts (see ../demo.ts). */
import { type CommandContext, flag, type ParsedArgs, positiveInt, UsageError } from '../command.ts';
import { runDemo } from '../demo.ts';
import { openLocalDatabase } from '../local-database.ts';
import { createProgress } from '../progress.ts';

/** Runs `compactor demo` (its spec, flags and help: specs/demo.ts); resolves with the exit code. */
export async function runDemoCommand(args: ParsedArgs, context: CommandContext): Promise<number> {
  if (args.positionals.length > 1) throw new UsageError('demo takes at most one directory');
  const concurrency = positiveInt(args, 'concurrency', 4);
  const database = await openLocalDatabase(context, { command: 'demo', forced: flag(args, 'embedded') });
  try {
    return await runDemo(database.config, {
      dir: args.positionals[0],
      concurrency,
      out: context.stdout,
      err: context.stderr,
      progress: createProgress(context.stderr),
      logger: context.logger,
    });
  } finally {
    await database.close();
  }
}
