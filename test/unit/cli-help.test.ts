/**
 * The help is made from the commands' specs: every command and action has usage, options and an
 * example, and every example is a command line its own command accepts. Then `import`'s own
 * options: the formats, --sidechains, and the line each imported file gets.
 */
import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_FORMATS } from '../../shared/contract/native-transcripts.ts';
import { parseStrategy } from '../../shared/strategies/index.ts';
import { COMMANDS, main } from '../../worker/cli/cli.ts';
import { type Command, parseCommandArgs } from '../../worker/cli/command.ts';
import { importedLine } from '../../worker/cli/commands/import.ts';
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

  it('lists the strategies with their kept-tail options, and a JSON example --strategy accepts', () => {
    const help = topHelp(COMMANDS);
    expect(help).toContain(
      'strategies (--strategy): none | slidingWindow:N[:Ttokens][:userTurn] | summarize[:N][:Ttokens][:userTurn] | clearToolResults[:N]',
    );
    expect(help).toContain('clearToolResults[:N]: no LLM call');
    expect(help).toContain('Ttokens (keepRecentTokens)');
    expect(help).toContain('userTurn (cutAtUserTurn)');
    const json = help.split('\n').find((line) => line.trim().startsWith('{"type"')) ?? '';
    expect(parseStrategy(json)).toMatchObject({ keepRecentTokens: 20_000, cutAtUserTurn: true });
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

describe('compactor import --help and its options', () => {
  const importCommand = leaves.find((c) => c.name === 'import') as Command;

  it('names each format, says the default is detected, and documents --sidechains and --pin-system', () => {
    const help = commandHelp(importCommand);
    for (const format of TRANSCRIPT_FORMATS) expect(help).toContain(format);
    expect(help).toMatch(
      /^ {2}--format F +corpus, anthropic, claude-code, openai-chat or openai-responses: .*default: detected/m,
    );
    expect(help).toMatch(/^ {2}--sidechains +claude-code: .*subagent/m);
    expect(help).toMatch(/^ {2}--pin-system P +leading \(default\) or none: /m);
    expect(usageLine(importCommand)).toBe(
      'compactor import <file-or-dir>... [--tenant T] [--session S] [--format F] [--sidechains] [--pin-system P]',
    );
  });

  it.each([
    [
      ['x.jsonl', '--format', 'openai'],
      '--format must be corpus, anthropic, claude-code, openai-chat or openai-responses, got "openai"',
    ],
    [
      ['x.jsonl', '--format', 'corpus', '--sidechains'],
      '--sidechains applies to --format claude-code, not corpus',
    ],
    [['x.jsonl', '--sidechains=yes'], '--sidechains takes no value'],
    [['x.jsonl', '--pin-system', 'all'], '--pin-system must be leading or none, got "all"'],
  ])('refuses %j before reading a file or the database: exit 2, one line', async (args, line) => {
    let stderr = '';
    const sink = { write: () => true };
    const errors = {
      write(t: string) {
        stderr += t;
        return true;
      },
    };
    const io = { stdout: sink, stderr: errors };
    expect(await main(['import', ...args], io)).toBe(2);
    expect(stderr).toBe(`compactor import: ${line} (see: compactor import --help)\n`);
  });

  it('says on each imported line which format was read, and whether it was detected', () => {
    const r = { file: 'a.jsonl', sessionId: 'a', messageCount: 30, tokenCount: 5207, ms: 12.4 };
    expect(importedLine({ ...r, format: 'claude-code', detected: true })).toBe(
      'imported a: 30 messages, 5207 tokens (claude-code, detected; 12 ms)',
    );
    expect(importedLine({ ...r, format: 'anthropic', detected: false })).toBe(
      'imported a: 30 messages, 5207 tokens (anthropic; 12 ms)',
    );
  });
});
