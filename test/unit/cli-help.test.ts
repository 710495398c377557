/**
 * The help is made from the commands' specs: every command and action has usage, options and an
 * example, and every example is a command line its own command accepts.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../worker/cli/cli.ts';
import { type Command, parseCommandArgs } from '../../worker/cli/command.ts';
import { commandHelp, topHelp, usageLine } from '../../worker/cli/help.ts';

const leaves: Command[] = COMMANDS.flatMap((c) => ('actions' in c ? c.actions : [c]));

/** Shell words of a simple example: quotes and `$(…)` kept whole, `VAR=value` prefixes dropped. */
function words(line: string): string[] {
  const all = line.match(/(?:[^\s'$]+|'[^']*'|\$\([^)]*\)|\$)+/g) ?? [];
  const unquoted = all.map((w) => w.replace(/^'(.*)'$/s, '$1'));
  const start = unquoted.indexOf('compactor');
  const pipe = unquoted.indexOf('|');
  return unquoted.slice(start + 1, pipe === -1 ? undefined : pipe);
}

describe('command help', () => {
  it('lists every command in compactor --help', () => {
    const help = topHelp(COMMANDS);
    for (const c of COMMANDS) expect(help).toMatch(new RegExp(`^ {2}${c.name} +\\S`, 'm'));
  });

  it.each(leaves.map((c) => [c.name, c] as const))(
    '%s: usage, every option, and an example',
    (_name, command) => {
      const help = commandHelp(command);
      expect(help).toContain(`usage: ${usageLine(command)}`);
      for (const option of Object.keys(command.options)) expect(help).toContain(`--${option}`);
      expect(help).toMatch(/^examples?:\n {2}.*\bcompactor /m);
      expect(command.examples.length).toBeGreaterThan(0);
    },
  );

  it.each(leaves.flatMap((c) => c.examples.map((e) => [e, c] as const)))(
    'the example "%s" parses',
    (example, command) => {
      const argv = words(example);
      const path = command.name.split(' ');
      expect(argv.slice(0, path.length)).toEqual(path);
      expect(() => parseCommandArgs(command, argv.slice(path.length))).not.toThrow();
    },
  );
});
