/**
 * The fake model's reading of the tool calls of a transcript: each call paired with its result,
 * what it did (the files it created, edited, deleted, moved, ran or read; the files a script it
 * wrote and ran rewrote), how it ended (ok,
 * failed, rejected or interrupted by the user, no result yet), its first error line or a short
 * result, and its family (a later run of the same thing). Built for any agent's tools (Claude Code,
 * SWE-agent, mini-swe-agent, OpenHands, Codex-style patches), from the call's JSON and its result
 * text only. How a result failed is compactor's own recognition (`callOutcome`, `detectError`):
 * both summarizers judge failures alike, as a model told "failed" would. Pure.
 */
import { callOutcome, detectError } from '../../../shared/text/error-lines.ts';
import { GIT_READS, heredocs, scriptWrites, withoutCdSteps } from '../../../shared/text/shell.ts';
import { isRecord } from '../../../shared/text/text.ts';
import type { TranscriptMessage } from './prompt-view.ts';
import {
  looksLikeFile,
  mainStep,
  programName,
  programWords,
  type ShellStep,
  shellSteps,
  stepFamily,
} from './shell.ts';
import { clip, firstLine } from './text.ts';

/** What a call did to a file (the checkpoint's file roles). */
export type FileRole = 'created' | 'edited' | 'deleted' | 'moved' | 'read' | 'ran' | 'mentioned';

/** One file a call touched. */
export interface FileEffect {
  path: string;
  role: FileRole;
  /** What changed, in a few words; null when nothing did or it is not known. */
  change: string | null;
}

/** How a call ended; `no-result` when the transcript holds no result for it. */
export type CallOutcome = 'ok' | 'failed' | 'rejected' | 'interrupted' | 'no-result';

/** An item of a todo list a call wrote. */
export interface TodoItem {
  text: string;
  status: 'pending' | 'inProgress' | 'completed';
}

/** A tool call and what the fake model makes of it. */
export interface ToolCall {
  call: TranscriptMessage;
  result: TranscriptMessage | null;
  name: string;
  args: Record<string, unknown>;
  /** The shell command line, for a shell tool; else null. */
  command: string | null;
  /** How items name the call: `` `pytest -x` ``, `Edit src/a.ts`, `` `open setup.py` ``. */
  label: string;
  /**
   * What it works on, as a step would name it: a shell's command line (`grep -n "_calc" core.py`,
   * first line, clipped), else the file it names; null when neither.
   */
  subject: string | null;
  /** Whether it only looked at things (reads, listings, searches, a question). */
  readOnly: boolean;
  /** Files it touched (writes count only when it ended ok). */
  effects: FileEffect[];
  /** What a later run must match to be the same thing (see `stepFamily`). */
  family: { key: string; broad: string };
  outcome: CallOutcome;
  /** The first error line of a failed call, clipped; else null. */
  errorLine: string | null;
  /** A short result of a call that ended ok (`12 passed`), or null when its output says nothing. */
  summary: string | null;
  /** The todo list it wrote, or null. */
  todos: TodoItem[] | null;
  /** Questions it put to the user. */
  questions: string[];
  /** The user's words when they rejected it (`the user said: ...`), else null. */
  rejectionWords: string | null;
}

const SHELL_TOOL =
  /bash|shell|terminal|command|exec|powershell|^run$|^sh$|^cmd$|^run_?(?:command|shell|script)/i;
const READ_TOOL = /^(?:read|view|open|cat|show|goto|scroll)(?:_?\w+)?$/i;
const SEARCH_TOOL =
  /glob|grep|search|find|^ls$|^list|fetch|^web|think|todo_?read|output$|decompile|disassemble/i;
const QUESTION_TOOL = /ask|question/i;
const CREATE_TOOL = /create|^touch$|new_?file/i;
const DELETE_TOOL = /delete|remove|^rm$/i;
const MOVE_TOOL = /move|rename|^mv$/i;
const EDIT_TOOL = /edit|write|replace|patch|insert|append|notebook/i;
/** Subcommands of an editor tool (`str_replace_editor`'s `command`). */
const EDITOR_COMMANDS: Record<string, FileRole> = {
  view: 'read',
  create: 'created',
  str_replace: 'edited',
  insert: 'edited',
  undo_edit: 'edited',
  write: 'created',
  delete: 'deleted',
};
/** Arguments that carry new text: a call with one of them writes. */
const EDIT_PAYLOAD = [
  'old_string',
  'new_string',
  'old_str',
  'new_str',
  'content',
  'contents',
  'file_text',
  'text',
  'search',
  'replace',
  'patch',
  'diff',
  'edits',
];

/** Programs that only read (with `git` and package managers' read subcommands). */
const READ_PROGRAMS = new Set(
  (
    'ls ll cat head tail less more grep egrep fgrep rg ag ack find fd tree pwd echo printf wc nl file stat ' +
    'which whereis type du df sort uniq cut tr awk sed diff cmp env printenv date whoami id uname true cd ' +
    'xxd hexdump od strings jq column basename dirname realpath readlink bat'
  ).split(' '),
);
const PACKAGE_READS =
  /^(?:pip3?|npm|yarn|pnpm|cargo|go|gem|conda) (?:list|ls|show|freeze|view|info|tree|version|why)$/;
/** Programs whose file arguments they read. */
const READERS = new Set(
  'cat head tail less more nl bat wc grep egrep fgrep rg ag diff cmp sed awk xxd od strings'.split(' '),
);
/** Programs whose first non-option argument is a pattern or a script, not a file. */
const PATTERN_FIRST = new Set('grep egrep fgrep rg ag sed awk'.split(' '));
/** Interpreters and test runners: the files they are given, they run. */
const RUNNERS = new Set(
  (
    'python node deno bun ruby perl php bash sh zsh tsx ts-node pytest jest vitest mocha go cargo rspec ' +
    'java dotnet Rscript julia lua'
  ).split(' '),
);
/** Interpreters that run a script the agent wrote: its file, `-c`/`-e` code, or a here-document. */
const SCRIPT_RUNNERS = new Set('python node deno bun tsx ts-node'.split(' '));
/** A plain string replacement in a script: `content.replace('old', 'new')`. */
const PLAIN_REPLACE =
  /\.replace\(\s*(['"])((?:(?!\1)[^\\\n]|\\.)*)\1\s*,\s*(['"])((?:(?!\3)[^\\\n]|\\.)*)\3\s*\)/;

/** Every tool call of `transcript`, in order, each with its result (matched by call id, else the next one). */
export function readCalls(transcript: TranscriptMessage[], knownPaths: ReadonlySet<string>): ToolCall[] {
  const calls: ToolCall[] = [];
  const byId = new Map<string, TranscriptMessage[]>();
  const anonymous: TranscriptMessage[] = [];
  const resultOf = new Map<TranscriptMessage, TranscriptMessage>();
  for (const m of transcript) {
    if (m.kind === 'tool_call') {
      if (m.callId) byId.set(m.callId, [...(byId.get(m.callId) ?? []), m]);
      else anonymous.push(m);
    } else if (m.kind === 'tool_result') {
      const call = (m.callId ? byId.get(m.callId) : anonymous)?.shift();
      if (call) resultOf.set(call, m);
    }
  }
  const state: ReadState = { openFile: null, known: new Set(knownPaths), scripts: new Map() };
  for (const m of transcript) {
    if (m.kind === 'tool_call') calls.push(readCall(m, resultOf.get(m) ?? null, state));
  }
  return calls;
}

/** What the reading carries from call to call. */
interface ReadState {
  /** The file an editor has open (SWE-agent's `open`/`create`; an edit without a path edits it). */
  openFile: string | null;
  /** Paths known to exist before: a write to one of them edits it. */
  known: Set<string>;
  /** The text of each file the agent wrote whole (a here-document, an editor's create): a script it may run. */
  scripts: Map<string, string>;
}

function readCall(call: TranscriptMessage, result: TranscriptMessage | null, state: ReadState): ToolCall {
  const { name, args } = parseCall(call);
  const sub = editorCommand(args);
  const shell = !sub && SHELL_TOOL.test(name) ? stringArg(args, ['command', 'cmd', 'script', 'code']) : null;
  // SWE-agent's tools take their own command line: `open setup.py`, `create x.py`, `edit 1:5\n...`.
  const own = ownCommandLine(name, args);
  const ownPath = own === null ? null : normalizePath(own.split(/\s+/)[0] ?? null);
  const path = normalizePath(pathArg(args)) ?? (ownPath !== null && looksLikeFile(ownPath) ? ownPath : null);
  let readOnly = false;
  let effects: FileEffect[] = [];
  let family: { key: string; broad: string };
  let label: string;
  let subject: string | null = null;
  if (Array.isArray(args.todos) || Array.isArray(args.task_list)) {
    readOnly = true;
    label = `${name} (todo list)`;
    family = { key: name, broad: name };
  } else if (shell !== null) {
    const steps = shellSteps(shell);
    readOnly = steps.length > 0 && steps.every(isReadStep);
    effects = shellEffects(steps, shell, state);
    family = stepFamily(mainStep(steps) ?? { words: [name], redirects: [], piped: false });
    subject = commandLine(shell);
    label = `\`${subject}\``;
  } else {
    const role = toolRole(name, sub, args, own, path, result, state);
    readOnly = role === 'read' || (role === null && (QUESTION_TOOL.test(name) || SEARCH_TOOL.test(name)));
    const target =
      role === null ? null : (path ?? resultFile(result) ?? (role === 'read' ? null : state.openFile));
    if (role && target) effects = [{ path: target, role, change: describeChange(role, args, own) }];
    const written = stringArg(args, ['file_text', 'content', 'contents']);
    if (target && written !== null && (role === 'created' || role === 'edited'))
      rememberScript(state, target, written);
    subject = target;
    const about = target ?? detail(args, name);
    const shown =
      own !== null
        ? `\`${name} ${commandLine(own)}\``
        : target !== null
          ? [name, sub, target].filter(Boolean).join(' ')
          : `${name}${about ? `: ${about}` : ''}`;
    label = clip(shown, 160);
    family = { key: `${name} ${target ?? ''}`.trim(), broad: `${name} ${target ?? ''}`.trim() };
  }
  const command = shell;
  const outcome: CallOutcome = result ? callOutcome(result.content, readOnly, command) : 'no-result';
  for (const effect of effects) if (outcome === 'ok') state.known.add(effect.path);
  trackOpenFile(state, effects, result);
  return {
    call,
    result,
    name,
    args,
    command,
    label,
    subject,
    readOnly,
    // A write that failed or was refused changed nothing; a script that failed still ran.
    effects: effects.filter((e) => outcome === 'ok' || (outcome === 'failed' && e.role === 'ran')),
    family,
    outcome,
    errorLine:
      outcome === 'failed' && result
        ? clip(
            detectError(result.content, readOnly, command) ?? meaningfulLines(result.content)[0] ?? 'failed',
            200,
          )
        : null,
    summary: outcome === 'ok' && result ? shortResult(result.content) : null,
    todos: todoItems(args),
    questions: QUESTION_TOOL.test(name) ? questionsOf(args) : [],
    rejectionWords: outcome === 'rejected' && result ? rejectionWords(result.content) : null,
  };
}

/** What a tool that is not a shell did to the file it names, from its name and arguments; null when nothing. */
function toolRole(
  name: string,
  sub: string | null,
  args: Record<string, unknown>,
  own: string | null,
  path: string | null,
  result: TranscriptMessage | null,
  state: ReadState,
): FileRole | null {
  if (sub) return EDITOR_COMMANDS[sub] ?? null;
  if (READ_TOOL.test(name)) return 'read';
  if (QUESTION_TOOL.test(name) || SEARCH_TOOL.test(name)) return null;
  if (CREATE_TOOL.test(name)) return 'created';
  if (DELETE_TOOL.test(name)) return 'deleted';
  if (MOVE_TOOL.test(name)) return 'moved';
  if (!EDIT_TOOL.test(name)) return null;
  if (hasPayload(args) || own !== null) return writeRole(name, path, result, state);
  // An editor called with a path and no new text shows the file.
  return path ? 'read' : null;
}

/** The tool name and arguments of a call's JSON (`{"name", "arguments"}`); a clipped JSON read field by field. */
function parseCall(m: TranscriptMessage): { name: string; args: Record<string, unknown> } {
  const fallback = m.tool ?? 'tool';
  let json: unknown;
  try {
    json = JSON.parse(m.content);
  } catch {
    json = undefined;
  }
  if (isRecord(json)) {
    const name = typeof json.name === 'string' && json.name ? json.name : fallback;
    let args: unknown = json.arguments ?? json.input ?? json.args ?? json.parameters;
    if (args === undefined && !('name' in json)) args = json;
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        args = { command: args };
      }
    }
    return { name, args: isRecord(args) ? args : {} };
  }
  // Clipped or not JSON: the string fields that survive.
  const args: Record<string, unknown> = {};
  for (const f of m.content.matchAll(/"(\w+)"\s*:\s*"((?:[^"\\]|\\.)*)"/g)) {
    try {
      args[f[1] as string] = JSON.parse(`"${f[2]}"`);
    } catch {
      // A field cut in the middle of an escape: left out.
    }
  }
  const name = typeof args.name === 'string' ? args.name : fallback;
  delete args.name;
  if (Object.keys(args).length === 0 && m.content.trim()) args.command = m.content.trim();
  return { name, args };
}

/** An editor tool's subcommand (`command: "str_replace"`), also when only its generated code names it. */
function editorCommand(args: Record<string, unknown>): string | null {
  const direct = typeof args.command === 'string' ? args.command.trim() : '';
  if (Object.hasOwn(EDITOR_COMMANDS, direct)) return direct;
  for (const value of Object.values(args)) {
    if (typeof value !== 'string') continue;
    const named = /['"]command['"]\s*:\s*['"](\w+)['"]/.exec(value)?.[1];
    if (named && Object.hasOwn(EDITOR_COMMANDS, named)) return named;
  }
  return null;
}

/** The argument text of a tool that takes its own command line (`open x.py` for `open`), or null. */
function ownCommandLine(name: string, args: Record<string, unknown>): string | null {
  const command = typeof args.command === 'string' ? args.command.trim() : '';
  if (!command || SHELL_TOOL.test(name)) return null;
  const head = command.split(/\s+/)[0];
  return head === name ? command.slice(name.length).trim() || null : null;
}

function hasPayload(args: Record<string, unknown>): boolean {
  return EDIT_PAYLOAD.some((k) => k in args);
}

/** `created` for a new file (or a result that says so), `edited` for one that existed. */
function writeRole(
  name: string,
  path: string | null,
  result: TranscriptMessage | null,
  state: ReadState,
): FileRole {
  if (!/write|create/i.test(name)) return 'edited';
  const said = result?.content ?? '';
  if (/\bcreated\b/i.test(said)) return 'created';
  if (/\b(?:updated|overwr\w*|modified)\b/i.test(said)) return 'edited';
  return path !== null && isKnown(state, path) ? 'edited' : 'created';
}

/** Keeps the text of a file written whole, in place of what an earlier spelling of its path held. */
function rememberScript(state: ReadState, path: string, text: string): void {
  for (const known of [...state.scripts.keys()]) if (samePath(known, path)) state.scripts.delete(known);
  state.scripts.set(path, text);
}

function isKnown(state: ReadState, path: string): boolean {
  return state.known.has(path) || [...state.known].some((k) => samePath(k, path));
}

/** What an editor call changed, in a few words. */
function describeChange(role: FileRole, args: Record<string, unknown>, own: string | null): string | null {
  if (role === 'read' || role === 'ran') return null;
  const old = stringArg(args, ['old_string', 'old_str', 'search']);
  const neu = stringArg(args, ['new_string', 'new_str', 'replace'], true);
  if (Array.isArray(args.edits)) return `${args.edits.length} replacements`;
  if (old !== null && neu !== null)
    return `replaced "${clip(firstLine(old), 60)}" with "${clip(firstLine(neu), 60)}"`;
  const inserted = stringArg(args, ['new_str', 'text', 'new_string']);
  const line = args.insert_line ?? args.line ?? args.line_number;
  if (inserted !== null && role === 'edited')
    return `inserted "${clip(firstLine(inserted), 60)}"${typeof line === 'number' ? ` at line ${line}` : ''}`;
  const text = stringArg(args, ['file_text', 'content', 'contents']);
  if (text !== null) return `${text.split('\n').length} lines written`;
  if (own !== null) {
    const [head, ...body] = own.split('\n');
    const range = /^(\d+):(\d+)$/.exec(head?.trim() ?? '');
    const first = body.find((l) => l.trim() && l.trim() !== 'end_of_edit');
    if (range)
      return `lines ${range[1]}-${range[2]} replaced${first ? ` with "${clip(first.trim(), 60)}"` : ''}`;
  }
  return null;
}

/** The file a result names (`[File: /x/a.py (9 lines total)]`, `(Open file: /x/a.py)`), or null. */
function resultFile(result: TranscriptMessage | null): string | null {
  const text = result?.content ?? '';
  const named = /\[File: ([^\s()]+)/.exec(text)?.[1] ?? /\(Open file: ([^\s()]+)\)/.exec(text)?.[1];
  return named && named !== 'n/a' ? normalizePath(named) : null;
}

function trackOpenFile(state: ReadState, effects: FileEffect[], result: TranscriptMessage | null): void {
  const opened = resultFile(result);
  if (opened) state.openFile = opened;
  else {
    const touched = effects.find((e) => e.role === 'read' || e.role === 'created');
    if (touched) state.openFile = touched.path;
  }
}

function isReadStep(step: ShellStep): boolean {
  const words = programWords(step);
  const program = programName(words[0] ?? '');
  if (step.redirects.some((r) => r.op !== '<' && r.target !== '/dev/null')) return false;
  if (program === 'sed' && words.some((w) => /^-i|^--in-place/.test(w))) return false;
  if (program === 'git') return GIT_READS.has(words[1] ?? '');
  const sub = words.slice(1).find((w) => !w.startsWith('-'));
  if (PACKAGE_READS.test(`${program} ${sub ?? ''}`)) return true;
  if (words.length === 2 && /^(?:--version|-V|-v|version)$/.test(words[1] ?? '')) return true;
  return READ_PROGRAMS.has(program);
}

/** The files a shell command touched, step by step. */
function shellEffects(steps: ShellStep[], command: string, state: ReadState): FileEffect[] {
  const effects: FileEffect[] = [];
  const add = (path: string | null | undefined, role: FileRole, change: string | null) => {
    const p = normalizePath(path ?? null);
    if (p && looksLikeFile(p) && p !== '/dev/null') effects.push({ path: p, role, change });
  };
  const written = (path: string) => (isKnown(state, path) ? 'edited' : 'created');
  // A script the agent runs rewrites the files its text writes (see `scriptWrites`).
  const runScript = (text: string, run: string, self: string | null) => {
    const targets = scriptWrites(text).filter((p) => self === null || !samePath(normalizePath(p) ?? p, self));
    const plain = targets.length === 1 ? PLAIN_REPLACE.exec(text) : null;
    const replaced =
      plain && /\w/.test(plain[2] ?? '')
        ? `: replaced "${clip(plain[2] ?? '', 60)}" with "${clip(plain[4] ?? '', 60)}"`
        : '';
    for (const p of targets) add(p, 'edited', `rewritten by \`${clip(run, 80)}\`${replaced}`);
  };
  for (const doc of heredocs(command)) {
    for (const step of shellSteps(doc.head)) {
      const words = programWords(step);
      const program = programName(words[0] ?? '');
      const into =
        step.redirects.find((r) => r.op !== '<')?.target ??
        (program === 'tee' ? words.slice(1).find((w) => !w.startsWith('-')) : undefined);
      // `cat > fix.py <<EOF`: a script for a later step or call; `python3 - <<EOF`: run here.
      const file = normalizePath(into ?? null);
      if (file && (program === 'cat' || program === 'tee')) rememberScript(state, file, doc.body);
      else if (SCRIPT_RUNNERS.has(program) && words.slice(1).every((w) => w.startsWith('-')))
        runScript(doc.body, `${words.join(' ')} <<EOF`, null);
      else continue;
      break;
    }
  }
  for (const step of steps) {
    const words = programWords(step);
    const program = programName(words[0] ?? '');
    const rest = words.slice(1);
    const args = rest.filter((w) => !w.startsWith('-'));
    for (const r of step.redirects) {
      if (r.op === '<') add(r.target, 'read', null);
      else
        add(r.target, r.op === '>>' ? 'edited' : written(r.target), `written by \`${commandLine(command)}\``);
    }
    if ((program === 'sed' || program === 'perl') && rest.some((w) => /^-[a-z]*i|^--in-place/.test(w))) {
      const script = rest.find((w) => !w.startsWith('-')) ?? '';
      for (const f of args.slice(1)) add(f, 'edited', clip(`${program} -i ${script}`, 120));
    } else if (program === 'rm') for (const f of args) add(f, 'deleted', null);
    else if (program === 'mv' && args.length === 2) {
      add(args[0], 'moved', `moved to ${args[1]}`);
      add(args[1], 'created', `moved from ${args[0]}`);
    } else if (program === 'cp' && args.length === 2)
      add(args[1], written(args[1] as string), `copied from ${args[0]}`);
    else if (program === 'touch')
      for (const f of args) add(f, isKnown(state, f) ? 'edited' : 'created', null);
    else if (program === 'tee')
      for (const f of args)
        add(f, rest.includes('-a') ? 'edited' : written(f), `written by \`${commandLine(command)}\``);
    else if (READERS.has(program))
      for (const f of args.slice(PATTERN_FIRST.has(program) ? 1 : 0)) add(f, 'read', null);
    else if (RUNNERS.has(program) || (words[0] ?? '').startsWith('./')) {
      if ((words[0] ?? '').startsWith('./')) add(words[0], 'ran', null);
      for (const f of args) if (!/^(?:run|test|build|-m)$/.test(f)) add(f.replace(/::.*$/, ''), 'ran', null);
      if (SCRIPT_RUNNERS.has(program)) {
        const inline = rest.findIndex((w) => w === '-c' || w === '-e' || w === '--eval');
        const code = inline >= 0 ? rest[inline + 1] : undefined;
        if (code !== undefined) runScript(code, `${words[0]} ${rest[inline]} …`, null);
        else
          for (const f of args) {
            const path = normalizePath(f);
            const script = [...state.scripts].find(([k]) => path !== null && samePath(k, path));
            if (path && script) runScript(script[1], `${words[0]} ${f}`, script[0]);
          }
      }
    }
  }
  // Patches: Codex's `*** Update File: x`, unified diffs' `+++ b/x` fed to `patch` or `git apply`.
  if (/apply_patch|\bpatch\b|git apply/.test(command)) {
    for (const m of command.matchAll(/^\*\*\* (Update|Add|Delete) File: (.+)$/gm))
      add(m[2]?.trim(), m[1] === 'Add' ? 'created' : m[1] === 'Delete' ? 'deleted' : 'edited', 'patched');
    for (const m of command.matchAll(/^\+\+\+ (?:b\/)?(\S+)/gm)) add(m[1], 'edited', 'patched');
  }
  return effects;
}

/** The command line shown in items: its first line without leading `cd dir &&`, clipped. */
function commandLine(command: string): string {
  const lines = withoutCdSteps(command).split('\n');
  return clip((lines[0] ?? '').trim(), 120) + (lines.length > 1 ? ' …' : '');
}

/** Lines of a result that say something: tags, shell prompts and SWE-agent's status lines left out. */
export function meaningfulLines(content: string): string[] {
  return content
    .split('\n')
    .map((l) => l.replace(/<\/?(?:returncode|output|tool_use_error)>/g, ' ').trim())
    .filter(
      (l) =>
        l !== '' &&
        !/^\d+$/.test(l) &&
        !/^\((?:Open file|Current directory):/.test(l) &&
        !/^(?:bash-)?\$$|^bash-\$/.test(l) &&
        !/^\[\.\.\. (?:clipped|pruned)/.test(l),
    );
}

/** A short result: a line that sums the run up (`12 passed`, `OK`), else the last line; null when there is none. */
function shortResult(content: string): string | null {
  const lines = meaningfulLines(content);
  if (lines.length === 0) return null;
  const sum = lines.findLast((l) =>
    /\b\d+ (?:passed|passing|failed|tests?|errors?|skipped|files? changed)\b|^OK\b|\bsuccess(?:ful(?:ly)?)?\b|\bdone\b/i.test(
      l,
    ),
  );
  return clip(sum ?? lines[lines.length - 1] ?? '', 100);
}

function todoItems(args: Record<string, unknown>): TodoItem[] | null {
  const list = Array.isArray(args.todos) ? args.todos : Array.isArray(args.task_list) ? args.task_list : null;
  if (list === null) return null;
  return list.flatMap((t): TodoItem[] => {
    if (!isRecord(t)) return [];
    const text = stringArg(t, ['content', 'title', 'text', 'description', 'task']);
    const status = String(t.status ?? 'pending').toLowerCase();
    if (text === null) return [];
    return [
      {
        text: clip(text, 200),
        status: /progress|doing|active|started/.test(status)
          ? 'inProgress'
          : /^(?:done|completed?|finished)$/.test(status)
            ? 'completed'
            : 'pending',
      },
    ];
  });
}

function questionsOf(args: Record<string, unknown>): string[] {
  if (Array.isArray(args.questions))
    return args.questions.flatMap((q) =>
      isRecord(q) && typeof q.question === 'string'
        ? [clip(q.question, 200)]
        : typeof q === 'string'
          ? [clip(q, 200)]
          : [],
    );
  const one = stringArg(args, ['question', 'prompt', 'message']);
  return one ? [clip(one, 200)] : [];
}

/** What the user said when rejecting a call (`... the user said:\n<words>`), or null. */
function rejectionWords(content: string): string | null {
  const words = /\bthe user said:\s*([\s\S]+)$/i.exec(content)?.[1]?.trim();
  return words ? clip(words.replace(/\s+/g, ' '), 300) : null;
}

/** The first string argument among `keys`, trimmed (blank ones skipped unless `blankOk`); else null. */
function stringArg(args: Record<string, unknown>, keys: string[], blankOk = false): string | null {
  for (const key of keys) {
    const value = args[key];
    if (typeof value === 'string' && (blankOk || value.trim())) return blankOk ? value : value.trim();
  }
  return null;
}

/** The file a call names (`path`, `file_path`, `filename`, ...), one line; else null. */
function pathArg(args: Record<string, unknown>): string | null {
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string' || !value.trim() || value.includes('\n')) continue;
    if (/^(?:path|file|file_?path|file_?name|filename|notebook_?path|target_?file)$/i.test(key))
      return value.trim();
  }
  return null;
}

/** A short detail of a call without a file: its description, query, url, ... */
function detail(args: Record<string, unknown>, name: string): string | null {
  const value =
    stringArg(args, ['description', 'query', 'pattern', 'url', 'prompt', 'skill', 'command']) ??
    Object.values(args).find((v): v is string => typeof v === 'string' && v.trim().length > 0) ??
    null;
  if (value?.trim() === name) return null;
  return value === null ? null : clip(firstLine(value), 100);
}

/** `./a/b.py` → `a/b.py`; quotes and a trailing `:12` line number taken off. */
export function normalizePath(path: string | null): string | null {
  if (path === null) return null;
  const p = path
    .trim()
    .replace(/^['"]|['"]$/g, '')
    .replace(/^\.\//, '')
    .replace(/:\d+(?::\d+)?$/, '');
  return p === '' ? null : p;
}

/** Whether two paths name the same file: equal, or one ends with `/` and the other. */
export function samePath(a: string, b: string): boolean {
  return a === b || a.endsWith(`/${b}`) || b.endsWith(`/${a}`);
}
