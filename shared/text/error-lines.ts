/** Whether a tool result failed, and its first meaningful error line. */
import { parseShell } from './shell.ts';
import { stripAnsi } from './text.ts';

const EXIT_CODE_PATTERNS = [
  /<returncode>\s*(-?\d+)\s*<\/returncode>/,
  /\bexit(?:ed with)? (?:code|status)[:\s]+(-?\d+)/i,
  /\breturned non-zero exit status (\d+)/,
];

/** The exit code a tool result states near its start or end, or null when it states none. */
export function exitCode(content: string): number | null {
  const edges = content.length <= 1_000 ? content : `${content.slice(0, 500)}\n${content.slice(-500)}`;
  for (const pattern of EXIT_CODE_PATTERNS) {
    const match = pattern.exec(edges);
    if (match?.[1] !== undefined) return Number(match[1]);
  }
  return null;
}

/**
 * `ValueError: bad`, `- E999 SyntaxError: x`, `django.core.exceptions.FieldError: y` (the last name
 * capitalized: see {@link isExceptionName}). Written to stay linear on long lines.
 */
const EXCEPTION_LINE = /(?<![\w.])([A-Za-z_][\w.]*(?:Error|Exception|Failure)):\s*\S/;
/** An exception line without a message, alone on its line. */
const BARE_EXCEPTION = /^([A-Za-z_][\w.]*(?:Error|Exception|Failure))$/;
const CODE_KEYWORDS_BEFORE =
  /\b(?:raise|except|catch|throw|throws|new|class|import|from|isinstance|def|return)\b/;
const STRONG_ERRORS = [
  /^(?:[\w./\\-]+:\d+(?::\d+)?:\s*)?(?:fatal\s+)?error(?:\[[\w-]+\])?(?::|\s+[A-Z]+\d+:)/i,
  /\berror TS\d+:/,
  /^(?:FAILED|FAIL)\b|\bFAILED\b|^--- FAIL:/,
  /\b[1-9]\d* (?:failed|failing|errors?)\b/i,
  /^fatal:|^panic:|Segmentation fault|core dumped|command not found/,
  /No such file or directory|Permission denied/,
  /npm ERR!|Cannot find module|undefined reference to|CMake Error|Traceback \(most recent call last\)/,
  // make's `make: *** [target] Error 2`, ninja's `ninja: build stopped`.
  /\*\*\* .*\bError \d+|^ninja: build stopped/,
];
/** Characters of a tool-output line looked at for errors. */
const MAX_ERROR_LINE = 1_000;
const LABEL_ERRORS = /^(?:\[error\]|<tool_use_error>|error\b|failed\b|failure\b)/i;

/**
 * The first meaningful error line of a tool result, or null when it succeeded. A stated exit code 0
 * means success; otherwise a Python traceback's exception line, then the first strong error line
 * (`error:`, `FAILED`, `3 failed`, `fatal:`, `command not found`, ...), then a non-zero exit code
 * (except the "no match" 1 of grep, diff, test). Results of read-only calls are files' contents: only
 * their first line (the tool's own message) counts, unless an exit code says they failed.
 */
export function detectError(content: string, inspect: boolean, command: string | null): string | null {
  const code = exitCode(content);
  // `x | head` exits with head's status: a 0 says nothing of x, whose errors are in the output.
  if (code === 0 && (inspect || !pipedIntoFilter(command))) return null;
  const lines = stripAnsi(content)
    .split('\n')
    // Error lines are short; clipping bounds the work of the patterns on megabyte-long lines.
    .map((l) => l.slice(0, MAX_ERROR_LINE).trim())
    .filter((l) => l.length > 0 && !/^<\/?(?:returncode|output)>/.test(l));
  if (inspect && code === null) return toolMessageError(lines);
  const found = tracebackException(lines) ?? firstStrongError(lines) ?? missingModule(lines);
  if (found !== null) return found;
  if (code === 0) return null;
  if (code !== null) return isBenignExit(command, code) ? null : `exit code ${code}`;
  const label = lines.findIndex((l) => LABEL_ERRORS.test(l));
  return label >= 0 ? withDetail(lines, label) : null;
}

/** The error a read-only tool reports instead of content (`[error] ...`, `File x not found`), or null. */
function toolMessageError(lines: string[]): string | null {
  const first = lines[0];
  if (first === undefined) return null;
  const failed =
    LABEL_ERRORS.test(first) || /No such file|not found|does not exist|Permission denied/i.test(first);
  return failed ? withDetail(lines, 0) : null;
}

/** The exception line of the last Python traceback: its first unindented line after the frames. */
function tracebackException(lines: string[]): string | null {
  let start = -1;
  lines.forEach((l, i) => {
    if (l.startsWith('Traceback (most recent call last)')) start = i;
  });
  if (start < 0) return null;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('File ') || CODE_KEYWORDS_BEFORE.test(line)) continue;
    if (isExceptionName(EXCEPTION_LINE.exec(line)?.[1]) || isExceptionName(BARE_EXCEPTION.exec(line)?.[1])) {
      return line;
    }
  }
  return null;
}

/**
 * Whether one line of tool output (trimmed) reads as an error: an exception with its message
 * (`ValueError: bad`, not `raise ValueError(...)` in code) or a strong error line (`error:`,
 * `FAILED`, `3 failed`, `fatal:`, `command not found`, a traceback's head, ...). Looks at the first
 * 1,000 characters.
 */
export function isErrorLine(line: string): boolean {
  const head = line.slice(0, MAX_ERROR_LINE);
  const exception = EXCEPTION_LINE.exec(head);
  if (isExceptionName(exception?.[1]) && !CODE_KEYWORDS_BEFORE.test(head.slice(0, exception?.index ?? 0))) {
    return true;
  }
  return STRONG_ERRORS.some((p) => p.test(head));
}

function firstStrongError(lines: string[]): string | null {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('Traceback (most recent call last)')) continue;
    if (isErrorLine(line)) return withDetail(lines, i);
  }
  return lines.some((l) => l.startsWith('Traceback (most recent call last)')) ? 'Python traceback' : null;
}

/** `KeyError`, `a.b.FieldError`: dotted names whose last one is capitalized (not `my_error`, `x.ioError`). */
function isExceptionName(name: string | undefined): boolean {
  const last = name?.slice(name.lastIndexOf('.') + 1);
  return last !== undefined && /^[A-Z]/.test(last) && name?.includes('..') === false;
}

/**
 * The error line without tags and bullets; a bare label (`ERROR:`) or a line announcing more
 * (`CMake Error at x:27 (find_package):`) gets its next line appended.
 */
function withDetail(lines: string[], index: number): string {
  const clean = (l: string) =>
    l
      .replace(/<\/?[\w-]+>/g, ' ')
      .replace(/^[-*•]\s+/, '')
      .trim();
  const line = clean(lines[index] ?? '');
  const rest = line.replace(/^(?:\[error\]|error|errors|failed|failure)\s*:?/i, '');
  if (/[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(rest) && !line.endsWith(':')) return line;
  const next = lines.slice(index + 1).find((l) => clean(l).length > 0);
  return next === undefined ? line : `${line} ${clean(next)}`;
}

/** `python: No module named pytest`: an interpreter's one-line refusal, without a traceback. */
function missingModule(lines: string[]): string | null {
  return lines.find((l) => /^(?:\S+: )?No module named \S+$/.test(l)) ?? null;
}

/** Filters whose exit status replaces the one of the command piped into them. */
const FILTERS =
  /^(?:head|tail|grep|egrep|fgrep|rg|less|more|sort|uniq|cut|tr|wc|tee|cat|awk|sed|jq|column|nl|fold)$/;

/** Whether a shell command's last step is a filter reading a pipe (`pytest 2>&1 | tail -20`). */
function pipedIntoFilter(command: string | null): boolean {
  if (command === null || !/\|(?!\|)/.test(command)) return false;
  const { steps, unquoted } = parseShell(command);
  const last = steps[steps.length - 1]?.[0];
  return last !== undefined && FILTERS.test(last) && /[^|]\|[^|]/.test(unquoted);
}

/** Exit 1 of grep-like commands means "no match" or "differs", not failure. */
function isBenignExit(command: string | null, code: number): boolean {
  if (command === null || code !== 1) return false;
  const steps = parseShell(command).steps;
  const last = steps[steps.length - 1]?.[0];
  return last !== undefined && /^(?:grep|egrep|fgrep|rg|ag|ack|diff|cmp|test|\[|\[\[|false)$/.test(last);
}

/**
 * A call the user rejected or interrupted, from its result: Claude Code's "User rejected update to
 * x", "The user doesn't want to proceed with this tool use", "[Request interrupted by user]", and
 * the like of other agents ("Permission to use Bash has been denied", "Operation cancelled").
 */
const REJECTED =
  /\buser (?:rejected|denied|declined|refused|chose not to|chose to stay)\b|\brejected by (?:the )?user\b|\bthe user doesn't want to (?:proceed|take this action)|\bpermission to use \S+ (?:has been |was )?denied|\btool (?:use|call) was (?:rejected|denied|cancell?ed)\b/i;
const INTERRUPTED =
  /^\s*\[?(?:request )?(?:interrupted|cancell?ed|aborted)\b|\binterrupted by (?:the )?user\b/i;

/**
 * Failure words of an output no stronger rule recognised (`make ... Error 2` without the `***`, a
 * `cannot`, a `usage:` line). Looked for only in the first and last lines of a result, where tools
 * report; too weak to make a blocker, enough to keep a call out of completed work.
 */
const WEAK_FAILURE =
  /\bError \d+\b|(?<!\b0 )\bfailed\b|\bfailure\b|\bcannot\b|\bcan't\b|\bcould not\b|\bcouldn't\b|\bunable to\b|\bnot found\b|\bno such\b|\binvalid\b|\bdenied\b|\brefused\b|\btimed out\b|\baborted\b|\bnot permitted\b|\bunrecognized\b|\bunknown (?:option|command|argument)\b|^usage:|\bsyntax error\b|\berrno\b|^error\b|\berror:|\bno replacement was performed\b|\bdid not appear verbatim\b/im;

const TRACEBACK = /^Traceback \(most recent call last\):?$/m;

/** How a call ended. */
export type Outcome = 'ok' | 'failed' | 'rejected' | 'interrupted';

/**
 * How a call ended, from its result: rejected or interrupted by the user, failed ({@link detectError},
 * or failure words at the edges of the output of a call that changes things), else ok.
 */
export function callOutcome(content: string, inspect: boolean, command: string | null): Outcome {
  const head = content.slice(0, 600);
  if (REJECTED.test(head)) return 'rejected';
  if (INTERRUPTED.test(head)) return 'interrupted';
  if (detectError(content, inspect, command) !== null) return 'failed';
  // A traceback under an exit code 0 (`… 2>&1 | tail`, a script that catches and prints): too weak
  // for a blocker, enough to keep the call out of completed work.
  if (!inspect && TRACEBACK.test(content)) return 'failed';
  if (inspect || exitCode(content) === 0) return 'ok';
  const lines = stripAnsi(content)
    .split('\n')
    .map((l) => l.slice(0, 300).trim())
    // Numbered listings (`12\tcode`, `12: code`) are file contents an edit tool echoes, not its report.
    .filter((l) => l.length > 0 && !/^\d+(?:\t|:\s|\s{2})/.test(l));
  const edges = [...lines.slice(0, 2), ...lines.slice(-2)].join('\n');
  return WEAK_FAILURE.test(edges) ? 'failed' : 'ok';
}
