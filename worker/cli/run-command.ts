/**
 * Runs one parsed command and turns what it throws into an exit code: 1 failed (the error printed,
 * a database error as its cause and what to do), 2 bad usage. Loaded by cli.ts only when a command
 * runs, so that `--version`, `--help` and usage errors load none of what a run needs (the
 * configuration's schemas, the logger, Postgres's error codes).
 */
import { InvalidInputError, TranscriptError } from '../../shared/contract/errors.ts';
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { describeDatabaseError } from '../postgres/errors.ts';
import { EmbeddedPostgresError } from '../runtime/embedded-postgres-rules.ts';
import { createLogger } from '../runtime/logger.ts';
import { type Command, type CommandIo, parseCommandArgs, UsageError, usageError } from './command.ts';
import { terminalText } from './format.ts';
import { missingPeer } from './missing-peer.ts';

/**
 * Errors whose message is the whole story; anything else is printed as `failed: <message>`.
 * (ConfigError covers its subclasses, such as the dashboard's DashboardConfigError.)
 */
const EXPECTED_ERRORS = [ConfigError, InvalidInputError, TranscriptError, EmbeddedPostgresError];

/**
 * Parses `args` by `command`'s spec and runs it with `io` and the configuration read from `env`.
 * @returns the exit code: the command's own, 1 when it threw, 2 when its arguments are bad. Never
 *   rejects: every error is printed on `io.stderr`.
 */
export async function runCommand(
  command: Command,
  args: string[],
  io: CommandIo,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const where = `compactor ${command.name}`;
  let config: Config | undefined;
  try {
    const parsed = parseCommandArgs(command, args);
    return await command.run(parsed, {
      ...io,
      env,
      config: () => {
        config ??= loadConfig(env);
        return config;
      },
      // pino's own synchronous destination on fd 2 for the process's stderr, as everywhere else.
      logger: (level) =>
        createLogger(level, 'compactor', io.stderr === process.stderr ? undefined : io.stderr),
    });
  } catch (error) {
    if (error instanceof UsageError) return usageError(io, where, error.message, `${where} --help`);
    // A command's run is loaded when it runs: a peer it needs that is not installed is said here.
    const hint = missingPeer(error);
    if (hint) {
      io.stderr.write(hint);
      return 1;
    }
    // A Postgres error is told as its cause and what to do (never drizzle's SQL text); one with
    // advice is the whole story, like the expected errors.
    const database = describeDatabaseError(error, { url: config?.databaseUrl });
    const expected = database ? database.hint !== null : EXPECTED_ERRORS.some((c) => error instanceof c);
    const message = database?.message ?? (error instanceof Error ? error.message : String(error));
    // Messages quote ids and stored text: escaped, so none can act on the terminal.
    const shown = terminalText(message);
    io.stderr.write(`${where}: ${expected ? shown : `failed: ${shown}`}\n`);
    return 1;
  }
}
