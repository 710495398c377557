/**
 * Help text, built from the commands' own specs so it cannot disagree with what they parse:
 * `compactor --help` (every command, the strategies, every environment variable, the exit codes)
 * and `compactor <command> --help` (usage, options, notes, an example).
 */

import { packageJson } from '../config/package-files.ts';
import type { Command, CommandGroup } from './command.ts';
import { ENVIRONMENT_HELP, STRATEGY_USAGES } from './help-sections.generated.ts';

/** The package's name, version and description, from package.json. */
export function packageInfo(): { name: string; version: string; description: string } {
  const pkg = packageJson();
  return { name: pkg.name, version: pkg.version, description: pkg.description };
}

/** `compactor history --tenant T --session S [--json]`: required options first, then optional ones. */
export function usageLine(command: Command): string {
  const parts = [`compactor ${command.name}`];
  if (command.positionals) parts.push(command.positionals);
  const entries = Object.entries(command.options);
  const show = (name: string, o: Command['options'][string]) =>
    o.type === 'string' ? `--${name} ${o.value ?? 'VALUE'}` : `--${name}`;
  for (const [name, o] of entries) if (o.required) parts.push(show(name, o));
  for (const [name, o] of entries) if (!o.required) parts.push(`[${show(name, o)}]`);
  return parts.join(' ');
}

/** A command's help: summary, usage, options, notes, examples. */
export function commandHelp(command: Command): string {
  const rows: Array<[string, string]> = Object.entries(command.options).map(([name, o]) => [
    o.type === 'string' ? `--${name} ${o.value ?? 'VALUE'}` : `--${name}`,
    o.required ? `${o.description} (required)` : o.description,
  ]);
  rows.push(['-h, --help', 'show this help']);
  const width = Math.max(...rows.map(([left]) => left.length));
  return [
    `compactor ${command.name}: ${command.summary}`,
    '',
    `usage: ${usageLine(command)}`,
    '',
    'options:',
    ...rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`),
    ...(command.notes && command.notes.length > 0 ? ['', ...command.notes] : []),
    '',
    command.examples.length > 1 ? 'examples:' : 'example:',
    ...command.examples.map((e) => `  ${e}`),
    '',
    'environment: see compactor --help',
  ].join('\n');
}

/** A group's help: its actions, each with its usage line. */
export function groupHelp(group: CommandGroup): string {
  return [
    `compactor ${group.name}: ${group.summary}`,
    '',
    'usage:',
    ...group.actions.map((a) => `  ${usageLine(a)}`),
    '',
    'actions:',
    ...group.actions.map((a) => `  ${a.name.slice(group.name.length + 1).padEnd(8)}  ${a.summary}`),
    '',
    `Run compactor ${group.name} <action> --help for an action's options and an example.`,
  ].join('\n');
}

/** `compactor --help`: every command, the strategies, every environment variable, exit codes. */
export function topHelp(commands: ReadonlyArray<Command | CommandGroup>): string {
  const { version, description } = packageInfo();
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `compactor ${version}: ${description.charAt(0).toLowerCase()}${description.slice(1)}`,
    '',
    'usage: compactor <command> [options]',
    '       compactor <command> --help    that command’s options and an example',
    '       compactor --version',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `strategies (--strategy): ${STRATEGY_USAGES.join(' | ')} | a JSON object such as`,
    '  {"type":"summarize","keepRecent":20,"keepRecentTokens":20000,"cutAtUserTurn":true,"maxSummaryTokens":2000}',
    '  N: newest messages kept; Ttokens (keepRecentTokens): newest estimated tokens kept, whichever',
    '  keeps more; userTurn (cutAtUserTurn): the kept messages begin with a user turn',
    '  clearToolResults[:N]: no LLM call; tool results older than the newest N tool uses (default 3)',
    '  become a placeholder, the originals archived; JSON options clearAtLeast (tokens, default 1000),',
    '  clearToolInputs, excludeTools',
    '  clearThinking[:N]: no LLM call; thinking blocks of assistant turns older than the newest N',
    '  turns with thinking (default 1) are dropped, the originals archived; an open tool loop stays',
    '  auto[:N]: clearToolResults, then summarize (keeping N) only while the session is still over',
    '  its trigger; each stage its own ledger row and restore; JSON options clear, summarize',
    '',
    'environment:',
    ...ENVIRONMENT_HELP,
    '',
    'exit codes: 0 done, 1 failed (the error is printed), 2 bad usage',
  ].join('\n');
}
