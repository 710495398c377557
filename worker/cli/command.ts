/**
 * What a command is: its options and help text as data, plus the function that runs it. The router
 * (cli.ts) parses flags with `util.parseArgs` from that data, prints help from it, and turns a
 * {@link UsageError} into one line on stderr and exit code 2.
 */
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { closest } from './format.ts';
import type { TerminalStream } from './progress.ts';

/** One `--flag` of a command. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Placeholder of the value in usage lines (`T` in `--tenant T`). String options only. */
  value?: string;
  /** One line for the help. */
  description: string;
  /** Refused when missing (`missing --session`). */
  required?: boolean;
}

/** Where a command writes: stdout for its results, stderr for progress and messages. */
export interface CommandIo {
  stdout: TerminalStream;
  stderr: TerminalStream;
}

/** What a command gets besides its arguments. */
export interface CommandContext extends CommandIo {
  /** The environment the command runs in (the process's own, unless `main` was given another). */
  env: NodeJS.ProcessEnv;
  /**
   * A JSON-lines logger at `level` (pino's level names) writing to the command's stderr; on the
   * process's own stderr, the same logger as everywhere else (`createLogger`).
   */
  logger(level: string): Logger;
  /**
   * The configuration, read from the environment on first call (commands that need none never fail
   * on a bad variable).
   * @throws {ConfigError} naming each bad variable.
   */
  config(): Config;
}

/** Parsed arguments: option values by name, and the positionals. */
export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** A command that does one thing: `history`, or an action of a group such as `policy set`. */
export interface Command {
  /** The words after `compactor`: `history`, `policy set`. */
  name: string;
  /** One line: what it does. */
  summary: string;
  /** Positionals in the usage line (`<file-or-dir>...`); absent: none are accepted. */
  positionals?: string;
  options: Record<string, OptionSpec>;
  /** Paragraphs after the options (what the output is, what else to know). */
  notes?: string[];
  /** Whole command lines, as a user would type them. */
  examples: string[];
  /** Runs with parsed arguments (required options present); resolves with the exit code. */
  run(args: ParsedArgs, context: CommandContext): Promise<number>;
}

/** A command whose first argument names an action: `policy set|get|list|delete`. */
export interface CommandGroup {
  name: string;
  summary: string;
  actions: Command[];
}

/** A wrong flag or argument: one line on stderr, exit code 2. The message says what is wrong. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Whether `args` ask for help (`--help`/`-h` before any `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/**
 * Parses `args` against the command's options with `util.parseArgs` (strict) and checks the
 * required ones.
 * @throws {UsageError} with one line naming the unknown option (and the closest known one), the
 *   option missing its value, the unexpected argument, or the missing required option.
 */
export function parseCommandArgs(command: Command, args: string[]): ParsedArgs {
  const options = Object.fromEntries(
    Object.entries(command.options).map(([name, o]) => [name, { type: o.type }]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options, allowPositionals: command.positionals !== undefined, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error as Error & { code?: string }, command));
  }
  for (const [name, option] of Object.entries(command.options)) {
    const value = parsed.values[name];
    if (option.required && (value === undefined || value === '')) throw new UsageError(`missing --${name}`);
  }
  return { values: parsed.values as ParsedArgs['values'], positionals: parsed.positionals };
}

/** parseArgs' multi-line messages, as one line in the command's own words. */
function describeParseError(error: Error & { code?: string }, command: Command): string {
  const flag = /'(-{1,2}[^' <]+)/.exec(error.message)?.[1] ?? '';
  const name = flag.replace(/^-+/, '');
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const guess = closest(name, Object.keys(command.options));
      return `unknown option ${flag}${guess ? `; did you mean --${guess}?` : ''}`;
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return command.options[name]?.type === 'boolean' ? `${flag} takes no value` : `${flag} needs a value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const argument = /'([^']*)'/.exec(error.message)?.[1] ?? '';
      return `unexpected argument "${argument}"`;
    }
    default:
      return error.message.split('\n')[0] ?? error.message;
  }
}

/**
 * A string option's value (parseCommandArgs has refused a missing required one, so this only
 * narrows the type).
 */
export function text(args: ParsedArgs, name: string): string {
  const value = args.values[name];
  if (typeof value !== 'string') throw new UsageError(`missing --${name}`);
  return value;
}

/** An optional string option's value. */
export function optionalText(args: ParsedArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Whether a boolean option was given. */
export function flag(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/**
 * A positive whole number option, or `fallback` when absent.
 * @throws {UsageError} for anything else (`--concurrency must be a positive integer, got "x"`).
 */
export function positiveInt(args: ParsedArgs, name: string, fallback: number): number {
  const value = args.values[name];
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a positive integer, got "${value}"`);
  return n;
}

/** The option every command that prints data has: JSON for scripts instead of a table. */
export const JSON_OPTION: OptionSpec = {
  type: 'boolean',
  description: 'one JSON object per line, for scripts (the table is for people)',
};

/** The `--tenant` option, required. */
export const TENANT_OPTION: OptionSpec = {
  type: 'string',
  value: 'T',
  description: 'tenant id',
  required: true,
};

/** The `--session` option, required. */
export const SESSION_OPTION: OptionSpec = {
  type: 'string',
  value: 'S',
  description: 'session id',
  required: true,
};

/** Prints `where: message (see: help)` on stderr; returns exit code 2. */
export function usageError(io: CommandIo, where: string, message: string, seeAlso: string): number {
  io.stderr.write(`${where}: ${message} (see: ${seeAlso})\n`);
  return 2;
}
