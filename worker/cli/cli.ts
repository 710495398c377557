/**
 * The `compactor` command line: finds the command, parses its flags (util.parseArgs, from the
 * command's spec in commands/), runs it and turns what it throws into an exit code:
 * 0 done, 1 failed (the error is printed; a database error as its cause and what to do), 2 bad usage (one line: what is wrong, where to look).
 */

import { packageJson } from '../config/package-files.ts';
import { type Command, type CommandGroup, type CommandIo, usageError, wantsHelp } from './command.ts';
import { closest } from './format.ts';
import { apiCommand } from './specs/api.ts';
import { compactCommand } from './specs/compact.ts';
import { contextCommand } from './specs/context.ts';
import { dashboardCommand } from './specs/dashboard.ts';
import { demoCommand } from './specs/demo.ts';
import { devCommand } from './specs/dev.ts';
import { doctorCommand } from './specs/doctor.ts';
import { enqueueCommand } from './specs/enqueue.ts';
import { historyCommand } from './specs/history.ts';
import { importCommand } from './specs/import.ts';
import { keyGroup } from './specs/key.ts';
import { migrateCommand } from './specs/migrate.ts';
import { policyGroup } from './specs/policy.ts';
import { purgeCommand } from './specs/purge.ts';
import { restoreCommand } from './specs/restore.ts';
import { sessionsGroup } from './specs/sessions.ts';
import { sweepCommand } from './specs/sweep.ts';
import { webhookGroup } from './specs/webhook.ts';
import { workerCommand } from './specs/worker.ts';

/** Every command, in the order `compactor --help` lists them. */
export const COMMANDS: ReadonlyArray<Command | CommandGroup> = [
  demoCommand,
  devCommand,
  migrateCommand,
  importCommand,
  enqueueCommand,
  workerCommand,
  doctorCommand,
  dashboardCommand,
  apiCommand,
  compactCommand,
  historyCommand,
  contextCommand,
  restoreCommand,
  purgeCommand,
  sweepCommand,
  policyGroup,
  sessionsGroup,
  webhookGroup,
  keyGroup,
];

/**
 * Runs the CLI with `argv` (without node and the script) and resolves with the exit code: 0 done,
 * 1 failed, 2 bad usage. Results go to `io.stdout`; errors, progress, notes and logs to `io.stderr`
 * (default: the process's own streams). The configuration is read from `env` (default: the
 * process's environment), so a caller can run a command in-process on another database without
 * touching `process.env`. Never rejects: every error is printed on `io.stderr`. The long-running
 * commands (`worker`, `dashboard`, `api`) still stop on the process's own SIGTERM/SIGINT.
 */
export async function main(
  argv: string[],
  io: CommandIo = { stdout: process.stdout, stderr: process.stderr },
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [first, ...rest] = argv;
  const print = (text: string) => io.stdout.write(`${text}\n`);
  if (first === undefined || first === '--help' || first === '-h') {
    const { topHelp } = await import('./help.ts');
    print(topHelp(COMMANDS));
    return first === undefined ? 2 : 0;
  }
  if (first === '--version' || first === '-V') {
    print(packageJson().version);
    return 0;
  }
  if (first === 'help') return help(rest, io);
  if (first.startsWith('-'))
    return usageError(io, 'compactor', `unknown option ${first}`, 'compactor --help');

  const found = find(first, io, 'compactor', COMMANDS);
  if (!found) return 2;
  if (!('actions' in found)) return helpOrRun(found, rest, io, env);
  const [actionName, ...actionArgs] = rest;
  if (actionName === '--help' || actionName === '-h') {
    const { groupHelp } = await import('./help.ts');
    print(groupHelp(found));
    return 0;
  }
  if (actionName === undefined) {
    const where = `compactor ${found.name}`;
    return usageError(io, where, `missing action: ${actionNames(found)}`, `${where} --help`);
  }
  const action = find(actionName, io, `compactor ${found.name}`, found.actions, found);
  return action ? helpOrRun(action, actionArgs, io, env) : 2;
}

/** The command's help when `args` ask for it (whatever else they hold), else the command's run. */
async function helpOrRun(
  command: Command,
  args: string[],
  io: CommandIo,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  if (wantsHelp(args)) {
    const { commandHelp } = await import('./help.ts');
    io.stdout.write(`${commandHelp(command)}\n`);
    return 0;
  }
  // Loaded only now: what a run needs (configuration, logger, database errors) is heavier than
  // what the help and the parser need, and `--version` or a usage error should not wait for it.
  const { runCommand } = await import('./run-command.ts');
  return runCommand(command, args, io, env);
}

/** `compactor help [command [action]]`. */
async function help(words: string[], io: CommandIo): Promise<number> {
  const { commandHelp, groupHelp, topHelp } = await import('./help.ts');
  const print = (text: string) => io.stdout.write(`${text}\n`);
  const [name, actionName] = words;
  if (name === undefined) {
    print(topHelp(COMMANDS));
    return 0;
  }
  const found = find(name, io, 'compactor help', COMMANDS);
  if (!found) return 2;
  if (!('actions' in found)) {
    print(commandHelp(found));
    return 0;
  }
  if (actionName === undefined) {
    print(groupHelp(found));
    return 0;
  }
  const action = find(actionName, io, `compactor help ${found.name}`, found.actions, found);
  if (!action) return 2;
  print(commandHelp(action));
  return 0;
}

/**
 * The command (or action of `group`) called `name`; otherwise prints the one-line usage error,
 * with the closest name if one is close, and returns undefined.
 */
function find<T extends Command | CommandGroup>(
  name: string,
  io: CommandIo,
  where: string,
  candidates: ReadonlyArray<T>,
  group?: CommandGroup,
): T | undefined {
  const short = (c: T) => (group ? c.name.slice(group.name.length + 1) : c.name);
  const hit = candidates.find((c) => short(c) === name);
  if (hit) return hit;
  const names = candidates.map(short);
  const guess = closest(name, names);
  const what = group ? `unknown action "${name}"` : `unknown command "${name}"`;
  const suggestion = guess ? `; did you mean "${guess}"?` : group ? `; use ${actionNames(group)}` : '';
  usageError(
    io,
    where,
    `${what}${suggestion}`,
    group ? `compactor ${group.name} --help` : 'compactor --help',
  );
  return undefined;
}

function actionNames(group: CommandGroup): string {
  const names = group.actions.map((a) => a.name.slice(group.name.length + 1));
  return names.length > 1
    ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`
    : (names[0] ?? '');
}
