/**
 * What the agent's recent words keep naming: the code names (functions, classes, variables, files)
 * its last messages mention most, the newest counting most. The agent's last message often only
 * says "Let me check that function:"; the names around it say which.
 */
import type { Message } from '../contract/message.ts';
import { firstLine } from '../text/text.ts';
import { pathArgument, stringArgument, type ToolRun } from './tool-runs.ts';

/** Assistant messages (prose, and each call's command line or path) read for the focus. */
const FOCUS_WINDOW = 8;

/** Most names the focus lists. */
export const FOCUS_NAMES = 4;

/**
 * A code name: a backticked span without spaces, else a word with an inner `_`, an inner capital
 * (`camelCase`, `CamelCase` with two capitals), a dot between words (`pkg.mod`, `a.py`) or a call
 * `(`. Plain words are prose.
 */
const BACKTICKED = /`([^`\s]{3,60})`/g;
// Each part is bounded (a name is at most 60 characters a part): a long run of word characters
// cannot make the match try every split of it.
const CODE_WORD =
  /(?<![\w./-])(?:[A-Za-z_]\w{0,60}_\w{1,60}|[a-z][a-z0-9]{0,60}[A-Z]\w{0,60}|[A-Z][a-z0-9]{1,60}[A-Z]\w{0,60}|[A-Za-z_]\w{0,60}(?:\.[A-Za-z_]\w{0,60}){1,6}|[A-Za-z_]\w{0,60}(?=\())(?![\w/-])/g;

/** Names every program has, which say nothing of the work. */
const COMMON = new Set(
  'self cls None True False print len str int dict list tuple range open __init__ __name__ __main__ os.path sys.path np.array'.split(
    ' ',
  ),
);

/**
 * Up to {@link FOCUS_NAMES} code names from the last {@link FOCUS_WINDOW} assistant messages
 * (prose, and each tool call's first command line or its path; `runs` by call index), ranked by
 * how often they appear, each mention weighted by how recent its message is (the newest counts
 * {@link FOCUS_WINDOW}, the oldest 1);
 * names of three characters or fewer, common ones (`self`, `print`) and those in `except` (the
 * text the focus goes with: it names them already) left out. Pure.
 */
export function recentFocus(messages: Message[], runs: Map<number, ToolRun>, except = ''): string[] {
  const window: string[] = [];
  for (let i = messages.length - 1; i >= 0 && window.length < FOCUS_WINDOW; i--) {
    const m = messages[i];
    if (m?.role !== 'assistant') continue;
    // Sentences run together ("call.We") are not dotted names.
    if (m.kind === 'message') window.push(m.content.slice(0, 8_000).replace(/\.(?=[A-Z])/g, '. '));
    const run = m.kind === 'tool_call' ? runs.get(i) : undefined;
    if (run) {
      // An editor's `command` is its operation (`str_replace`), not a shell line: its path says more.
      const command = stringArgument(run.args, ['command', 'cmd', 'script']);
      window.push(pathArgument(run.args) ?? (command ? firstLine(command).slice(0, 500) : ''));
    }
  }
  const score = new Map<string, number>();
  window.forEach((text, age) => {
    const weight = FOCUS_WINDOW - age;
    const names = new Set<string>();
    for (const match of text.matchAll(BACKTICKED)) {
      // A backticked plain word (`return`, `data`) is emphasis, not a name.
      const name = trimName(match[1] ?? '');
      if (!/^[a-z]+$/.test(name)) names.add(name);
    }
    for (const match of text.replace(BACKTICKED, ' ').matchAll(CODE_WORD)) names.add(trimName(match[0]));
    for (const name of names) {
      if (name.length <= 3 || COMMON.has(name) || !/[a-z]/i.test(name)) continue;
      score.set(name, (score.get(name) ?? 0) + weight);
    }
  });
  return [...score.entries()]
    .filter(([name]) => !except.includes(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, FOCUS_NAMES)
    .map(([name]) => name);
}

/** A name without a trailing call or punctuation: `open_source_file(path)` is `open_source_file`. */
function trimName(name: string): string {
  return name.replace(/\(.*$/, '').replace(/[.,:;]+$/, '');
}
