/**
 * Command threads: the runs of the same command, and the runs of the same test, followed across the
 * session, so that the state at the cut is each thread's LAST run, not its first failure.
 *
 * - A command thread groups the shell calls whose command has the same {@link threadKey}: program,
 *   subcommand and target, with `cd dir &&` steps, environment assignments, setup steps (`source
 *   venv/bin/activate &&`, `export X=1;`), option flags, output filters and redirections removed.
 * - A test thread groups the reports of one test id across any run's output: pytest's
 *   `path::name PASSED|FAILED|ERROR`, unittest's `name (module.Class) ... ok|FAIL|ERROR`, Go's
 *   `--- PASS|FAIL: Name`, Rust's `test path::name ... ok|FAILED`, jest/vitest's `✓|✕ name` and
 *   `PASS|FAIL file`.
 *
 * A thread is open when its last run failed; a failing test is also closed by a later passing run of
 * a test command that covers it (no target, or a target its id starts with).
 */
import type { Outcome } from '../text/error-lines.ts';
import { commandKey, isInspectionCommand, shellSummary, writtenFile } from '../text/shell.ts';
import { clipWords, collapse, stripAnsi } from '../text/text.ts';
import { unversioned, writtenNames } from './blockers.ts';
import { describeCall } from './describe-call.ts';
import { stringArgument, type ToolRun } from './tool-runs.ts';

/** What a command does for the project, or null for everything else (reads, file edits, git, installs). */
export type CommandKind = 'test' | 'build' | 'run';

/** One run of a thread: where, how it ended, its exit code when stated, its first error line. */
export interface ThreadRun {
  seq: number;
  outcome: Outcome;
  exit: number | null;
  error: string | null;
}

/** The runs of one command (or one test id), oldest first. */
export interface Thread {
  key: string;
  /** The command as last written (first line, clipped), or the test id. */
  shown: string;
  kind: CommandKind | 'test-id';
  runs: ThreadRun[];
}

/** Programs that test, by their first word, or any program's `test` subcommand (`go test`, `npm test`). */
const TEST =
  /^(?:(?:npx|bunx|pnpm exec|yarn|uv run|poetry run|pipenv run|hatch run)\s+)?(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|tap|phpunit|rspec|ctest|bats|unittest|nose2?|trial)\b|^(?:go|cargo|npm|pnpm|yarn|bun|deno|dotnet|mix|swift|zig|stack|cabal|lein|sbt|gradle|mvn|\.\/gradlew|\.\/mvnw|make|ninja|bazel|just|rake|bundle exec rspec)\s+(?:run\s+)?(?:test|tests|check|spec|unittest|verify)\b|^[\w.-]+ (?:test|tests)\b|\btest(?:s)?(?:\.\w+)?$|\brun_?tests?\b|\bruntests?\b/;
/** Programs that build or type-check, and any program's `build` or `compile` subcommand. */
const BUILD =
  /^(?:make|cmake|ninja|tsc|gcc|g\+\+|clang\+?\+?|cc|javac|rustc|go build|go vet|cargo (?:build|check|clippy)|mvn|gradle|\.\/gradlew|bazel|meson|scons|webpack|vite build|esbuild|rollup|(?:npm|pnpm|yarn|bun) (?:run )?(?:build|lint|typecheck|check|compile)|dotnet build|swift build|zig build|mypy|ruff|flake8|pylint|eslint|biome|black --check|[\w.-]+ (?:build|compile))\b/;
/** Running a program of the project: a script file or a project runner. */
const RUN =
  /^(?:python|node|ruby|perl|php|bash|sh|zsh|deno run|bun run|ts-node|tsx|java|go run|cargo run|dotnet run|(?:npm|pnpm|yarn) (?:run )?(?:start|dev|serve)|\.\/[\w./-]+|[\w./-]+\.(?:py|js|mjs|ts|sh|rb|pl))\b/;

/**
 * A package runner and its own options (`npx -y`, `npx --yes -p pkg`, `bunx`, `pnpm dlx`, `pnpm
 * exec`, `yarn dlx`, `npm exec --`): it fetches or finds a tool and runs it, so the command is what
 * the tool does — `npx tsc` builds, `npx jest` tests, `npx prisma migrate dev` is neither.
 */
const PACKAGE_RUNNER =
  /^(?:npx|bunx|pnpx|(?:pnpm|yarn) (?:dlx|exec)|npm exec)(?:\s+(?:--?[\w-]+(?:=\S+)?|-p\s+\S+|--package\s+\S+))*\s+(?:--\s+)?/;

/** Steps that only prepare the shell: they are not what a command runs. */
const SETUP_STEP = /^(?:cd|source|\.|export|set|unset|ulimit|umask|pushd|popd|conda activate|nvm use)\b/;

/**
 * The thread key of a shell command: the first step that is not a setup step ({@link SETUP_STEP}),
 * in {@link commandKey}'s normal form, cut to the program, its subcommand and at most two targets.
 * An inline program (`python -c '…'`, a heredoc) keeps its first words: two different inline
 * programs are different threads. Empty for a blank command.
 */
export function threadKey(command: string): string {
  const steps = commandKey(command)
    .split(/\s*(?:&&|\|\||;)\s*/)
    .map((s) => s.trim())
    .filter(Boolean);
  const main = steps.find((s) => !SETUP_STEP.test(s)) ?? steps[0] ?? '';
  return main.split(' ').slice(0, 4).join(' ');
}

/**
 * What a shell command does for the project: `test` (a test runner, `npm test`, `go test`, a
 * `run_tests` script), `build` (a compiler, a type-checker or linter, `make`, `npm run build`), `run`
 * (a script of the project, `python x.py`, `./x`), or null: reads, edits of files (`sed -i`, `cat >
 * f`), git, installs, file moves. The first step that is not a setup step decides; behind a package
 * runner ({@link PACKAGE_RUNNER}: `npx`, `bunx`, `pnpm dlx`…), the tool it runs does.
 */
export function commandKind(command: string): CommandKind | null {
  if (isInspectionCommand(command) || writtenFile(shellSummary(command))) return null;
  const key = threadKey(command);
  if (
    !key ||
    /^(?:git|pip|pip3|uv pip|conda install|apt|apt-get|brew|npm (?:install|i|ci)\b|yarn add|pnpm add|rm|mv|cp|mkdir|touch|chmod|sed|perl -pi|curl|wget|kill|pkill)\b/.test(
      key,
    )
  )
    return null;
  const tool = key.replace(PACKAGE_RUNNER, '');
  if (TEST.test(key) || TEST.test(tool)) return 'test';
  if (BUILD.test(tool)) return 'build';
  if (RUN.test(tool)) return /\btest/.test(tool) ? 'test' : 'run';
  return null;
}

/** Longest command shown, in characters. */
const SHOWN_CHARS = 150;

/**
 * The command threads of `runs` (shell calls of a build, test or run kind, {@link commandKind}) in
 * the order of their first run. A script the agent wrote again under a versioned name (`check2.py`
 * after `check.py`, blockers.ts's `unversioned`) is a retry of the same command. `errorOf` gives a failed result's first error line; `written`, the
 * base names of the files the agent wrote (blockers.ts's `writtenNames`).
 */
export function commandThreads(
  runs: Map<number, ToolRun>,
  ended: Map<number, Outcome>,
  errorOf: (run: ToolRun) => string | null,
  written: ReadonlySet<string> = writtenNames(runs),
): Thread[] {
  const threads = new Map<string, Thread>();
  for (const [index, run] of [...runs].sort((a, b) => a[0] - b[0])) {
    const outcome = ended.get(index);
    if (!run.result || (outcome !== 'ok' && outcome !== 'failed')) continue;
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (!command || !/^ran: /.test(describeCall(run).text)) continue;
    const kind = commandKind(command);
    if (kind === null) continue;
    const key = unversioned(threadKey(command), written);
    const thread = threads.get(key) ?? { key, shown: '', kind, runs: [] };
    thread.shown = clipWords(shellSummary(command), SHOWN_CHARS);
    thread.runs.push({
      seq: run.result.seq,
      outcome,
      exit: exitOf(run.result.content),
      error: outcome === 'failed' ? errorOf(run) : null,
    });
    threads.set(key, thread);
  }
  return [...threads.values()];
}

function exitOf(content: string): number | null {
  const match =
    /<returncode>\s*(-?\d+)\s*<\/returncode>|\bexit(?:ed with)? (?:code|status)[:\s]+(-?\d+)/i.exec(
      content.length <= 1_000 ? content : `${content.slice(0, 500)}\n${content.slice(-500)}`,
    );
  const code = match?.[1] ?? match?.[2];
  return code === undefined ? null : Number(code);
}

/** A test id's report in one line of output: the id and whether it passed. */
export interface TestReport {
  id: string;
  passed: boolean;
}

const TEST_LINES: Array<[RegExp, (m: RegExpExecArray) => TestReport | null]> = [
  // pytest -v: `tests/a.py::test_x PASSED [ 50%]`; summary: `FAILED tests/a.py::test_x - msg`.
  [
    /^([\w./-]+\.py::[\w:[\]./-]+)\s+(PASSED|FAILED|ERROR|XPASS)\b/,
    (m) => rep(m[1], m[2] === 'PASSED' || m[2] === 'XPASS'),
  ],
  [/^(FAILED|ERROR|PASSED)\s+([\w./-]+\.py::[\w:[\]./-]+)/, (m) => rep(m[2], m[1] === 'PASSED')],
  // unittest -v: `test_x (pkg.mod.Class) ... ok`; also `test_x (pkg.mod.Class.test_x) ... FAIL`.
  [
    /^(\w+) \(([\w.]+)\)(?: \.\.\.|\s.*\.\.\.)\s+(ok|FAIL|ERROR)\b/,
    (m) => rep(`${m[2]}.${m[1]}`, m[3] === 'ok'),
  ],
  [/^(FAIL|ERROR): (\w+) \(([\w.]+)\)/, (m) => rep(`${m[3]}.${m[2]}`, false)],
  // Go: `--- FAIL: TestX (0.00s)`.
  [/^--- (PASS|FAIL): ([\w/.-]+)/, (m) => rep(m[2], m[1] === 'PASS')],
  // Rust: `test a::b ... ok`, `test a::b ... FAILED`.
  [/^test ([\w:]+) \.\.\. (ok|FAILED)\b/, (m) => rep(m[1], m[2] === 'ok')],
  // jest / vitest: `PASS src/a.test.ts`, `FAIL src/a.test.ts`, `✓ name`, `✕ name`, `× name`.
  [/^(PASS|FAIL)\s+([\w./@-]+\.\w+)\b/, (m) => rep(m[2], m[1] === 'PASS')],
  [
    /^(✓|✔|√|✕|✗|×)\s+(.{3,120}?)(?:\s+\(\d+\s*m?s\)|\s+\d+ms)?$/u,
    (m) => rep(m[2], /[✓✔√]/u.test(m[1] ?? '')),
  ],
];

function rep(id: string | undefined, passed: boolean): TestReport | null {
  const clean = collapse(id ?? '');
  return clean.length >= 3 ? { id: clean, passed } : null;
}

/** The JavaScript test runners whose reports are `✓ name` / `✕ name` lines. */
const MARK_RUNNER =
  /^(?:(?:npx|bunx|pnpm exec|pnpm|yarn|npm|bun)\s+(?:run\s+)?)?(?:jest|vitest|mocha|ava|tap|test|node --test|deno test)\b/;

/** Most lines of one output read for test reports. */
const MAX_LINES = 5_000;

/**
 * The tests a run's output reports, each id once (its last report in the output). `marks`: whether
 * a `✓ name` / `✕ name` line is a report (the output of a JavaScript test runner); in a script's
 * own output such marks are its prints, not tests.
 */
export function testReports(output: string, marks = true): TestReport[] {
  const found = new Map<string, TestReport>();
  const patterns = marks ? TEST_LINES : TEST_LINES.slice(0, -1);
  for (const raw of stripAnsi(output).split('\n').slice(0, MAX_LINES)) {
    const line = raw.slice(0, 400).trim();
    if (line.length < 5) continue;
    for (const [pattern, read] of patterns) {
      const match = pattern.exec(line);
      const report = match ? read(match) : null;
      if (report) {
        found.set(report.id, report);
        break;
      }
    }
  }
  return [...found.values()];
}

/**
 * The test threads of the test commands of `runs` ({@link commandKind}): every test id reported in
 * their outputs, with one run per call that reports it. A passing run of a test command that covers the id (no target, or a
 * target the id starts with, {@link covers}) and reports nothing of it counts as a pass too: a
 * whole suite run green passes each of its tests.
 */
export function testThreads(runs: Map<number, ToolRun>, ended: Map<number, Outcome>): Thread[] {
  const threads = new Map<string, Thread>();
  for (const [index, run] of [...runs].sort((a, b) => a[0] - b[0])) {
    const outcome = ended.get(index);
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (!run.result || !command || (outcome !== 'ok' && outcome !== 'failed')) continue;
    // Only a test command's output reports tests: a script printing `✗ step 3` reports nothing.
    if (commandKind(command) !== 'test') continue;
    const reports = testReports(run.result.content, MARK_RUNNER.test(threadKey(command)));
    const seq = run.result.seq;
    for (const r of reports) {
      const thread = threads.get(r.id) ?? { key: r.id, shown: r.id, kind: 'test-id' as const, runs: [] };
      thread.runs.push({
        seq,
        outcome: r.passed ? 'ok' : 'failed',
        exit: null,
        error: r.passed ? null : failureLine(run.result.content, r.id),
      });
      threads.set(r.id, thread);
    }
    if (outcome !== 'ok') continue;
    const reported = new Set(reports.map((r) => r.id));
    const key = threadKey(command);
    for (const thread of threads.values()) {
      if (reported.has(thread.key) || !covers(key, thread.key)) continue;
      thread.runs.push({ seq, outcome: 'ok', exit: null, error: null });
    }
  }
  return [...threads.values()];
}

/**
 * Whether a test command (a {@link threadKey}) covers a test id: none of its words after the
 * program and subcommand names a file, a test id or a filter, or one of them is a prefix of the id,
 * or the id names it (`tests/a.py` covers `tests/a.py::test_x`; `pytest` covers everything).
 */
export function covers(key: string, id: string): boolean {
  const targets = key
    .split(' ')
    .slice(1)
    .filter((w) => /[/.:]/.test(w) || /^test/i.test(w));
  if (targets.length === 0) return true;
  const lower = id.toLowerCase();
  return targets.some((t) => lower.startsWith(t) || lower.includes(t));
}

/** The line of an output that says why a test failed: the first error line after the id's report, else the report. */
function failureLine(output: string, id: string): string {
  const lines = stripAnsi(output)
    .split('\n')
    .map((l) => l.trim());
  const at = lines.findIndex((l) => l.includes(id) && /FAIL|ERROR|✕|✗|×/u.test(l));
  const reason = lines
    .slice(Math.max(at, 0))
    .find((l) => /^E\s+\S|(?:Error|Exception|assert\w*)\b.*:|panicked at|expected|Expected/.test(l));
  return clipWords(collapse(reason ?? lines[at] ?? `${id} failed`), 220);
}

/** A thread's last run, and whether it failed. */
export function lastRun(thread: Thread): ThreadRun | undefined {
  return thread.runs[thread.runs.length - 1];
}

/** Whether a thread's last run failed: an error still open at the cut. */
export function isOpen(thread: Thread): boolean {
  return lastRun(thread)?.outcome === 'failed';
}
