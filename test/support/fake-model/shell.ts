/**
 * How the fake model reads a shell command line: its simple commands (split on `&&`, `||`, `;`,
 * `|`, `&` and newlines, quotes respected, here-document bodies skipped), each with its words and
 * redirections; what a step runs once `cd`, `sudo`, `VAR=x` and the like are taken off; and the
 * command's family (what a later run must match to count as the same command). A small reader of
 * the common cases, not a shell. Pure.
 */

/** One simple command of a command line. */
export interface ShellStep {
  /** Its words, quotes removed, redirections left out. */
  words: string[];
  /** Its redirections: `>` / `>>` / `<` and their target. */
  redirects: Array<{ op: '>' | '>>' | '<'; target: string }>;
  /** Whether its output goes into a pipe. */
  piped: boolean;
}

/** The simple commands of `command`, in order. */
export function shellSteps(command: string): ShellStep[] {
  const steps: ShellStep[] = [];
  let step: ShellStep = newStep();
  let word = '';
  let inWord = false;
  let pendingRedirect: '>' | '>>' | '<' | null = null;
  let heredocDelimiter: string | null = null;
  let readingDelimiter = false;
  const endWord = () => {
    if (!inWord) return;
    if (readingDelimiter) {
      heredocDelimiter = word.replace(/^-/, '');
      readingDelimiter = false;
    } else if (pendingRedirect) {
      step.redirects.push({ op: pendingRedirect, target: word });
      pendingRedirect = null;
    } else step.words.push(word);
    word = '';
    inWord = false;
  };
  const endStep = (piped: boolean) => {
    endWord();
    step.piped = piped;
    if (step.words.length > 0 || step.redirects.length > 0) steps.push(step);
    step = newStep();
  };
  let i = 0;
  while (i < command.length) {
    const c = command[i] as string;
    if (c === "'" || c === '"') {
      const close = command.indexOf(c, i + 1);
      const end = close < 0 ? command.length : close;
      word += command.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '\\' && i + 1 < command.length) {
      word += command[i + 1];
      inWord = true;
      i += 2;
      continue;
    }
    if (c === '\n') {
      endStep(false);
      if (heredocDelimiter !== null) {
        // A here-document's body is data, not commands: skip to the line holding the delimiter alone.
        const lines = command.slice(i + 1).split('\n');
        const close = lines.findIndex((l) => l.trim() === heredocDelimiter);
        const body = close < 0 ? lines : lines.slice(0, close);
        i += 1 + body.join('\n').length + (close < 0 ? 0 : 1 + (lines[close]?.length ?? 0));
        heredocDelimiter = null;
        continue;
      }
      i += 1;
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      i += 1;
      continue;
    }
    const two = command.slice(i, i + 2);
    if (two === '&&' || two === '||') {
      endStep(false);
      i += 2;
      continue;
    }
    if (c === ';') {
      endStep(false);
      i += 1;
      continue;
    }
    if (c === '|') {
      endStep(true);
      i += 1;
      continue;
    }
    if (two === '<<') {
      endWord();
      readingDelimiter = true;
      i += command[i + 2] === '<' ? 3 : 2;
      if (command[i] === '-') i += 1;
      continue;
    }
    if (c === '>' || c === '<') {
      // `2>&1`, `>&2`: a file descriptor, not a file. A digit just before is the descriptor.
      if (inWord && /^\d$/.test(word)) {
        word = '';
        inWord = false;
      } else endWord();
      const append = c === '>' && command[i + 1] === '>';
      i += append ? 2 : 1;
      if (command[i] === '&') {
        i += 1;
        while (i < command.length && /[\d-]/.test(command[i] as string)) i += 1;
        continue;
      }
      pendingRedirect = c === '<' ? '<' : append ? '>>' : '>';
      continue;
    }
    if (c === '&') {
      endStep(false);
      i += 1;
      continue;
    }
    word += c;
    inWord = true;
    i += 1;
  }
  endStep(false);
  return steps;
}

function newStep(): ShellStep {
  return { words: [], redirects: [], piped: false };
}

/** Wrappers that run the rest of the step: `sudo x`, `time x`, `timeout 60 x`, `env A=1 x`. */
const WRAPPERS = new Set(['sudo', 'time', 'nohup', 'exec', 'env', 'command', 'nice', 'xargs']);

/** The words of a step from the program it runs: assignments and wrappers taken off. */
export function programWords(step: ShellStep): string[] {
  const words = [...step.words];
  for (;;) {
    const first = words[0];
    if (first === undefined) return words;
    if (/^[A-Za-z_]\w*=/.test(first) || WRAPPERS.has(first)) words.shift();
    else if (first === 'timeout') words.splice(0, /^\d/.test(words[1] ?? '') ? 2 : 1);
    else return words;
  }
}

/** The program's name: its base name, `python3.11` as `python`. */
export function programName(word: string): string {
  const base = word.slice(word.lastIndexOf('/') + 1);
  return /^python\d*(?:\.\d+)?$/.test(base) ? 'python' : base;
}

/** Steps that set the scene or report, not the work: `cd`, `export`, `echo "done"`, `sleep 1`. */
const SCENERY = /^(?:cd|source|\.|export|set|pushd|popd|conda|activate|echo|printf|true|sleep|clear|mkdir)$/;
/** Filters an output is piped into (`| tail -20`): the work is the step before them. */
const FILTERS =
  /^(?:head|tail|grep|egrep|fgrep|rg|less|more|sort|uniq|cut|tr|wc|tee|cat|awk|sed|jq|column|nl|xargs)$/;

/**
 * The step that does the command's work: the last one that is neither scenery (`cd`, `echo`, ...)
 * nor a filter fed by a pipe (`pytest 2>&1 | tail -20` is `pytest`); a command line's exit status
 * and its errors are mostly that step's. `cat > f <<EOF` alone is its own work.
 */
export function mainStep(steps: ShellStep[]): ShellStep | undefined {
  const work = steps.filter((s, i) => {
    const program = programWords(s)[0] ?? 'cd';
    if (SCENERY.test(program) && !s.redirects.some((r) => r.op !== '<')) return false;
    return !(FILTERS.test(programName(program)) && steps[i - 1]?.piped === true);
  });
  return work.at(-1) ?? steps.at(-1);
}

/** The family of a whole command line: that of the step doing its work (see {@link mainStep}, {@link stepFamily}). */
export function commandFamily(command: string): { key: string; broad: string } | null {
  const step = mainStep(shellSteps(command));
  return step ? stepFamily(step) : null;
}

/** Programs whose first argument names what they do (`npm test`, `git commit`, `go build`). */
const SUBCOMMANDS = new Set(
  'npm yarn pnpm bun go cargo git docker make uv poetry pip pip3 dotnet mvn gradle kubectl helm terraform cmake ctest'.split(
    ' ',
  ),
);
/** Runners that hand over to the program they name (`npx jest`, `python -m pytest`, `uv run x`). */
const LAUNCHERS = new Set(['npx', 'pnpx', 'bunx']);

/**
 * The family of a step: what it runs and on what, e.g. `pytest tests/test_a.py`, `npm test`,
 * `python reproduce.py`, `python -c`; and its broad family (`pytest`, `npm test`, `python`): a later
 * success of the same family, or of the broad family of a failure, is a run of the same thing.
 */
export function stepFamily(step: ShellStep): { key: string; broad: string } {
  let words = programWords(step);
  let program = programName(words[0] ?? '');
  // `cat > a.py <<EOF`, `echo x > out.txt`: writing that file.
  const into = step.redirects.find((r) => r.op !== '<')?.target;
  if (into && /^(?:cat|echo|printf|tee)$/.test(program))
    return { key: `write ${into}`, broad: `write ${into}` };
  const launched = LAUNCHERS.has(program)
    ? 1
    : /^(?:uv|poetry|pipenv|pdm|hatch)$/.test(program) && words[1] === 'run'
      ? 2
      : 0;
  if (launched > 0) {
    words = words.slice(launched);
    while (words[0]?.startsWith('-')) words.shift();
    program = programName(words[0] ?? '');
  }
  if (program === 'python' && words[1] === '-m' && words[2]) {
    words = words.slice(2);
    program = words[0] ?? program;
  }
  const rest = words.slice(1);
  if (SUBCOMMANDS.has(program)) {
    const sub = rest.find((w) => !w.startsWith('-')) ?? '';
    const after = rest.slice(rest.indexOf(sub) + 1).find((w) => !w.startsWith('-'));
    const broad = `${program} ${sub}`.trim();
    return { key: after ? `${broad} ${after}` : broad, broad };
  }
  // `python -c "<code>"`: each inline program is its own thing; only the same code runs it again.
  const inline = rest.findIndex((w) => w === '-c' || w === '-e');
  if (inline >= 0) {
    const key = `${program} ${rest[inline]} ${(rest[inline + 1] ?? '').replace(/\s+/g, ' ').trim().slice(0, 80)}`;
    return { key, broad: key };
  }
  const target = rest.find((w) => !w.startsWith('-'))?.replace(/::.*$/, '');
  return { key: target ? `${program} ${target}` : program, broad: program };
}

/** Whether a word looks like a file: a path with a `/` or a name with an extension (`a.py`, `./x`). */
export function looksLikeFile(word: string): boolean {
  if (word === '' || word.startsWith('-') || /[*?$`{}=<>]/.test(word) || /^[a-z]+:\/\//i.test(word))
    return false;
  if (word === '.' || word === '..' || word === '/' || word.endsWith('/')) return false;
  const base = word.slice(word.lastIndexOf('/') + 1);
  return (
    /\.[A-Za-z0-9]{1,10}$/.test(base) ||
    /^(?:Makefile|Dockerfile|Rakefile|Gemfile|Justfile)$/.test(base) ||
    word.startsWith('./')
  );
}
