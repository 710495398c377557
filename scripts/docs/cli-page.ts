/**
 * The CLI reference page, from the command table `compactor --help` prints from (`COMMANDS` in
 * worker/cli/cli.ts): every command and action with its usage line, options, notes and examples,
 * and the strategies' shorthand. Pure: reads no file.
 */
import { STRATEGIES } from '../../shared/strategies/index.ts';
import { COMMANDS } from '../../worker/cli/cli.ts';
import type { Command, CommandGroup } from '../../worker/cli/command.ts';
import { usageLine } from '../../worker/cli/help.ts';
import {
  cell,
  code,
  fence,
  generatedNotice,
  page,
  prose,
  sentence,
  table,
  wrappedProse,
} from './markdown.ts';

/** The commands as the help lists them, groups opened into their actions. */
function leaves(): Command[] {
  return COMMANDS.flatMap((c: Command | CommandGroup) => ('actions' in c ? c.actions : [c]));
}

/**
 * The heading id of a command's section, as VitePress and GitHub both slug the heading
 * `compactor policy set`: `compactor-policy-set`.
 */
export function commandAnchor(command: Pick<Command, 'name'>): string {
  return `compactor-${command.name.replaceAll(' ', '-')}`;
}

/**
 * One command's section: summary, usage, options, notes (wrapped for the terminal, joined here into
 * paragraphs and lists), examples.
 */
function commandSection(command: Command): string {
  const options = Object.entries(command.options).map(([name, option]) => [
    code(option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`),
    option.required ? 'yes' : '',
    cell(option.description),
  ]);
  return page([
    `## compactor ${command.name}`,
    prose(sentence(command.summary)),
    fence('text', `usage: ${usageLine(command)}`),
    options.length > 0 ? table(['option', 'required', 'meaning'], options) : 'No options.',
    ...wrappedProse(command.notes ?? []),
    fence('sh', command.examples.join('\n')),
  ]).trimEnd();
}

/** The whole page, Markdown. */
export function cliReferencePage(): string {
  const groups = COMMANDS.filter((c): c is CommandGroup => 'actions' in c);
  return page([
    generatedNotice('the command table of `compactor` (`COMMANDS`)'),
    '# The `compactor` command',
    'Every command and its options, as `compactor --help` and `compactor <command> --help` print them ' +
      '(this page and the help are made from the same table). The [commands guide](../guide/commands.md) ' +
      'says what each does in more words; the [configuration reference](configuration.md) lists the ' +
      'environment variables every command reads.',
    fence('text', leaves().map(usageLine).join('\n')),
    table(
      ['command', 'what it does'],
      [
        ...COMMANDS.filter((c) => !('actions' in c)).map((c) => [
          `[${code(c.name)}](#${commandAnchor(c)})`,
          cell(c.summary),
        ]),
        ...groups.flatMap((g) =>
          g.actions.map((a) => [`[${code(a.name)}](#${commandAnchor(a)})`, cell(a.summary)]),
        ),
      ],
    ),
    'Exit codes: 0 done, 1 failed (the error is printed), 2 bad usage (one line on stderr saying what ' +
      'is wrong and where to look).',
    '## Strategies (`--strategy`)',
    `A strategy's shorthand, or a JSON object (the [policies guide](../guide/policies.md#strategies) ` +
      'tells each strategy and its options):',
    table(
      ['strategy', 'shorthand'],
      Object.entries(STRATEGIES).map(([name, unit]) => [code(name), code(unit.usage)]),
    ),
    ...leaves().map(commandSection),
  ]);
}
