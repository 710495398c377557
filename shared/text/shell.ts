/**
 * Reading shell commands: a short summary, whether they only read, the file they write. A small
 * tokenizer, not a shell parser.
 */
import { collapse } from './text.ts';

/** A shell command without its leading `cd dir &&` / `cd dir;` steps (`cd /repo && x` runs x). */
export function withoutCdSteps(command: string): string {
  let text = command.trim();
  for (;;) {
    const next = text.replace(/^cd\s+("[^"]*"|'[^']*'|\S+)\s*(?:&&|;)\s*/, '');
    if (next === text) return text;
    text = next;
  }
}

/** A shell command without its leading `cd dir &&` steps, first line only, whitespace collapsed. */
export function shellSummary(command: string): string {
  const newline = command.trim().indexOf('\n');
  const text = withoutCdSteps(
    (newline < 0 ? command.trim() : command.trim().slice(0, newline)).slice(0, 2_000),
  );
  return collapse(text) + (newline >= 0 ? ' …' : '');
}

const INSPECT_COMMANDS = new Set(
  (
    'ls ll cat head tail less more grep egrep fgrep rg ag ack find fd tree pwd echo printf wc nl file ' +
    'stat which whereis type du df sort uniq cut awk sed diff cmp env printenv date whoami id uname ' +
    'history true cd xxd hexdump od strings jq column basename dirname realpath readlink ' +
    // SWE-agent's file viewer and search commands.
    'open goto scroll_down scroll_up search_file search_dir find_file view'
  ).split(' '),
);
/** `git` subcommands that only read (`git status`, `git log`, ...). */
export const GIT_READS = new Set(
  'status log diff show branch blame grep ls-files rev-parse remote describe'.split(' '),
);

/** Package managers' subcommands that only report (`pip list`, `npm ls`, `cargo tree`). */
const PACKAGE_READS = new Map<string, Set<string>>(
  Object.entries({
    pip: 'list show freeze check',
    pip3: 'list show freeze check',
    npm: 'ls list view info outdated',
    yarn: 'list info why',
    pnpm: 'ls list why',
    conda: 'list info',
    cargo: 'tree metadata',
    go: 'list version env',
    gem: 'list',
    apt: 'list show',
    dpkg: '-l -s -L',
  }).map(([tool, subs]) => [tool, new Set(subs.split(' '))]),
);

/** Whether a shell command only reads: every step a read command, no redirection into a file, no `sed -i`. */
export function isInspectionCommand(command: string): boolean {
  const { steps, unquoted } = parseShell(command);
  const withoutHarmless = unquoted.replace(/\d?>&\d|\d?>\s*\/dev\/null/g, ' ');
  if (/>|\btee\b|\bsed\s+(?:-\w*\s+)*-i/.test(withoutHarmless)) return false;
  return steps.every(([word, sub]) => {
    if (word === 'git') return sub !== undefined && GIT_READS.has(sub);
    if (sub !== undefined && PACKAGE_READS.get(word)?.has(sub)) return true;
    // `python --version`, `node -v`: a version is a report.
    if (sub !== undefined && /^(?:--version|-V|-v|version)$/.test(sub) && /^[\w.+-]+$/.test(word))
      return true;
    return INSPECT_COMMANDS.has(word);
  });
}

/** A file a shell command writes with `cat > f`, `echo ... > f`, `tee f` (heredoc scripts), or null. */
export function writtenFile(command: string): string | null {
  const first = parseShell(command.split('\n')[0] ?? '').unquoted;
  const match =
    /^\s*(?:cat|echo|printf)\b[^|;&]*?>{1,2}\s*([^\s<>|;&]+)/.exec(first) ??
    /\btee\s+(?:-a\s+)?([^\s<>|;&]+)/.exec(first);
  return match?.[1] ?? null;
}

/**
 * The steps of a shell command, split on `&&`, `||`, `;`, `|`, `&` and newlines outside quotes, as
 * their first two words (leading `VAR=x`, `sudo`, `time`, `nohup` skipped), and the command with the
 * quoted parts emptied (`grep "a|b" f` → `grep "" f`). A small tokenizer, not a shell parser.
 */
export function parseShell(command: string): {
  steps: Array<[string, string | undefined]>;
  unquoted: string;
} {
  const texts: string[] = [];
  let step = '';
  let unquoted = '';
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command.charAt(i);
    if (quote !== null) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) {
        quote = null;
        step += c;
        unquoted += c;
      }
      continue;
    }
    if (c === '\\') {
      step += command.slice(i, i + 2);
      unquoted += command.slice(i, i + 2);
      i++;
    } else if (c === '"' || c === "'") {
      quote = c;
      step += c;
      unquoted += c;
    } else if (isSeparator(command, i)) {
      texts.push(step);
      step = '';
      unquoted += c;
    } else {
      step += c;
      unquoted += c;
    }
  }
  texts.push(step);
  return {
    steps: texts.map(firstWords).filter((w): w is [string, string | undefined] => w !== null),
    unquoted,
  };
}

/** `;`, `|`, newline, and `&` unless part of a redirection (`2>&1`, `&>`). */
function isSeparator(command: string, i: number): boolean {
  const c = command.charAt(i);
  if (c === ';' || c === '|' || c === '\n') return true;
  if (c !== '&') return false;
  return !/[<>]/.test(command.charAt(i - 1)) && command.charAt(i + 1) !== '>';
}

function firstWords(step: string): [string, string | undefined] | null {
  const words = step
    .trim()
    .split(/\s+/)
    .filter((w) => w && !/^\w+=/.test(w) && w !== 'sudo' && w !== 'time' && w !== 'nohup');
  return words[0] === undefined ? null : [words[0], words[1]];
}

/**
 * A shell command in a normal form, so that a retry of the same command matches it: the first line
 * without `cd dir &&` steps, environment assignments, `timeout N`/`time`/`sudo`, redirections of
 * stderr or into /dev/null (a redirection into a file stays: `cat > a.py` is not `cat > b.py`), output
 * filters piped after it (`| tail -20`, `| grep x`), option flags and quotes; `python3.11` is
 * `python`, `python -m pytest` is `pytest`; lower case.
 */
export function commandKey(command: string): string {
  let text = shellSummary(command).replace(/ …$/, '');
  text = text
    .replace(/\s*\d?>&\d/g, ' ')
    .replace(/\s*(?:\d|&)?>{1,2}\s*\/dev\/null\b/g, ' ')
    .replace(/\s*2>{1,2}\s*\S+/g, ' ')
    .replace(
      /\s*\|\s*(?:head|tail|grep|egrep|less|more|tee|cat|sort|uniq|wc|cut|awk|sed|nl|column)\b[^|;&]*/g,
      ' ',
    );
  for (;;) {
    const next = text.replace(
      /^\s*(?:\w+=\S*|sudo|time|nohup|(?:timeout|gtimeout)(?:\s+-\S+)*\s+\d+[smhd]?)\s+/,
      '',
    );
    if (next === text) break;
    text = next;
  }
  text = text
    .replace(/\bpython3(?:\.\d+)?\b/g, 'python')
    .replace(/\bpython -m (\w+)/g, '$1')
    .replace(/["']/g, '');
  return text
    .split(/\s+/)
    .filter((w) => w.length > 0 && !/^-/.test(w))
    .join(' ')
    .toLowerCase();
}

/** A quoted literal without interpolation: `'a.py'`, `"a.py"`, Python's `r'a.py'` (not an f-string). */
const LITERAL = String.raw`[rRbB]?(['"])([^'"\n\\]+)\1`;
/**
 * Most characters between the comma after the path of a Python `open(` call and its `)` read for its
 * mode (` 'w', encoding='utf-8', newline=''` is 34): unbounded, a line of `open('a',` without a `)`
 * was read to its end from each of them.
 */
export const OPEN_REST_CHARS = 200;
/** Python `open('<path>', <rest>)`: the rest holds the mode. */
const PY_OPEN = new RegExp(String.raw`\bopen\(\s*${LITERAL}\s*(,[^)\n]{0,${OPEN_REST_CHARS}})?\)`, 'g');
/** A mode that writes: `w`, `a`, `x` or `+` (`'w'`, `'a+'`, `'wb'`, `'r+'`), positional or `mode=`. */
const WRITE_MODE = /^,\s*(['"])[rbtU]*[wax+]|,\s*mode\s*=\s*(['"])[rbtU]*[wax+]/;
/** `Path('<path>').write_text(` / `.write_bytes(` (also `pathlib.Path`). */
const PY_PATH_WRITE = new RegExp(String.raw`\bPath\(\s*${LITERAL}\s*\)\s*\.write_(?:text|bytes)\(`, 'g');
/** Node `fs.writeFileSync('<path>'`, `writeFile`, `appendFile`, their Sync forms, `createWriteStream`. */
const NODE_WRITE = /\b(?:writeFile|appendFile|createWriteStream)(?:Sync)?\(\s*(['"\x60])([^'"\x60\n$\\]+)\1/g;

/**
 * The literal paths a script's text writes, in order of first appearance, each once: Python
 * `open('<path>', 'w')` with a mode that writes (`w`, `a`, `x`, `+`, `wb`, ...; positional or
 * `mode=`), `Path('<path>').write_text(` and `.write_bytes(`; Node `fs.writeFileSync('<path>'`,
 * `writeFile`, `appendFile`, their `Sync` forms and `createWriteStream`. A path the script builds
 * at run time (a variable, an f-string, a template with `${}`, `os.path.join`) is not a literal and
 * is left out, as is a file it only opens to read (`open('a.py')`, `open('a.py', 'r')`). The script
 * itself is not run or parsed: a write inside a comment or a branch never taken still counts.
 * Used to tell which files an agent's script (`cat > fix.py <<EOF ... EOF; python fix.py`) rewrote.
 * Pure.
 */
export function scriptWrites(script: string): string[] {
  const found: Array<{ at: number; path: string }> = [];
  for (const m of script.matchAll(PY_OPEN))
    if (WRITE_MODE.test(m[3] ?? '')) found.push({ at: m.index, path: m[2] ?? '' });
  for (const m of script.matchAll(PY_PATH_WRITE)) found.push({ at: m.index, path: m[2] ?? '' });
  for (const m of script.matchAll(NODE_WRITE)) found.push({ at: m.index, path: m[2] ?? '' });
  const paths = found
    .sort((a, b) => a.at - b.at)
    .map((f) => f.path.trim())
    .filter((p) => p !== '');
  return [...new Set(paths)];
}

/**
 * The here-documents of a command line, in order: the line that opens each (`cat > fix.py << 'EOF'`,
 * `python3 - <<EOF`) and its body, up to the line holding the delimiter alone (or the end). A
 * here-string (`<<<`) is not one. Pure.
 */
export function heredocs(command: string): Array<{ head: string; body: string }> {
  const found: Array<{ head: string; body: string }> = [];
  const lines = command.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = lines[i] ?? '';
    const delimiter = /(?<!<)<<(?!<)-?\s*(['"]?)([\w.-]+)\1/.exec(head)?.[2];
    if (delimiter === undefined) continue;
    // The first line after the head that closes it (searched from the head: one pass in all).
    let end = i + 1;
    while (end < lines.length && (lines[end] ?? '').trim() !== delimiter) end++;
    found.push({ head, body: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return found;
}
