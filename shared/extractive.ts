/**
 * The `extractive` summarizer (DESIGN.md "Summarizers"): offline, deterministic, no LLM. It builds the
 * same checkpoint shape as `anthropic` from the previous checkpoint and the leaving messages, with
 * plain heuristics that hold for any agent (SWE-agent, mini-swe-agent, OpenHands, Claude Code, ...):
 *
 * - goal: the previous goal, else the first user message, clipped to {@link GOAL_CHARS};
 * - lastUserRequest: the last user message, verbatim;
 * - workingSet: {@link extractWorkingSet}, every path;
 * - blockers: the first meaningful error line of each failed tool result, dropped once the same call
 *   later succeeds;
 * - decisions: assistant sentences that state a decision or a cause ("the fix is", "instead of");
 * - completed: short descriptions of tool calls that succeeded (`edited src/a.py`, `ran: pytest`);
 * - inProgress / pending: calls still waiting for a result, the agent's todo list, and the intents the
 *   agent stated after its last tool result;
 * - openQuestions: questions nobody answered afterwards.
 *
 * Lists merge with the previous checkpoint (newest kept), and the oldest items go first when the
 * rendered checkpoint would exceed `maxSummaryTokens`. Pure: no I/O, no clock, no randomness.
 */
import { type Checkpoint, checkpointSchema, emptyCheckpoint, renderCheckpoint } from './checkpoint.ts';
import { clipRequest, lastUserRequestOf } from './last-request.ts';
import type { Message } from './message.ts';
import { noUsage, type SummarizeInput, type Summarizer, type SummaryResult } from './summarizer.ts';
import { estimateTextTokens } from './tokens.ts';
import { extractPaths, extractWorkingSet } from './working-set.ts';

/** Longest goal taken from the first user message, in characters, `…` included. */
export const GOAL_CHARS = 500;

/** Longest last user request kept verbatim, in characters (the checkpoint schema's bound). */
export { REQUEST_CHARS } from './last-request.ts';

/** Longest list item the extractive summarizer writes, in characters (the schema allows 2,000). */
export const ITEM_CHARS = 300;

/** Most items kept per list after merging with the previous checkpoint. */
export const LIST_CAPS = {
  completed: 15,
  inProgress: 8,
  pending: 8,
  blockers: 10,
  decisions: 12,
  openQuestions: 6,
} as const;

/** Decisions taken from one run of leaving messages. */
const NEW_DECISIONS = 6;

/** Intents (pending) taken from the agent's last words. */
const NEW_INTENTS = 5;

/** Most working-set paths in a checkpoint (the schema's bound). */
const MAX_WORKING_SET = 10_000;

type ListKey = keyof typeof LIST_CAPS;

/** Lists in trimming order: at equal age, completed work goes first and the current state last. */
const TRIM_ORDER: ListKey[] = [
  'completed',
  'openQuestions',
  'decisions',
  'blockers',
  'pending',
  'inProgress',
];

/** A list item with its age: the seq it comes from ({@link PREVIOUS} for the previous checkpoint). */
interface Item {
  text: string;
  seq: number;
  /** The call whose failure made a blocker; its later success removes the blocker. */
  source?: string | undefined;
}

const PREVIOUS = Number.NEGATIVE_INFINITY;

/** Creates the `extractive` summarizer. Its `summarize` never rejects and reports {@link noUsage}. */
export function createExtractiveSummarizer(): Summarizer {
  return {
    name: 'extractive',
    summarize(input: SummarizeInput): Promise<SummaryResult> {
      const checkpoint = extractCheckpoint(
        input?.previous ?? null,
        input?.leaving ?? [],
        input?.maxSummaryTokens,
      );
      return Promise.resolve({ checkpoint, usage: noUsage() });
    },
  };
}

/**
 * The checkpoint of `previous` merged with `leaving` (ascending seq), within about `maxSummaryTokens`
 * tokens of {@link renderCheckpoint} text (goal, last request and working set are never trimmed, so
 * they alone may exceed it). Always passes `checkpointSchema`; never throws: with no usable message it
 * returns the previous checkpoint (or an empty one), and an unexpected failure returns the same.
 */
export function extractCheckpoint(
  previous: Checkpoint | null,
  leaving: Message[],
  maxSummaryTokens: number = Number.POSITIVE_INFINITY,
): Checkpoint {
  let prior = emptyCheckpoint();
  try {
    prior = safePrevious(previous);
    const messages = (Array.isArray(leaving) ? leaving : []).filter(isUsable);
    if (messages.length === 0) return prior;
    return checkpointSchema.parse(build(prior, messages, maxSummaryTokens));
  } catch {
    return prior;
  }
}

function build(prior: Checkpoint, messages: Message[], maxSummaryTokens: number): Checkpoint {
  const runs = pairToolCalls(messages);
  const state = currentState(messages, runs);
  const hasState = state.inProgress.length + state.pending.length > 0;
  const lists: Record<ListKey, Item[]> = {
    completed: merge(prior.completed, completedItems(runs, state.todosDone), LIST_CAPS.completed),
    // The state at the cutoff replaces the previous one; with nothing new, the previous one still holds.
    inProgress: hasState
      ? merge([], state.inProgress, LIST_CAPS.inProgress)
      : merge(prior.inProgress, [], LIST_CAPS.inProgress),
    pending: hasState
      ? merge([], state.pending, LIST_CAPS.pending)
      : merge(prior.pending, [], LIST_CAPS.pending),
    blockers: mergeBlockers(prior.blockers, messages, runs),
    decisions: merge(prior.decisions, decisionItems(messages), LIST_CAPS.decisions),
    openQuestions: merge(prior.openQuestions, questionItems(messages), LIST_CAPS.openQuestions),
  };
  const fixed = {
    goal: prior.goal.trim() ? prior.goal : goalFrom(messages),
    lastUserRequest: lastUserRequestOf(messages) ?? prior.lastUserRequest,
    workingSet: extractWorkingSet(messages, prior.workingSet).slice(0, MAX_WORKING_SET),
  };
  const coveredThroughSeq = messages[messages.length - 1]?.seq ?? 0;
  return fitBudget(fixed, lists, maxSummaryTokens, coveredThroughSeq);
}

// ---------------------------------------------------------------------------------------------
// Input hygiene

function isUsable(message: Message): boolean {
  return (
    message !== null &&
    typeof message === 'object' &&
    typeof message.content === 'string' &&
    message.kind !== 'summary' &&
    message.role !== 'system'
  );
}

/** The previous checkpoint as a valid one, whatever was stored (invalid items dropped or clipped). */
function safePrevious(previous: Checkpoint | null): Checkpoint {
  if (previous === null || typeof previous !== 'object') return emptyCheckpoint();
  const parsed = checkpointSchema.safeParse(previous);
  if (parsed.success) return parsed.data;
  const out = emptyCheckpoint();
  out.goal = typeof previous.goal === 'string' ? clipWords(previous.goal, 4_000) : '';
  out.lastUserRequest =
    typeof previous.lastUserRequest === 'string' ? clipRequest(previous.lastUserRequest) : '';
  for (const key of TRIM_ORDER) {
    const values: unknown = previous[key];
    out[key] = (Array.isArray(values) ? values : [])
      .filter((v): v is string => typeof v === 'string')
      .map((v) => cleanItem(v, 2_000))
      .filter((v) => v.length > 0)
      .slice(-200);
  }
  const paths: unknown = previous.workingSet;
  out.workingSet = extractWorkingSet([], Array.isArray(paths) ? paths : []).slice(0, MAX_WORKING_SET);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Goal and last request

function goalFrom(messages: Message[]): string {
  const first = messages.find((m) => m.role === 'user' && m.kind === 'message' && m.content.trim());
  // Tags that frame a request (`<pr_description>`, `<issue>`) are markup, not words of the goal.
  return first ? clipWords(collapse(first.content.replace(/<\/?[\w-]+>/g, ' ')), GOAL_CHARS) : '';
}

// ---------------------------------------------------------------------------------------------
// Tool calls

/** A tool call, what it asked for, and its result when the leaving messages hold it. */
interface ToolRun {
  index: number;
  call: Message;
  name: string;
  args: Record<string, unknown>;
  result: Message | null;
  resultIndex: number;
}

/** Pairs each tool call with the first later result of the same `toolCallId`. */
function pairToolCalls(messages: Message[]): Map<number, ToolRun> {
  const runs = new Map<number, ToolRun>();
  const waiting = new Map<string, ToolRun[]>();
  messages.forEach((m, index) => {
    if (m.kind === 'tool_call') {
      const run: ToolRun = { index, call: m, ...parseCall(m), result: null, resultIndex: -1 };
      runs.set(index, run);
      if (m.toolCallId) waiting.set(m.toolCallId, [...(waiting.get(m.toolCallId) ?? []), run]);
    } else if (m.kind === 'tool_result' && m.toolCallId) {
      const run = waiting.get(m.toolCallId)?.shift();
      if (run) {
        run.result = m;
        run.resultIndex = index;
      }
    }
  });
  return runs;
}

/** The tool name and arguments of a call: `{"name", "arguments"}` (arguments possibly a JSON string). */
function parseCall(m: Message): { name: string; args: Record<string, unknown> } {
  const fallback = m.toolName ?? 'tool';
  const json = parseJson(m.content);
  if (!isRecord(json)) return { name: fallback, args: { command: m.content } };
  const name = typeof json.name === 'string' && json.name ? json.name : fallback;
  let args: unknown = json.arguments ?? json.input ?? json.args ?? json.parameters;
  if (args === undefined && !('name' in json)) args = json;
  if (typeof args === 'string') args = parseJson(args) ?? { command: args };
  return { name, args: isRecord(args) ? args : {} };
}

const EDITOR_SUBCOMMANDS: Record<string, string> = {
  view: 'viewed',
  create: 'created',
  str_replace: 'edited',
  insert: 'edited',
  undo_edit: 'undid an edit of',
};
const INSPECT_TOOL = new RegExp(
  `^(?:${[
    'read|view|open|cat|ls|list|glob|grep|search|find|fetch|scroll|goto|think|get',
    'web_?search|web_?fetch|todo_?read|task_?output|bash_?output',
  ].join('|')})(?:_?\\w+)?$`,
  'i',
);
const EDIT_TOOL = /edit|write|create|patch|replace|insert|append|delete|remove|rename|move|mkdir|touch/i;
const SHELL_TOOL = /bash|shell|terminal|command|exec|powershell|^run$|^sh$|^cmd$/i;

/** What a call did, in a few words, and whether it only looked at things (reads, listings, searches). */
interface CallSummary {
  text: string;
  inspect: boolean;
}

function describeCall(run: ToolRun): CallSummary {
  const path = pathArgument(run.args);
  const command = stringArgument(run.args, ['command', 'cmd', 'script']);
  if (Array.isArray(run.args.todos)) return { text: 'updated the todo list', inspect: true };
  const editorVerb = command ? EDITOR_SUBCOMMANDS[command] : undefined;
  if (editorVerb && path) return { text: `${editorVerb} ${path}`, inspect: command === 'view' };
  if (EDIT_TOOL.test(run.name) && !SHELL_TOOL.test(run.name))
    return { text: describeEdit(run, path), inspect: false };
  if (INSPECT_TOOL.test(run.name))
    return { text: clipWords(`${run.name} ${path ?? command ?? ''}`, 150), inspect: true };
  if (command && SHELL_TOOL.test(run.name)) {
    const written = writtenFile(shellSummary(command));
    if (written) return { text: clipWords(`wrote ${written}`, 200), inspect: false };
    return { text: `ran: ${clipWords(shellSummary(command), 150)}`, inspect: isInspectionCommand(command) };
  }
  const detail =
    stringArgument(run.args, ['description', 'command', 'query', 'prompt', 'url', 'skill']) ??
    Object.values(run.args).find((v): v is string => typeof v === 'string' && v.trim().length > 0);
  const shown = detail ? firstLine(detail).replace(new RegExp(`^${escapeRegExp(run.name)}\\s+`), '') : '';
  return { text: clipWords(shown ? `${run.name}: ${shown}` : `called ${run.name}`, 150), inspect: false };
}

/** `edited x` / `created x` / `wrote x`. */
function describeEdit(run: ToolRun, path: string | null): string {
  const verb = /create/i.test(run.name) ? 'created' : /write/i.test(run.name) ? 'wrote' : 'edited';
  return clipWords(`${verb} ${editTarget(run, path) ?? 'a file'}`, 200);
}

/** The file of an edit: from the arguments, else the first path of the result or of the arguments' text. */
function editTarget(run: ToolRun, path: string | null): string | null {
  return (
    path ?? extractPaths(run.result?.content ?? '')[0] ?? extractPaths(JSON.stringify(run.args))[0] ?? null
  );
}

/**
 * The call as the source of a blocker, stable across retries so a later success can clear it: the
 * shell command, else the tool name and its file (`edit src/a.py`).
 */
function callSource(run: ToolRun): string {
  const command = stringArgument(run.args, ['command', 'cmd', 'script']);
  if (command && SHELL_TOOL.test(run.name)) return clipWords(shellSummary(command), 120);
  const path = pathArgument(run.args);
  const target = EDIT_TOOL.test(run.name) ? editTarget(run, path) : path;
  return clipWords(target ? `${run.name} ${target}` : run.name, 120);
}

function pathArgument(args: Record<string, unknown>): string | null {
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string' || !value.trim() || value.includes('\n')) continue;
    if (/^(?:path|file|file_?path|file_?name|filename|notebook_?path|target_?file)$/i.test(key))
      return value.trim();
  }
  return null;
}

function stringArgument(args: Record<string, unknown>, keys: string[]): string | null {
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && value.trim()) return value.trim();
  }
  return null;
}

/** A shell command without its leading `cd dir &&` steps, first line only, whitespace collapsed. */
function shellSummary(command: string): string {
  const newline = command.trim().indexOf('\n');
  let text = (newline < 0 ? command.trim() : command.trim().slice(0, newline)).slice(0, 2_000);
  for (;;) {
    const next = text.replace(/^cd\s+("[^"]*"|'[^']*'|\S+)\s*(?:&&|;)\s*/, '');
    if (next === text) break;
    text = next;
  }
  return collapse(text) + (newline >= 0 ? ' …' : '');
}

const INSPECT_COMMANDS = new Set(
  (
    'ls ll cat head tail less more grep egrep fgrep rg ag ack find fd tree pwd echo printf wc nl file ' +
    'stat which whereis type du df sort uniq cut awk sed diff cmp env printenv date whoami id uname ' +
    'history true cd xxd hexdump od strings jq column basename dirname realpath readlink'
  ).split(' '),
);
const GIT_READS = new Set(
  'status log diff show branch blame grep ls-files rev-parse remote describe'.split(' '),
);

/** Whether a shell command only reads: every step a read command, no redirection into a file, no `sed -i`. */
function isInspectionCommand(command: string): boolean {
  const { steps, unquoted } = parseShell(command);
  const withoutHarmless = unquoted.replace(/\d?>&\d|\d?>\s*\/dev\/null/g, ' ');
  if (/>|\btee\b|\bsed\s+(?:-\w*\s+)*-i/.test(withoutHarmless)) return false;
  return steps.every(([word, sub]) => {
    if (word === 'git') return sub !== undefined && GIT_READS.has(sub);
    return INSPECT_COMMANDS.has(word);
  });
}

/** A file a shell command writes with `cat > f`, `echo ... > f`, `tee f` (heredoc scripts), or null. */
function writtenFile(command: string): string | null {
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
function parseShell(command: string): { steps: Array<[string, string | undefined]>; unquoted: string } {
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

// ---------------------------------------------------------------------------------------------
// Errors (blockers)

const EXIT_CODE_PATTERNS = [
  /<returncode>\s*(-?\d+)\s*<\/returncode>/,
  /\bexit(?:ed with)? (?:code|status)[:\s]+(-?\d+)/i,
  /\breturned non-zero exit status (\d+)/,
];

/** The exit code a tool result states near its start or end, or null when it states none. */
function exitCode(content: string): number | null {
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
function detectError(content: string, inspect: boolean, command: string | null): string | null {
  const code = exitCode(content);
  if (code === 0) return null;
  const lines = stripAnsi(content)
    .split('\n')
    // Error lines are short; clipping bounds the work of the patterns on megabyte-long lines.
    .map((l) => l.slice(0, MAX_ERROR_LINE).trim())
    .filter((l) => l.length > 0 && !/^<\/?(?:returncode|output)>/.test(l));
  if (inspect && code === null) return toolMessageError(lines);
  const found = tracebackException(lines) ?? firstStrongError(lines);
  if (found !== null) return found;
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

function firstStrongError(lines: string[]): string | null {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('Traceback (most recent call last)')) continue;
    const exception = EXCEPTION_LINE.exec(line);
    if (isExceptionName(exception?.[1]) && !CODE_KEYWORDS_BEFORE.test(line.slice(0, exception?.index ?? 0))) {
      return withDetail(lines, i);
    }
    if (STRONG_ERRORS.some((p) => p.test(line))) return withDetail(lines, i);
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

/** Exit 1 of grep-like commands means "no match" or "differs", not failure. */
function isBenignExit(command: string | null, code: number): boolean {
  if (command === null || code !== 1) return false;
  const steps = parseShell(command).steps;
  const last = steps[steps.length - 1]?.[0];
  return last !== undefined && /^(?:grep|egrep|fgrep|rg|ag|ack|diff|cmp|test|\[|\[\[|false)$/.test(last);
}

/** Blockers: the previous ones, then each failed result's error; a later success of the call clears it. */
function mergeBlockers(previous: string[], messages: Message[], runs: Map<number, ToolRun>): Item[] {
  let items: Item[] = previous.map((text) => ({ text, seq: PREVIOUS, source: sourceOfPrevious(text) }));
  const byResult = new Map<number, ToolRun>();
  for (const run of runs.values()) if (run.result) byResult.set(run.resultIndex, run);
  messages.forEach((m, index) => {
    if (m.kind !== 'tool_result') return;
    const run = byResult.get(index);
    const summary = run ? describeCall(run) : null;
    const command = run ? stringArgument(run.args, ['command', 'cmd', 'script']) : null;
    const error = detectError(m.content, summary?.inspect ?? false, command);
    const source = run ? callSource(run) : undefined;
    if (error === null) {
      if (source !== undefined) items = items.filter((b) => b.source !== source);
      return;
    }
    const line = clipWords(collapse(error), 220);
    const text = source ? `${line} (from: ${source})` : line;
    items = items.filter((b) => blockerKey(b.text) !== blockerKey(text));
    items.push({ text: cleanItem(text, ITEM_CHARS), seq: m.seq, source });
  });
  return items.filter((b) => b.text.length > 0).slice(-LIST_CAPS.blockers);
}

function sourceOfPrevious(text: string): string | undefined {
  return / \(from: (.+)\)$/.exec(text)?.[1];
}

function blockerKey(text: string): string {
  return normalizeKey(text.replace(/ \(from: .+\)$/, ''));
}

// ---------------------------------------------------------------------------------------------
// Completed work

/** Successful, non-read-only calls as `edited x` / `ran: cmd`, then finished todos. */
function completedItems(runs: Map<number, ToolRun>, todosDone: Item[]): Item[] {
  const items: Item[] = [];
  for (const run of runs.values()) {
    if (!run.result) continue;
    const summary = describeCall(run);
    const command = stringArgument(run.args, ['command', 'cmd', 'script']);
    if (summary.inspect || detectError(run.result.content, false, command) !== null) continue;
    items.push({ text: summary.text, seq: run.result.seq });
  }
  return [...items, ...todosDone].sort((a, b) => a.seq - b.seq);
}

// ---------------------------------------------------------------------------------------------
// Current state: in progress, pending

interface CurrentState {
  inProgress: Item[];
  pending: Item[];
  todosDone: Item[];
}

/** "I'll", "I will", "I'm going to" and the like, as regular-expression alternatives. */
const WILL = "I'll|I will|we'll|we will|I'm going to|I am going to";

const INTENT = new RegExp(
  `\\b(?:next,? (?:I|we)\\b|${WILL}|let me|let's|I need to|we need to|still need to)`,
  'i',
);

/**
 * Where the agent stands at the cutoff: calls without a result, the latest todo list (any tool whose
 * arguments hold `todos: [{content, status}]`), and the intents the agent stated after its last tool
 * result ("Next I will run the tests").
 */
function currentState(messages: Message[], runs: Map<number, ToolRun>): CurrentState {
  const inProgress: Item[] = [];
  const pending: Item[] = [];
  const todosDone: Item[] = [];
  let latestTodos: ToolRun | undefined;
  for (const run of runs.values()) {
    if (Array.isArray(run.args.todos)) latestTodos = run;
    if (!run.result)
      inProgress.push({ text: `waiting for result: ${describeCall(run).text}`, seq: run.call.seq });
  }
  if (latestTodos) {
    for (const todo of latestTodos.args.todos as unknown[]) {
      if (!isRecord(todo)) continue;
      const text = cleanItem(String(todo.content ?? todo.title ?? todo.text ?? todo.task ?? ''), ITEM_CHARS);
      const status = String(todo.status ?? '').toLowerCase();
      if (!text) continue;
      const item = { text, seq: latestTodos.call.seq };
      if (/progress|active|doing/.test(status)) inProgress.push(item);
      else if (/complete|done/.test(status)) todosDone.push(item);
      else if (/pending|todo|open|not.?started/.test(status)) pending.push(item);
    }
  }
  pending.push(...trailingIntents(messages));
  return { inProgress, pending, todosDone };
}

/** Intent sentences of the assistant's messages after the last tool result. */
function trailingIntents(messages: Message[]): Item[] {
  const lastResult = findLastIndex(messages, (m) => m.kind === 'tool_result');
  const items: Item[] = [];
  messages.forEach((m, index) => {
    if (index <= lastResult || m.role !== 'assistant' || m.kind !== 'message' || isThinking(m.content))
      return;
    for (const sentence of sentences(m.content)) {
      if ((INTENT.test(sentence) || /\bTODO\b/.test(sentence)) && !sentence.endsWith('?'))
        items.push({ text: clipWords(sentence, ITEM_CHARS), seq: m.seq });
    }
  });
  return items.slice(-NEW_INTENTS);
}

// ---------------------------------------------------------------------------------------------
// Decisions and questions

const DECISION = new RegExp(
  `\\b(?:${[
    'decided|decide to|decision|we should|instead of|rather than|root cause',
    'the fix is|fix is to|the fix (?:should|will)|the (?:approach|solution) is',
    'the (?:issue|problem|bug) (?:is|was)|(?:chose|choose|opted|going) (?:to|with)',
    "I'll use|I will use",
  ].join('|')})\\b`,
  'i',
);
const WEAK_DECISION = new RegExp(`\\b(?:${WILL})\\b`, 'i');
const EXPLORATION = new RegExp(
  `\\b(?:${WILL})\\s+(?:now\\s+|first\\s+|start by\\s+)?` +
    '(?:look|check|explore|examin|view|see|search|find|open|read|inspect|investigat|run|tr(?:y|ies)' +
    '|start|begin)',
  'i',
);

/**
 * Up to {@link NEW_DECISIONS} assistant sentences stating a decision or a cause, the newest first chosen;
 * "I'll ..." statements fill in only when fewer strong ones exist, and never "I'll look at ...".
 */
function decisionItems(messages: Message[]): Item[] {
  const strong: Item[] = [];
  const weak: Item[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || m.kind !== 'message') continue;
    const thinking = isThinking(m.content);
    for (const sentence of sentences(m.content)) {
      if (sentence.length < 20 || sentence.endsWith('?')) continue;
      const item = { text: clipWords(sentence, ITEM_CHARS), seq: m.seq };
      if (DECISION.test(sentence)) strong.push(item);
      else if (!thinking && WEAK_DECISION.test(sentence) && !EXPLORATION.test(sentence)) weak.push(item);
    }
  }
  const chosen = strong.slice(-NEW_DECISIONS);
  const room = NEW_DECISIONS - chosen.length;
  if (room > 0) chosen.push(...weak.slice(-room));
  return chosen.sort((a, b) => a.seq - b.seq);
}

/**
 * Questions (sentences ending in `?`) nobody answered: a user's, when no assistant text follows; the
 * assistant's, when asked after its last tool result (to the user, not to itself) and no user text follows.
 */
function questionItems(messages: Message[]): Item[] {
  const lastResult = findLastIndex(messages, (m) => m.kind === 'tool_result');
  const lastUser = findLastIndex(messages, (m) => m.role === 'user' && m.kind === 'message');
  const lastAssistant = findLastIndex(
    messages,
    (m) => m.role === 'assistant' && m.kind === 'message' && !isThinking(m.content),
  );
  const items: Item[] = [];
  messages.forEach((m, index) => {
    if (m.kind !== 'message' || isThinking(m.content)) return;
    const open =
      m.role === 'user'
        ? index > lastAssistant
        : m.role === 'assistant' && index > lastResult && index > lastUser;
    if (!open) return;
    // A line with a link (`- [Why X? - Blog](https://...)`) lists a source; it asks nothing.
    const withoutLinks = m.content
      .split('\n')
      .filter((line) => !/\]\(|:\/\//.test(line))
      .join('\n');
    for (const sentence of sentences(withoutLinks)) {
      if (sentence.endsWith('?') && sentence.length >= 8)
        items.push({ text: clipWords(sentence, ITEM_CHARS), seq: m.seq });
    }
  });
  return items.slice(-LIST_CAPS.openQuestions);
}

// ---------------------------------------------------------------------------------------------
// Merging and the token budget

function asItems(texts: string[]): Item[] {
  return texts.map((text) => ({ text, seq: PREVIOUS }));
}

/** Previous items then fresh ones, cleaned, deduplicated (the newest mention kept), the last `cap`. */
function merge(previous: string[], fresh: Item[], cap: number): Item[] {
  const all = [...asItems(previous), ...fresh]
    .map((item) => ({ ...item, text: cleanItem(item.text, itemLimit(item)) }))
    .filter((item) => item.text.length > 0);
  const last = new Map<string, number>();
  all.forEach((item, i) => {
    last.set(normalizeKey(item.text), i);
  });
  return all.filter((item, i) => last.get(normalizeKey(item.text)) === i).slice(-cap);
}

/** Previous items keep the schema's bound (another summarizer may have written them); new ones ours. */
function itemLimit(item: Item): number {
  return item.seq === PREVIOUS ? 2_000 : ITEM_CHARS;
}

type Fixed = Pick<Checkpoint, 'goal' | 'lastUserRequest' | 'workingSet'>;

/**
 * Assembles the checkpoint and drops the oldest list items (lowest seq; previous items first) until its
 * rendering fits `maxTokens`. The goal, the last request and the working set are never trimmed.
 */
function fitBudget(
  fixed: Fixed,
  lists: Record<ListKey, Item[]>,
  maxTokens: number,
  coveredSeq: number,
): Checkpoint {
  const assemble = (): Checkpoint => ({
    ...fixed,
    workingSet: [],
    completed: texts(lists.completed),
    inProgress: texts(lists.inProgress),
    pending: texts(lists.pending),
    blockers: texts(lists.blockers),
    decisions: texts(lists.decisions),
    openQuestions: texts(lists.openQuestions),
  });
  const budget =
    typeof maxTokens === 'number' && !Number.isNaN(maxTokens) ? maxTokens : Number.POSITIVE_INFINITY;
  // The working set is the last section rendered: its text is the same with or without the lists.
  const header = renderCheckpoint(emptyCheckpoint(), coveredSeq).length;
  const workingSetText = renderCheckpoint(
    { ...emptyCheckpoint(), workingSet: fixed.workingSet },
    coveredSeq,
  ).slice(header);
  const tokens = (c: Checkpoint) => estimateTextTokens(renderCheckpoint(c, coveredSeq) + workingSetText);
  const queue = TRIM_ORDER.flatMap((key, order) => lists[key].map((item) => ({ key, item, order })));
  queue.sort((a, b) => a.item.seq - b.item.seq || a.order - b.order);
  let checkpoint = assemble();
  for (const { key, item } of queue) {
    if (tokens(checkpoint) <= budget) break;
    lists[key] = lists[key].filter((i) => i !== item);
    checkpoint = assemble();
  }
  return { ...checkpoint, workingSet: fixed.workingSet };
}

function texts(items: Item[]): string[] {
  return items.map((i) => i.text).filter((t) => t.length > 0);
}

// ---------------------------------------------------------------------------------------------
// Text helpers

/** Sentences of a message's prose: code blocks, indented code and the `[thinking]` tag left out. */
function sentences(text: string): string[] {
  const prose = text
    .replace(/^\[thinking\]\s*/, '')
    .replace(/```[\s\S]*?(?:```|$)/g, '\n')
    .split('\n')
    .filter((line) => !/^(?: {4}|\t)/.test(line))
    .map((line) => line.replace(/^\s*(?:[-*+>#]+|\d+[.)])\s+/, '').trim())
    .filter((line) => line.length > 0);
  return prose
    .flatMap((line) => line.split(/(?<=[.!?])\s+/))
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function isThinking(text: string): boolean {
  return text.startsWith('[thinking]');
}

function firstLine(text: string): string {
  return collapse(text.trim().split('\n')[0] ?? '');
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function normalizeKey(text: string): string {
  return collapse(text).toLowerCase();
}

/**
 * A list item: one line, ANSI colours removed, control characters, bidirectional overrides and unpaired
 * surrogates as `?` (as in working-set paths), at most `max` characters.
 */
function cleanItem(text: string, max: number): string {
  let out = '';
  const flat = collapse(stripAnsi(text));
  for (let i = 0; i < flat.length; i++) {
    const code = flat.charCodeAt(i);
    if (isHighSurrogate(code) && isLowSurrogate(flat.charCodeAt(i + 1))) {
      out += flat.slice(i, i + 2);
      i++;
    } else {
      out += isUnsafe(code) ? '?' : flat.charAt(i);
    }
  }
  return clipWords(out, max);
}

/** `text` if at most `max` characters, else cut at a word boundary (when one is near) and ended by `…`. */
function clipWords(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  if (space > max * 0.6) cut = cut.slice(0, space);
  if (isHighSurrogate(cut.charCodeAt(cut.length - 1))) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escape sequences start with ESC
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function findLastIndex<T>(items: T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i] as T)) return i;
  return -1;
}

function isUnsafe(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    isHighSurrogate(code) ||
    isLowSurrogate(code)
  );
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
