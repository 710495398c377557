/**
 * The checkpoint a diligent model writes for compactor's summary prompt: each field filled as the
 * system prompt's field definitions ask, from what the request holds and nothing else (the previous
 * checkpoint, the working set, the user's messages, the transcript), deterministically. The fake
 * Messages API answers `record_checkpoint` with it.
 *
 * The rules, field by field (each item with the seq of the message it comes from):
 * - goal: the previous goal, else the first request of `<user_messages>` (clipped).
 * - lastUserRequest: "" (compactor fills it).
 * - userInstructions: the previous ones, then each sentence of the user's messages that states a rule
 *   (`never`, `don't`, `always`, `must`, `avoid`, `instead`, `no ...`), verbatim; and the words a user
 *   gave when rejecting a call.
 * - currentWork: the last assistant message or tool call of the transcript, whichever is later (a call
 *   as what it did and how it ended); else the previous one.
 * - nextStep: the last user request when it comes after the agent's last stated intention; else that
 *   intention (`I'll ...`, `let me ...`, `next ...`) when no call after it ended ok (it is not done
 *   yet); else the previous next step. An intention that refers back instead of naming its object
 *   (`it`, `them`, `that method`, `these tests`, `the file`) carries the subject: the names of the
 *   sentence before it in the same message (backquoted spans, files, `snake_case`, `camelCase`,
 *   `f()`; only files for `the file`, `that script`), else what the call it led to works on (its
 *   command line or path): "Let me check that method: grep -n "_calc" core.py". currentWork needs no
 *   such rule: a message is kept whole (the sentence before included) and a call names itself.
 * - completed: the previous items, then in order every call that changed something and ended ok
 *   ("ran `cmd`: 12 passed", "edited a.py: replaced ..."), todo items marked done, and the agent's
 *   sentences reporting finished work ("fixed", "added", "passes") without a negation. A call that
 *   failed, was rejected or interrupted, or has no result is never there; read-only calls neither.
 * - inProgress: the previous items, calls without a result or interrupted by the user, todo items in
 *   progress. pending: the previous items, todo items not started. A todo item leaves the previous
 *   list it was in when the new todo list places it.
 * - errorsAndFixes / blockers: each failing call's first error line. The next call of the same
 *   family that ends ok (`pytest tests/a.py` then `pytest tests/a.py` or `pytest`; an edit of the
 *   same file) is its fix, with the files edited in between: the error goes to errorsAndFixes. An
 *   error without a fix is a blocker, unless a later failure of the same family replaced it (then it
 *   is in errorsAndFixes with fix null). A previous blocker (or fix-less error) whose command a call
 *   of the transcript ran ok moves to errorsAndFixes with that fix.
 * - decisions: the previous ones, the agent's sentences stating a choice (`instead of`, `rather
 *   than`, `decided`), questions the user answered (question → answer), calls the user rejected.
 * - openQuestions: the previous ones the user has not answered since, the agent's closing questions
 *   and question tools without an answer.
 * - discoveries: the previous ones, versions a command printed, the paths a search found (at most
 *   five), the agent's sentences about causes and locations (`the bug is`, `is defined in`).
 * - files: every file a call touched, with its strongest role (created, edited, deleted, moved, then
 *   ran, read), what changed and the seq of the call, then the working-set paths nothing touched
 *   (mentioned); merged with the previous files; written ones first, most recent first. A script the
 *   agent wrote (a here-document, an editor's create) and ran (`python fix.py` in the same command
 *   or a later call; also `python -c`, `node -e`, `python - <<EOF`) edited the files its text writes
 *   by literal path (`scriptWrites`), once that run ended ok: "rewritten by `python fix.py`", with
 *   what it replaced when it writes one file and holds a plain `.replace('old', 'new')`. A unified
 *   diff a call that ended ok printed (`git diff`, `cat fix.patch`, `diff -u`; not `git log`/`git
 *   show` history) shows each of its files edited (a created one stays created), whoever changed
 *   it, with its first removed and added lines (`diffChanges`) and the seq of the result; a file
 *   whose change a call of the transcript gave keeps that change and seq; a file's last diff wins;
 *   a file the diff deletes is left out.
 * - workingSet: files written that `<working_set>` does not show (usually none).
 * The answer stays under the stated token target (else 75% of `max_tokens`), the least useful items
 * going first: mentioned files, then the oldest completed items down to the newest five, read files,
 * old discoveries and decisions, ran files, files beyond ten, then the rest of those lists, fixed errors, in-progress,
 * pending, open questions, unfixed errors, the blockers and the written files last; never the goal,
 * the current work, the next step or the user's instructions. Pure.
 */

import { diffChanges } from '../../../shared/extractive/files.ts';
import { collapse } from '../../../shared/text/text.ts';
import {
  type CallOutcome,
  type FileRole,
  meaningfulLines,
  normalizePath,
  readCalls,
  samePath,
  type ToolCall,
} from './calls.ts';
import { readPrompt, type TranscriptMessage, type WrittenUserMessage } from './prompt-view.ts';
import { commandFamily, looksLikeFile } from './shell.ts';
import { clip, sentences } from './text.ts';

/** A list item: a fact and the seq of the message it comes from. */
export interface Entry {
  text: string;
  seq: number | null;
}

/** An error and what fixed it. */
export interface ErrorFixItem {
  error: string;
  fix: string | null;
  seq: number | null;
}

/** A file of the session. */
export interface FileItem {
  path: string;
  role: FileRole;
  change: string | null;
  seq: number | null;
}

/** The checkpoint the fake model writes (the tool's input, `analysis` aside). */
export interface ModelCheckpoint {
  goal: string;
  lastUserRequest: string;
  userInstructions: Entry[];
  currentWork: Entry | null;
  nextStep: Entry | null;
  completed: Entry[];
  inProgress: Entry[];
  pending: Entry[];
  blockers: Entry[];
  decisions: Entry[];
  openQuestions: Entry[];
  errorsAndFixes: ErrorFixItem[];
  discoveries: Entry[];
  files: FileItem[];
  workingSet: string[];
}

/** What the request says beyond its text. */
export interface DeriveOptions {
  /** The request's `max_tokens`: the target is 75% of it when the prompt states none. */
  maxTokens: number;
  /** Whether the tool's schema opens with `analysis` (then the answer fills it first). */
  analysis: boolean;
}

const RULE =
  /\b(?:don't|do not|never|always|must|mustn't|should not|shouldn't|avoid|make sure|no longer|instead)\b|^(?:no|only|stop)\b|\bwithout (?:changing|touching|modifying|editing|running|using)\b/i;
const INTENT =
  /\b(?:I(?:'ll| will| am going to|'m going to| need to| should)|let me|let's|let us|we(?:'ll| will| need to| should)|next,? I|now I|the next step is|next step:)\b/i;
const FINISHED =
  /\b(?:fixed|done|completed|implemented|added|created|updated|removed|resolved|refactored|renamed|wrote|installed|passes|passed|succeeded|succeeds|works now|now works|is working|finished)\b/i;
const NEGATED =
  /\b(?:still|not|no longer|never|fails?|failing|failed|cannot|won't)\b|n't\b|^(?:if|when|once|after|before|to|whether|now that|since)\b/i;
const DECISION =
  /\b(?:decided|decide to|I chose|we chose|chose to|opted|opt for|going with|instead of|rather than|I prefer|we prefer|the (?:best|simplest|safest|right) (?:approach|option|fix|way) is)\b/i;
const DISCOVERY =
  /\b(?:the (?:issue|problem|bug|cause|root cause|culprit) (?:is|was|lies|seems|comes)|root cause|turns out|I (?:found|see|notice|noticed|discovered) that|is defined in|is located in|lives in|is implemented in|is called from)\b/i;
/** Nouns a sentence points back with (`that method`, `these tests`, `the file`). */
const POINTED =
  '(?:method|function|class|file|module|package|test|line|error|exception|issue|bug|code|part|section|change|fix|call|command|script|variable|field|attribute|property|import|path|directory|folder|output|case|logic|implementation|definition|block|loop|condition|check|value|parameter|argument|config|setting|helper|handler|query|type|component|one)(?:e?s)?';
/** A sentence that refers back instead of naming its object: `it`, `them`, `that method`, `the tests`. */
const REFERS_BACK = new RegExp(
  `\\b(?:it|them)\\b|\\b(?:this|that|these|those|the same|the)\\s+(?:(?!the\\b|a\\b|an\\b)\\w+\\s+)?${POINTED}\\b`,
  'i',
);
const VERSION_COMMAND = /--version\b|\s-V\b|\bversion\b|\bpip3? show\b|\bnpm (?:ls|view)\b/;
const SEARCH_COMMAND = /^(?:find|fd|ls|grep -\w*l|rg -\w*l|rg --files|git ls-files)\b/;
/** Commands that print the history of commits, not the work tree's changes. */
const HISTORY_COMMAND = /\bgit\s+(?:-\S+\s+)*(?:log|show|whatchanged|reflog)\b/;
const WRITE_ROLES = new Set<FileRole>(['created', 'edited', 'deleted', 'moved']);
const ROLE_RANK: Record<FileRole, number> = {
  created: 6,
  edited: 5,
  deleted: 5,
  moved: 5,
  ran: 3,
  read: 2,
  mentioned: 1,
};

/** The sentences of each prose message of the transcript (see `sentences`). */
type Said = ReadonlyMap<TranscriptMessage, string[]>;

/** The checkpoint a model following the system prompt writes for `prompt` (the request's user turn). */
export function deriveCheckpoint(prompt: string, options: DeriveOptions): Record<string, unknown> {
  const view = readPrompt(prompt);
  const prev = previousOf(view.previous);
  const messages = view.transcript;
  const written: WrittenUserMessage[] =
    view.userMessages ??
    messages
      .filter((m) => m.role === 'user' && m.kind === 'message')
      .map((m) => ({ seq: m.seq, kind: 'request', content: m.content }));
  const calls = readCalls(
    messages,
    new Set(prev.files.filter((f) => f.role !== 'deleted').map((f) => f.path)),
  );
  const prose = messages.filter(
    (m) =>
      m.role === 'assistant' &&
      m.kind === 'message' &&
      m.content.trim() &&
      !m.content.startsWith('[thinking]'),
  );
  // Each prose message's sentences, split once for the passes below.
  const said: Said = new Map(prose.map((m) => [m, sentences(m.content)]));

  const errors = errorsOf(calls, prev);
  const todos = calls.findLast((c) => c.todos !== null && c.outcome !== 'rejected' && c.outcome !== 'failed');
  const todoTexts = new Set((todos?.todos ?? []).map((t) => t.text));
  const questions = questionsOf(prose, said, calls, written, prev);

  const checkpoint: ModelCheckpoint = {
    goal:
      prev.goal ||
      clip(written.find((m) => m.kind === 'request')?.content ?? '', 200) ||
      'Continue the session.',
    lastUserRequest: '',
    userInstructions: unique([...prev.userInstructions, ...rulesOf(written), ...rejectionWords(calls)]).slice(
      -100,
    ),
    currentWork: currentWorkOf(prose, calls) ?? prev.currentWork,
    nextStep: nextStepOf(prose, said, calls, written) ?? prev.nextStep,
    completed: unique([...prev.completed, ...newCompleted(prose, said, calls, todos)]).slice(-200),
    inProgress: unique([
      ...prev.inProgress.filter((e) => !todoTexts.has(e.text)),
      ...inProgressOf(calls, todos),
    ]).slice(-200),
    pending: unique([
      ...prev.pending.filter((e) => !todoTexts.has(e.text)),
      ...(todos?.todos ?? [])
        .filter((t) => t.status === 'pending')
        .map((t) => entry(t.text, todos?.call.seq)),
    ]).slice(-200),
    blockers: unique(errors.blockers).slice(-200),
    decisions: unique([...prev.decisions, ...questions.answered, ...decisionsOf(prose, said, calls)]).slice(
      -200,
    ),
    openQuestions: unique(questions.open).slice(-200),
    errorsAndFixes: errors.errorsAndFixes.slice(-100),
    discoveries: unique([...prev.discoveries, ...discoveriesOf(prose, said, calls)]).slice(-100),
    files: [],
    workingSet: [],
  };
  checkpoint.files = filesOf(calls, prev.files, view.workingSet, messages).slice(0, 200);
  checkpoint.workingSet = checkpoint.files
    .filter((f) => WRITE_ROLES.has(f.role) && !view.workingSet.some((w) => samePath(w, f.path)))
    .map((f) => f.path);

  const target = view.targetTokens ?? Math.floor(0.75 * options.maxTokens);
  fitTo(checkpoint, target);
  if (!options.analysis) return { ...checkpoint };
  const failed = calls.filter((c) => c.outcome === 'failed').length;
  const fixed = checkpoint.errorsAndFixes.filter((e) => e.fix !== null).length;
  // The model's working notes, as the schema asks: short, and discarded by compactor.
  const analysis =
    `Read ${messages.length} messages (${written.length} from the user, ${messages.filter((m) => m.kind === 'tool_result').length} tool results, ${calls.length} calls, ${failed} failed, ${fixed} errors fixed, ${checkpoint.blockers.length} blockers); ` +
    `merged with the previous checkpoint: ${Object.keys(view.previous).length > 0 ? 'yes' : 'none'}.`;
  return { analysis, ...checkpoint };
}

/** What a call did, as an item of completed work. */
function doneText(c: ToolCall): string {
  const writes = c.effects.filter((e) => WRITE_ROLES.has(e.role));
  const result = c.summary ? `: ${c.summary}` : '';
  if (c.command === null && writes.length > 0)
    return clip(writes.map((e) => `${e.role} ${e.path}${e.change ? `: ${e.change}` : ''}`).join('; '), 300);
  return clip(c.command !== null ? `ran ${c.label}${result}` : `${c.label}${result}`, 300);
}

/** How a call stands, for currentWork. */
function callState(c: ToolCall): string {
  const states: Record<CallOutcome, string> = {
    ok: c.readOnly ? (c.command !== null ? `ran ${c.label}` : c.label) : doneText(c),
    failed: `${c.label} failed: ${c.errorLine ?? ''}`,
    rejected: `${c.label}, rejected by the user`,
    interrupted: `${c.label}, interrupted by the user`,
    'no-result': `${c.label}, running (no result yet)`,
  };
  return clip(states[c.outcome], 300);
}

function newCompleted(
  prose: TranscriptMessage[],
  said: Said,
  calls: ToolCall[],
  todos: ToolCall | undefined,
): Entry[] {
  const found: Array<{ index: number; entry: Entry }> = [];
  for (const c of calls) {
    if (c.outcome !== 'ok' || c.readOnly || c.todos !== null || c.questions.length > 0) continue;
    found.push({ index: c.call.index, entry: entry(doneText(c), c.result?.seq ?? c.call.seq) });
  }
  for (const t of todos?.todos ?? [])
    if (t.status === 'completed')
      found.push({ index: todos?.call.index ?? 0, entry: entry(t.text, todos?.call.seq) });
  for (const m of prose) {
    for (const s of said.get(m) ?? []) {
      // A sentence ending in `:` introduces a list or a call; it reports nothing itself.
      if (isQuestion(s) || s.endsWith(':') || INTENT.test(s) || !FINISHED.test(s) || NEGATED.test(s))
        continue;
      found.push({ index: m.index, entry: entry(s, m.seq) });
    }
  }
  return found.sort((a, b) => a.index - b.index).map((f) => f.entry);
}

function inProgressOf(calls: ToolCall[], todos: ToolCall | undefined): Entry[] {
  const out: Entry[] = [];
  // A call left without a result is under way only at the end: one in the middle lost its result.
  const lastResult = calls.reduce((n, c) => Math.max(n, c.result?.index ?? -1), -1);
  for (const c of calls) {
    if (c.todos !== null || c.questions.length > 0) continue;
    if (c.outcome === 'no-result' && c.call.index > lastResult)
      out.push(entry(`${c.label}: started, no result yet`, c.call.seq));
    if (c.outcome === 'interrupted')
      out.push(entry(`${c.label}: interrupted by the user before it finished`, c.result?.seq ?? c.call.seq));
  }
  for (const t of todos?.todos ?? []) if (t.status === 'inProgress') out.push(entry(t.text, todos?.call.seq));
  return out;
}

/** Errors met, their fixes, and the blockers left: see the file's comment. */
function errorsOf(
  calls: ToolCall[],
  prev: ModelCheckpoint,
): { errorsAndFixes: ErrorFixItem[]; blockers: Entry[] } {
  const same = (c: ToolCall, family: { key: string; broad: string }) =>
    c.family.key === family.key || c.family.key === family.broad;
  const fixFor = (family: { key: string; broad: string }, after: number): string | null => {
    const fixer = calls.find((c) => c.call.index > after && c.outcome === 'ok' && same(c, family));
    if (!fixer) return null;
    const edited = calls
      .filter((c) => c.call.index > after && c.call.index < fixer.call.index && c.outcome === 'ok')
      .flatMap((c) => c.effects.filter((e) => WRITE_ROLES.has(e.role)).map((e) => e.path));
    const paths = [...new Set(edited)].slice(0, 3);
    return clip(`${paths.length > 0 ? `after editing ${paths.join(', ')}: ` : ''}${doneText(fixer)}`, 500);
  };
  const failures = calls.filter((c) => c.outcome === 'failed');
  const unfixedFamilies = new Map<string, ToolCall>();
  const fixes = new Map<ToolCall, string | null>();
  for (const f of failures) {
    const fix = fixFor(f.family, f.result?.index ?? f.call.index);
    fixes.set(f, fix);
    if (fix === null) unfixedFamilies.set(f.family.key, f);
  }
  const errorsAndFixes: ErrorFixItem[] = [];
  const fresh: Entry[] = [];
  const met: ErrorFixItem[] = [];
  for (const f of failures) {
    const seq = f.result?.seq ?? f.call.seq;
    const fix = fixes.get(f) ?? null;
    if (fix === null && unfixedFamilies.get(f.family.key) === f)
      fresh.push(entry(`${f.label} failed: ${f.errorLine ?? ''}`, seq));
    else met.push({ error: clip(`${f.label}: ${f.errorLine ?? 'failed'}`, 300), fix, seq });
  }
  // The previous blockers and fix-less errors: fixed now, replaced by a newer failure, or still open.
  for (const e of prev.errorsAndFixes) {
    const family = e.fix === null ? familyOfText(e.error) : null;
    errorsAndFixes.push(family ? { ...e, fix: fixFor(family, -1) } : e);
  }
  const blockers: Entry[] = [];
  for (const b of prev.blockers) {
    const family = familyOfText(b.text);
    const fix = family ? fixFor(family, -1) : null;
    const replaced = family !== null && unfixedFamilies.has(family.key);
    if (fix !== null || replaced) {
      // The same error again is the newer blocker, not a second item.
      if (fix !== null || !fresh.some((n) => n.text === b.text))
        errorsAndFixes.push({ error: b.text, fix, seq: b.seq });
    } else blockers.push(b);
  }
  errorsAndFixes.push(...met);
  blockers.push(...fresh);
  // One item per error text: the latest.
  const latest = new Map<string, ErrorFixItem>();
  for (const e of errorsAndFixes) {
    latest.delete(e.error);
    latest.set(e.error, e);
  }
  return { errorsAndFixes: [...latest.values()], blockers };
}

/** The family of the call an item names: its backquoted command, else its tool and file. */
function familyOfText(text: string): { key: string; broad: string } | null {
  const quoted = /`([^`]+)`/.exec(text)?.[1];
  if (quoted) return commandFamily(quoted.replace(/ …$/, ''));
  const named = /^(\S+)(?: \w+)? (\S*[/.]\S*)/.exec(text);
  if (!named) return null;
  const key = `${named[1]} ${normalizePath(named[2]?.replace(/:$/, '') ?? '')}`;
  return { key, broad: key };
}

function rulesOf(written: WrittenUserMessage[]): Entry[] {
  return written.flatMap((m) =>
    sentences(m.content)
      .filter((s) => RULE.test(s))
      .map((s) => entry(s, m.seq, 500)),
  );
}

function rejectionWords(calls: ToolCall[]): Entry[] {
  return calls.flatMap((c) =>
    c.rejectionWords ? [entry(c.rejectionWords, c.result?.seq ?? c.call.seq)] : [],
  );
}

function currentWorkOf(prose: TranscriptMessage[], calls: ToolCall[]): Entry | null {
  const said = prose.at(-1);
  const did = calls.at(-1);
  if (did && (!said || did.call.index > said.index)) return entry(callState(did), did.call.seq);
  return said ? entry(said.content, said.seq) : null;
}

function nextStepOf(
  prose: TranscriptMessage[],
  said: Said,
  calls: ToolCall[],
  written: WrittenUserMessage[],
): Entry | null {
  const stated = (m: TranscriptMessage) =>
    (said.get(m) ?? []).findLast((s) => INTENT.test(s) && !isQuestion(s));
  const intended = prose.findLast((m) => stated(m) !== undefined);
  const request = written.findLast((m) => m.kind === 'request');
  // What the agent was last told or said it would do; a call that ended ok after it is doing it:
  // then it is under way (or done), not next.
  if (request && (!intended || request.seq > intended.seq)) {
    if (calls.some((c) => c.outcome === 'ok' && c.call.seq > request.seq)) return null;
    return entry(sentences(request.content)[0] ?? request.content, request.seq);
  }
  if (!intended || calls.some((c) => c.outcome === 'ok' && c.call.index > intended.index)) return null;
  const sentence = stated(intended) ?? '';
  const before = said.get(intended)?.[(said.get(intended) ?? []).indexOf(sentence) - 1];
  const ledTo = calls.find((c) => c.call.index > intended.index);
  return entry(withSubject(sentence, before, ledTo), intended.seq);
}

/**
 * An intention that refers back (`Let me check that method:`) with the subject it points to: the
 * names of the sentence before it (`_calc`, core.py), else what the call it led to works on
 * (`grep -n "_calc" core.py`); as it is when it names its object or nothing supplies one.
 */
function withSubject(sentence: string, before: string | undefined, ledTo: ToolCall | undefined): string {
  const refers = REFERS_BACK.exec(sentence);
  if (!refers || namesOf(sentence).length > 0) return sentence;
  // `the file`, `that script` point to a file: only a file of the sentence before names it.
  const fileNoun = /\b(?:file|script|module|path|directory|folder)s?$/i.test(refers[0]);
  const named = (before === undefined ? [] : namesOf(before)).filter(
    (n) => !fileNoun || looksLikeFile(n.replace(/^`|`$/g, '')),
  );
  const subject = named.length > 0 ? named.join(', ') : (ledTo?.subject ?? null);
  return subject ? `${sentence.replace(/[\s:;,.!…-]+$/, '')}: ${clip(subject, 120)}` : sentence;
}

/** The things a sentence names: backquoted spans, files, identifiers (`snake_case`, `camelCase`, `f()`); at most three. */
function namesOf(sentence: string): string[] {
  const names: string[] = [];
  const rest = sentence.replace(/`([^`\n]{1,80})`/g, (quoted) => {
    names.push(quoted);
    return ' ';
  });
  for (const raw of rest.split(/\s+/)) {
    const word = raw.replace(/^[("'[]+|[)"',;:!?\].]+$/g, '');
    if (!word || /^[\d.]+$/.test(word) || /^(?:e\.g|i\.e|etc|vs)$/i.test(word)) continue;
    if (
      looksLikeFile(word) ||
      /^[A-Za-z_][\w.]*\(\)$/.test(word) ||
      /^_*[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$|^_\w+$/.test(word) ||
      /^[a-z]+[A-Z]\w*$|^[A-Z][a-z0-9]+[A-Z]\w*$/.test(word)
    )
      names.push(word);
  }
  return [...new Set(names)].slice(0, 3);
}

function questionsOf(
  prose: TranscriptMessage[],
  said: Said,
  calls: ToolCall[],
  written: WrittenUserMessage[],
  prev: ModelCheckpoint,
): { open: Entry[]; answered: Entry[] } {
  const open: Entry[] = [];
  const answered: Entry[] = [];
  const answerAfter = (seq: number | null) => written.find((m) => seq === null || m.seq > seq);
  const settle = (question: string, seq: number | null, after: number | null) => {
    const answer = answerAfter(after);
    if (answer) answered.push(entry(`${question} → ${clip(answer.content, 150)}`, answer.seq));
    else open.push(entry(question, seq));
  };
  // A previous question is answered by the first user message of the transcript.
  for (const q of prev.openQuestions) settle(q.text, q.seq, null);
  for (const m of prose) {
    const last = said.get(m)?.at(-1);
    if (last && isQuestion(last)) settle(last, m.seq, m.seq);
  }
  for (const c of calls) {
    for (const q of c.questions) {
      if (c.outcome === 'ok')
        answered.push(entry(`${q} → ${c.summary ?? 'answered'}`, c.result?.seq ?? c.call.seq));
      else if (c.outcome === 'no-result') settle(q, c.call.seq, c.call.seq);
    }
  }
  return { open, answered };
}

function decisionsOf(prose: TranscriptMessage[], said: Said, calls: ToolCall[]): Entry[] {
  const found: Array<{ index: number; entry: Entry }> = [];
  for (const m of prose)
    for (const s of said.get(m) ?? [])
      if (DECISION.test(s) && !isQuestion(s) && !s.endsWith(':'))
        found.push({ index: m.index, entry: entry(s, m.seq) });
  for (const c of calls)
    if (c.outcome === 'rejected')
      found.push({
        index: c.call.index,
        entry: entry(`the user rejected ${c.label}`, c.result?.seq ?? c.call.seq),
      });
  return found.sort((a, b) => a.index - b.index).map((f) => f.entry);
}

function discoveriesOf(prose: TranscriptMessage[], said: Said, calls: ToolCall[]): Entry[] {
  const found: Array<{ index: number; entry: Entry }> = [];
  for (const c of calls) {
    if (c.outcome !== 'ok' || !c.result) continue;
    const lines = meaningfulLines(c.result.content);
    const seq = c.result.seq;
    if (c.command !== null && VERSION_COMMAND.test(c.command)) {
      const line = lines.find((l) => /\d+\.\d+/.test(l));
      if (line) found.push({ index: c.call.index, entry: entry(`${c.label}: ${line}`, seq) });
      continue;
    }
    const searched =
      c.command !== null ? SEARCH_COMMAND.test(c.label.replace(/^`/, '')) : /find|glob|search/i.test(c.name);
    if (!c.readOnly || !searched) continue;
    const paths = lines.filter((l) => !/^Found \d+ match|^No matches/i.test(l));
    if (paths.length >= 1 && paths.length <= 5 && paths.every((p) => /^\S+$/.test(p) && /[/.]/.test(p)))
      found.push({ index: c.call.index, entry: entry(`${c.label} found ${paths.join(', ')}`, seq) });
  }
  for (const m of prose)
    for (const s of said.get(m) ?? [])
      if (
        DISCOVERY.test(s) &&
        !isQuestion(s) &&
        !s.endsWith(':') &&
        !INTENT.test(s) &&
        !(FINISHED.test(s) && !NEGATED.test(s))
      )
        found.push({ index: m.index, entry: entry(s, m.seq) });
  return found.sort((a, b) => a.index - b.index).map((f) => f.entry);
}

/** The files: see the file's comment. */
function filesOf(
  calls: ToolCall[],
  previous: FileItem[],
  workingSet: string[],
  messages: TranscriptMessage[],
): FileItem[] {
  // `fresh`: a call of the transcript said what changed in it; `shown`: the last diff printed of it.
  const byPath = new Map<
    string,
    FileItem & { changes: string[]; order: number; fresh: boolean; shown: string | null }
  >();
  // The working set's spelling of a path when it is the same or a longer (more precise) one.
  const canonical = (path: string) =>
    workingSet.find((w) => w === path) ?? workingSet.find((w) => w.endsWith(`/${path}`)) ?? path;
  let order = 0;
  // The same file spelt two ways (`reproduce.py`, `/repo/reproduce.py`): one item.
  const keyOf = (path: string) => {
    const matches = [...byPath.keys()].filter((k) => samePath(k, path));
    return matches.length === 1 ? (matches[0] as string) : path;
  };
  const put = (item: FileItem, change: string | null, fresh = false) => {
    let path = canonical(item.path);
    const key = keyOf(path);
    const had = byPath.get(key);
    // The longer name stays.
    if (had && key.length < path.length) byPath.delete(key);
    else path = key;
    order += 1;
    if (!had) {
      byPath.set(path, {
        ...item,
        path,
        changes: change ? [change] : [],
        order,
        fresh: fresh && !!change,
        shown: null,
      });
      return;
    }
    const stronger = ROLE_RANK[item.role] >= ROLE_RANK[had.role] || WRITE_ROLES.has(item.role);
    // A file created here and edited later is still a created one.
    const role =
      had.role === 'created' && item.role === 'edited' ? 'created' : stronger ? item.role : had.role;
    const changes = change ? [...had.changes, change] : had.changes;
    byPath.set(path, {
      ...had,
      path,
      role,
      changes,
      seq: stronger ? item.seq : had.seq,
      order: stronger ? order : had.order,
      fresh: had.fresh || (fresh && !!change),
    });
  };
  // Oldest first, so the newest is put last (the previous list is most recent first within a group).
  for (const f of [...previous].reverse()) put(f, f.change);
  for (const c of calls) {
    for (const e of c.effects)
      put({ path: e.path, role: e.role, change: null, seq: c.call.seq }, e.change, true);
    // A diff the call printed (`git diff`, `cat fix.patch`, `diff -u`) shows each file's change,
    // whoever made it; a file whose change a call of the transcript gave keeps that change and seq.
    // The last diff of a file wins.
    if (c.outcome !== 'ok' || !c.result || (c.command !== null && HISTORY_COMMAND.test(c.command))) continue;
    for (const [path, change] of diffChanges(c.result.content)) {
      if (byPath.get(keyOf(canonical(path)))?.fresh) continue;
      put({ path, role: 'edited', change: null, seq: c.result.seq }, null);
      const shown = byPath.get(keyOf(canonical(path)));
      if (shown) shown.shown = change;
    }
  }
  for (const path of workingSet) {
    if ([...byPath.keys()].some((k) => samePath(k, path))) continue;
    const last = messages.findLast((m) => m.content.includes(path));
    put({ path, role: 'mentioned', change: null, seq: last?.seq ?? null }, null);
  }
  const items = [...byPath.values()].map((f) => ({
    item: {
      path: clip(f.path, 300),
      role: f.role,
      change:
        f.shown !== null && !f.fresh
          ? clip(f.shown, 500)
          : f.changes.length === 0
            ? null
            : clip(
                f.changes.length === 1
                  ? (f.changes[0] ?? '')
                  : `${f.changes.length} changes, last: ${f.changes.at(-1)}`,
                500,
              ),
      seq: f.seq,
    },
    order: f.order,
  }));
  const group = (r: FileRole) => (WRITE_ROLES.has(r) ? 0 : r === 'ran' ? 1 : r === 'read' ? 2 : 3);
  return items
    .sort((a, b) => group(a.item.role) - group(b.item.role) || b.order - a.order)
    .map((i) => i.item);
}

/** Drops the least useful items until the answer fits `target` tokens (about 4 characters each). */
function fitTo(c: ModelCheckpoint, target: number): void {
  // The answer's JSON length, measured once: a dropped item takes its own JSON and, unless it was
  // the list's only item, one comma with it.
  let length = JSON.stringify(c).length;
  const drop = <T>(items: T[], i: number) => {
    if (i < 0) return false;
    length -= JSON.stringify(items[i]).length + (items.length > 1 ? 1 : 0);
    items.splice(i, 1);
    return true;
  };
  const dropLast = <T>(items: T[], which: (t: T) => boolean = () => true) =>
    drop(items, items.findLastIndex(which));
  const dropFirst = <T>(items: T[], which: (t: T) => boolean = () => true) =>
    drop(items, items.findIndex(which));
  // Old completed work goes first, down to the newest five; then the other lists' old items likewise;
  // then the rest, the blockers and the written files last.
  const keep = <T>(items: T[], n: number) => (items.length > n ? dropFirst(items) : false);
  const order: Array<() => boolean> = [
    () => dropLast(c.files, (f) => f.role === 'mentioned'),
    () => keep(c.completed, 5),
    () => dropLast(c.files, (f) => f.role === 'read'),
    () => keep(c.discoveries, 3),
    () => keep(c.decisions, 3),
    () => dropFirst(c.errorsAndFixes, (e) => e.fix !== null && c.errorsAndFixes.length > 3),
    () => dropLast(c.files, (f) => f.role === 'ran'),
    () => dropLast(c.files, () => c.files.length > 10),
    () => dropFirst(c.completed),
    () => dropFirst(c.discoveries),
    () => dropFirst(c.decisions),
    () => dropFirst(c.errorsAndFixes, (e) => e.fix !== null),
    () => dropFirst(c.inProgress),
    () => dropFirst(c.pending),
    () => dropFirst(c.openQuestions),
    () => dropFirst(c.errorsAndFixes),
    () => dropLast(c.files, (f) => !WRITE_ROLES.has(f.role) || c.files.length > 5),
    () => dropFirst(c.blockers),
    () => dropLast(c.files),
  ];
  while (Math.ceil(length / 4) > target) if (!order.some((next) => next())) break;
}

/** The previous checkpoint in the current shape: older string items get seq null, broken items are left out. */
function previousOf(raw: Record<string, unknown>): ModelCheckpoint {
  const list = (value: unknown): Entry[] =>
    Array.isArray(value)
      ? value.flatMap((v): Entry[] => {
          if (typeof v === 'string') return v ? [{ text: v, seq: null }] : [];
          if (typeof v === 'object' && v !== null && typeof v.text === 'string' && v.text)
            return [{ text: v.text, seq: typeof v.seq === 'number' ? v.seq : null }];
          return [];
        })
      : [];
  const one = (value: unknown): Entry | null => list([value])[0] ?? null;
  const records = (value: unknown): Array<Record<string, unknown>> =>
    Array.isArray(value) ? value.filter((v) => typeof v === 'object' && v !== null) : [];
  const seqOf = (v: unknown) => (typeof v === 'number' ? v : null);
  return {
    goal: typeof raw.goal === 'string' ? raw.goal : '',
    lastUserRequest: '',
    userInstructions: list(raw.userInstructions),
    currentWork: one(raw.currentWork),
    nextStep: one(raw.nextStep),
    completed: list(raw.completed),
    inProgress: list(raw.inProgress),
    pending: list(raw.pending),
    blockers: list(raw.blockers),
    decisions: list(raw.decisions),
    openQuestions: list(raw.openQuestions),
    errorsAndFixes: records(raw.errorsAndFixes).flatMap((e) =>
      typeof e.error === 'string' && e.error
        ? [{ error: e.error, fix: typeof e.fix === 'string' && e.fix ? e.fix : null, seq: seqOf(e.seq) }]
        : [],
    ),
    discoveries: list(raw.discoveries),
    files: records(raw.files).flatMap((f) =>
      typeof f.path === 'string' && f.path && typeof f.role === 'string' && f.role in ROLE_RANK
        ? [
            {
              path: f.path,
              role: f.role as FileRole,
              change: typeof f.change === 'string' && f.change ? f.change : null,
              seq: seqOf(f.seq),
            },
          ]
        : [],
    ),
    workingSet: [],
  };
}

function entry(text: string, seq: number | null | undefined, max = 300): Entry {
  return { text: clip(text, max), seq: seq ?? null };
}

/** Items with a text seen before left out (the first one stays). */
function unique(items: Entry[]): Entry[] {
  const seen = new Set<string>();
  return items.filter((e) => {
    const key = collapse(e.text);
    if (!key || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function isQuestion(sentence: string): boolean {
  return /\?["')\]]*$/.test(sentence.trim());
}
