/**
 * The fidelity check: how much of what the leaving messages held a summary kept, scored before the
 * summary is committed, and what it lost. Deterministic and pure (no I/O, no clock, no LLM).
 *
 * It reads the leaving messages once, a page at a time ({@link LeavingFacts.observe}), keeping
 * only bounded facts (the paths, the last user request, the user's instructions, the commands, the
 * failing tool results' first error lines, each list capped), so a long history never sits in
 * memory for it. It then looks for each fact in the summary as the agent will read it: the
 * rendered checkpoint text plus the checkpoint's `workingSet` (all of it, not only the 20 paths the
 * text shows) and `lastUserRequest`. It never looks at the checkpoint's other fields by name, so
 * it keeps working when fields are added.
 *
 * The score is a weighted mean of five parts, each `kept / total` ({@link FIDELITY_WEIGHTS}); a
 * part with nothing to keep (total 0) is left out and the others' weights scaled up; with no part
 * at all the score is 1.
 *
 * - paths: the working set of the leaving messages (shared/working-set), each found in the
 *   checkpoint's `workingSet` or verbatim in its text;
 * - lastRequest: the last user request of the leaving messages, kept verbatim (whitespace aside) in
 *   the checkpoint, or "live" (a later user turn stays in the kept tail, so the agent sees a newer
 *   request anyway);
 * - instructions: sentences of the user's own messages (not a harness's notices under the user
 *   role, nor a message that reads as a prompt injection) that state a rule or a correction
 *   ({@link instructionSentences}),
 *   each found in the checkpoint text ({@link foundIn});
 * - openError: the first error line of the last failing tool result when no later tool result
 *   succeeded ({@link errorLineOf}), found in the checkpoint text;
 * - pinned: the pinned messages at or below the cutoff that stay live (a pinned message never
 *   leaves: the planner keeps it; the part guards that invariant).
 */
import type { Message, MessageMeta } from '../contract/message.ts';
import { storableText } from '../contract/unicode.ts';
import { keepsRequest } from '../summary/last-request.ts';
import { isUserWords } from '../text/user-messages.ts';
import { userMessageReadsAsInjection } from '../trust/relayed.ts';
import { extractWorkingSet } from '../working-set/working-set.ts';

/** Weights of the parts; they sum to 1. */
export const FIDELITY_WEIGHTS = {
  paths: 0.3,
  lastRequest: 0.2,
  instructions: 0.25,
  openError: 0.15,
  pinned: 0.1,
} as const;

export type FidelityPartName = keyof typeof FIDELITY_WEIGHTS;

/** One part: how many facts there were to keep, and how many the summary kept. */
export interface FidelityPart {
  total: number;
  kept: number;
}

export type FidelityParts = Record<FidelityPartName, FidelityPart>;

/** What the leaving messages held that the summary does not, capped and sanitized. */
export interface Lost {
  paths: string[];
  commands: string[];
  errors: string[];
  instructions: string[];
  /** Items of each kind left out by the cap ({@link LOST_ITEMS}). */
  omitted: number;
}

/** A summary's fidelity: the score in [0, 1], its parts, and what was lost. */
export interface FidelityCheck {
  score: number;
  parts: FidelityParts;
  lost: Lost;
}

/** The summary as the check reads it. */
export interface SummaryUnderCheck {
  /** The rendered checkpoint text (`renderCheckpoint`). */
  text: string;
  workingSet: readonly string[];
  lastUserRequest: string;
}

/** What the plan decided, from the snapshot's metadata: the part of the check that is not in the pages. */
export interface PlanFacts {
  /** Pinned messages at or below the cutoff, and how many of them stay live. */
  pinned: FidelityPart;
  /** Whether a user turn stays in the kept tail (the agent still sees a newer request). */
  laterUserTurnLive: boolean;
}

/** Most items {@link Lost} holds, all kinds together. */
export const LOST_ITEMS = 50;
/** Longest item of {@link Lost}, in characters (`…` included). */
export const LOST_ITEM_CHARS = 300;

/** Bounds of what {@link LeavingFacts} holds: a long history keeps its most recent facts. */
const MAX_PATHS = 5_000;
const MAX_INSTRUCTIONS = 200;
const MAX_COMMANDS = 500;
const MAX_ERRORS = 200;
/** A user "sentence" longer than this is pasted text (a log, a spec), not a rule. */
const MAX_SENTENCE_CHARS = 300;

/**
 * The facts of the leaving messages the check needs, gathered a page at a time. Memory is bounded
 * by the caps above whatever the history's length: each list keeps its most recent entries.
 */
export class LeavingFacts {
  /** Path → order of its latest mention. */
  readonly paths = new Map<string, number>();
  /** The user's last request (harness and slash-command messages skipped), with its seq. */
  lastRequest: { seq: number; content: string } | null = null;
  readonly instructions = new Map<string, string>();
  readonly commands = new Map<string, string>();
  readonly errors = new Map<string, string>();
  /** The first error line of the last failing tool result, unless a later one succeeded. */
  openError: string | null = null;
  /** Messages observed. */
  messages = 0;
  private order = 0;

  /** Takes in one page of leaving messages (ascending seq, continuing the previous page). */
  observe(page: readonly Message[]): void {
    for (const path of extractWorkingSet([...page]).reverse()) {
      this.paths.delete(path);
      this.paths.set(path, this.order++);
      dropOldest(this.paths, MAX_PATHS);
    }
    for (const message of page) {
      this.messages++;
      if (typeof message.content !== 'string') continue;
      // A harness's notice under the user role ("DO NOT re-run the same failed edit command.") is
      // neither the user's request nor the user's rule (shared/text/user-messages.ts).
      if (isUserTurn(message) && isUserWords(message)) {
        if (message.content.trim()) this.lastRequest = { seq: message.seq, content: message.content };
        // A message that reads as a prompt injection states no rule a summary may keep
        // (shared/summary/guard.ts): expecting its sentences would fail the summaries that are right.
        // (Read for an injection only when it states a rule: most messages state none.)
        const sentences = instructionSentences(message.content);
        const rules = sentences.length > 0 && userMessageReadsAsInjection(message.content) ? [] : sentences;
        for (const sentence of rules)
          remember(this.instructions, normalize(sentence), sentence, MAX_INSTRUCTIONS);
      }
      for (const command of commandsOf(message)) remember(this.commands, command, command, MAX_COMMANDS);
      if (isToolResult(message)) {
        const verdict = toolResultVerdict(message);
        if (verdict.status === 'failed') {
          this.openError = verdict.line;
          remember(this.errors, normalize(verdict.line), verdict.line, MAX_ERRORS);
        } else if (verdict.status === 'succeeded') {
          this.openError = null;
        }
      }
    }
  }
}

/** The facts of `messages` in one call (tests, a summary that has them whole). */
export function factsOf(messages: readonly Message[]): LeavingFacts {
  const facts = new LeavingFacts();
  facts.observe(messages);
  return facts;
}

/** The plan's side of the check, from the snapshot's metadata. */
export function planFactsOf(
  messages: readonly MessageMeta[],
  plan: { cutoffSeq: number; leavingSeqs: readonly number[] },
): PlanFacts {
  const leaving = new Set(plan.leavingSeqs);
  let total = 0;
  let kept = 0;
  let laterUserTurnLive = false;
  for (const m of messages) {
    if (m.seq <= plan.cutoffSeq) {
      if (!m.pinned) continue;
      total++;
      if (!leaving.has(m.seq)) kept++;
    } else if (m.role === 'user' && m.kind === 'message') {
      laterUserTurnLive = true;
    }
  }
  return { pinned: { total, kept }, laterUserTurnLive };
}

/** Scores `summary` against the leaving messages' facts; see the module's comment for the parts. */
export function checkFidelity(
  facts: LeavingFacts,
  summary: SummaryUnderCheck,
  kept: PlanFacts,
): FidelityCheck {
  const index = indexOf(summary.text);
  const workingSet = new Set(summary.workingSet);

  const paths = [...facts.paths.entries()].sort((a, b) => b[1] - a[1]).map(([path]) => path);
  const lostPaths = paths.filter((p) => !workingSet.has(p) && !summary.text.includes(p));

  const request = facts.lastRequest;
  const requestKept =
    request !== null &&
    (kept.laterUserTurnLive ||
      keepsRequest(summary.lastUserRequest, request) ||
      keepsRequest(summary.text, request));

  const instructions = [...facts.instructions.values()].reverse();
  const lostInstructions = instructions.filter((s) => !foundIn(s, index));
  const open = facts.openError;
  const openKept = open !== null && foundIn(open, index);

  const parts: FidelityParts = {
    paths: { total: paths.length, kept: paths.length - lostPaths.length },
    lastRequest: { total: request === null ? 0 : 1, kept: requestKept ? 1 : 0 },
    instructions: { total: instructions.length, kept: instructions.length - lostInstructions.length },
    openError: { total: open === null ? 0 : 1, kept: openKept ? 1 : 0 },
    pinned: { ...kept.pinned },
  };

  const lostErrors = [...facts.errors.values()].reverse().filter((e) => !foundIn(e, index));
  const lostCommands = [...facts.commands.values()].reverse().filter((c) => !foundIn(c, index));
  return {
    score: scoreOf(parts),
    parts,
    lost: capLost({
      instructions: lostInstructions,
      errors: lostErrors,
      paths: lostPaths,
      commands: lostCommands,
    }),
  };
}

/** The weighted mean of the parts that have something to keep; 1 when none has. */
export function scoreOf(parts: FidelityParts): number {
  let weight = 0;
  let sum = 0;
  for (const [name, w] of Object.entries(FIDELITY_WEIGHTS) as Array<[FidelityPartName, number]>) {
    const { total, kept } = parts[name];
    if (total <= 0) continue;
    weight += w;
    sum += (w * Math.min(kept, total)) / total;
  }
  return weight === 0 ? 1 : Math.round((sum / weight) * 1_000) / 1_000;
}

/** The parts as one line for a ledger reason: `paths 3/10, lastRequest 1/1, ...` (parts with something to keep). */
export function describeParts(parts: FidelityParts): string {
  const shown = (Object.keys(FIDELITY_WEIGHTS) as FidelityPartName[])
    .filter((name) => parts[name].total > 0)
    .map((name) => `${name} ${parts[name].kept}/${parts[name].total}`);
  return shown.length === 0 ? 'nothing to keep' : shown.join(', ');
}

// ---------------------------------------------------------------------------------------------
// User instructions

/** Words a sentence may start with before its rule: `Please`, `Also,`, `Important:` ... */
const LEAD =
  /^(?:(?:please|pls|and|also|but|so|ok|okay|oh|again|just|actually|important|note|nb|remember|reminder|fyi|hey)\b[\s,:;!–—-]*)+/i;
/** A sentence that starts with a rule: `don't …`, `never …`, `always …`, `no code changes`, `make sure …`. */
const RULE_START =
  /^(?:don'?t|do not|never|always|stop|avoid|make sure|ensure|you must|must|you should(?:n'?t| not| never)?|you need to|you have to|no\s+(?!problem|worries|thanks|idea|way|need|,)[\p{L}\p{N}_-]+)\b/iu;
/** A sentence that starts with a correction: `No, use …`, `Wrong: …`, `That's not what I asked`. */
const CORRECTION_START =
  /^(?:(?:no|nope)\s*[,.:;!–—-]\s*(?!thanks|thank|problem|worries)\S|(?:wrong|incorrect|that'?s (?:wrong|not (?:right|it|what))|that is (?:wrong|not (?:right|it|what))|not what i)\b)/iu;
/** Anywhere in a sentence: a standing rule (`from now on`, `use … instead`) or a negated imperative (`never run …`). */
const RULE_ANYWHERE = [
  /\b(?:from now on|going forward|under no circumstances|at all times)\b/i,
  /^(?:(?:please|just)\s+)?use\b.*\binstead\b/i,
  /\b(?:never|always|don'?t|do not)\s+(?:use|touch|run|change|modify|edit|delete|remove|commit|push|add|create|write|call|import|install|git|rename|move|merge|rebase|force|mock|skip|disable)\b/i,
  /\byou (?:must|should|need to|have to)(?: not| never)?\b/i,
];

/**
 * The sentences of a user turn that state a rule or a correction. The rules, independent of any
 * summarizer: the text outside ``` fences is split into lines and sentences (`.`, `!`, `?` before
 * a space); list markers and quotes are dropped; sentences of 6 to 300 characters are kept when,
 * after lead words such as `please`, `also`, `important:`, they start with a rule (`don't`, `do
 * not`, `never`, `always`, `stop`, `avoid`, `make sure`, `ensure`, `must`, `you should`, `no
 * <noun>`) or a correction (`no, …`, `wrong`, `that's not what …`), or hold a standing rule
 * anywhere (`from now on`, `under no circumstances`, `use … instead`, `you must`, a negated imperative such as
 * `never run …`, `do not git add …`).
 */
export function instructionSentences(text: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const rawLine of text.split('\n')) {
    if (/^\s*(?:```|~~~)/.test(rawLine)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const line = rawLine.replace(/^\s*(?:[-*+>]|\d+[.)])\s+/, '').trim();
    if (!line) continue;
    for (const piece of line.split(/(?<=\S[.!?])\s+/)) {
      const sentence = withoutQuotes(piece.trim());
      if (sentence.length < 6 || sentence.length > MAX_SENTENCE_CHARS) continue;
      if (isInstruction(sentence)) out.push(sentence);
    }
  }
  return out;
}

/** Quotes a sentence may open with, and close with. */
const OPENING_QUOTES = new Set(['"', "'", '“', '‘', '`']);
const CLOSING_QUOTES = new Set(['"', "'", '”', '’', '`']);

/**
 * `text` without the quotes it opens and closes with: what `.replace(/^["'“‘`]+|["'”’`]+$/g, '')`
 * gives, with loops (that pattern read a run of quotes inside a line again from each of its
 * positions). The closing run is taken only after the opening one.
 */
function withoutQuotes(text: string): string {
  let start = 0;
  while (start < text.length && OPENING_QUOTES.has(text.charAt(start))) start++;
  return trimEndWhere(text.slice(start), (c) => CLOSING_QUOTES.has(c));
}

function isInstruction(sentence: string): boolean {
  const s = sentence.replace(/[’‘]/g, "'");
  const body = s.replace(LEAD, '');
  if (RULE_START.test(body) || CORRECTION_START.test(body)) return true;
  return RULE_ANYWHERE.some((rule) => rule.test(s));
}

// ---------------------------------------------------------------------------------------------
// Tool results, errors and commands

/** Tools whose results are content read (files, searches, pages), neither success nor failure. */
const READ_TOOLS = /^(?:read|view|cat|open|grep|glob|ls|search|find|webfetch|websearch|fetch|notebookread)/i;

const EXIT_CODE = [
  /<returncode>\s*(-?\d+)\s*<\/returncode>/,
  /\bexit(?:ed with)? (?:code|status)[:\s]+(-?\d+)/i,
  /\breturned non-zero exit status (\d+)/,
];

/** Error lines, first match wins within a line; checked line by line from the top. */
const ERROR_LINES = [
  /(?<![\w.])[A-Za-z_][\w.]*(?:Error|Exception):\s*\S/,
  /^(?:[\w./\\-]+:\d+(?::\d+)?:\s*)?(?:fatal\s+)?error\b(?:\[[\w-]+\])?\s*[:\]]/i,
  /\berror TS\d+:/,
  /^(?:FAILED|FAIL)\b|^--- FAIL:/,
  /^(?:fatal|panic):/i,
  /command not found|No such file or directory|Permission denied|Segmentation fault/,
  /^npm ERR!|Cannot find module/,
  /<tool_use_error>/,
];

/** How a tool result ended, as far as its text says. */
type Verdict = { status: 'failed'; line: string } | { status: 'succeeded' } | { status: 'neutral' };

function toolResultVerdict(message: Message): Verdict {
  if (message.toolName && READ_TOOLS.test(message.toolName)) return { status: 'neutral' };
  const line = errorLineOf(message.content);
  return line === null ? { status: 'succeeded' } : { status: 'failed', line };
}

/**
 * The first error line of a tool result, or null when it succeeded. A stated exit code 0 is
 * success; otherwise the first line (of the first 200 and the last 50) matching an error pattern
 * (`XError: …`, `error: …`, `error TS…`, `FAILED`, `fatal:`, `command not found`, `No such file or
 * directory`, `npm ERR!`, `<tool_use_error>`), else `exit code N` for a stated non-zero code.
 */
export function errorLineOf(content: string): string | null {
  const edges = content.length <= 2_000 ? content : `${content.slice(0, 1_000)}\n${content.slice(-1_000)}`;
  let code: number | null = null;
  for (const pattern of EXIT_CODE) {
    const match = pattern.exec(edges);
    if (match?.[1] !== undefined) {
      code = Number(match[1]);
      break;
    }
  }
  if (code === 0) return null;
  const lines = content.split('\n');
  const looked = lines.length <= 250 ? lines : [...lines.slice(0, 200), ...lines.slice(-50)];
  for (const raw of looked) {
    const line = raw
      .slice(0, 1_000)
      .replace(/<\/?tool_use_error>/g, '')
      .trim();
    if (line && ERROR_LINES.some((p) => p.test(raw.slice(0, 1_000)))) return clip(line);
  }
  return code === null ? null : `exit code ${code}`;
}

/** Shell commands a message ran: a tool call's `command`/`cmd` argument, an assistant's ```bash block. First line each. */
function commandsOf(message: Message): string[] {
  const out: string[] = [];
  if (message.kind === 'tool_call' && message.content.startsWith('{')) {
    try {
      const call = JSON.parse(message.content) as { arguments?: unknown; input?: unknown };
      let args = call.arguments ?? call.input;
      if (typeof args === 'string') args = JSON.parse(args);
      if (args && typeof args === 'object') {
        const { command, cmd } = args as Record<string, unknown>;
        const text = typeof command === 'string' ? command : typeof cmd === 'string' ? cmd : null;
        if (text) out.push(text);
      }
    } catch {
      // Not a JSON call: no command.
    }
  } else if (message.role === 'assistant' && message.content.includes('```')) {
    for (const match of message.content.matchAll(/```(?:bash|sh|shell|console)\n([\s\S]*?)```/g)) {
      if (match[1]) out.push(match[1]);
    }
  }
  return out
    .map((c) => (c.split('\n').find((l) => l.trim()) ?? '').trim())
    .filter((c) => c.length > 0)
    .map(clip);
}

function isUserTurn(message: Message): boolean {
  return message.role === 'user' && message.kind === 'message';
}

function isToolResult(message: Message): boolean {
  return message.kind === 'tool_result' || message.role === 'tool';
}

// ---------------------------------------------------------------------------------------------
// Finding a fact in the summary

/** Words that carry no meaning of their own when matching a sentence. */
const STOPWORDS = new Set(
  'the and for with this that you your are was were has have had but not its into from then than there these those they them will would could should can our out all any some just please also use'.split(
    ' ',
  ),
);
/** Negations: a rule found without its negation says the opposite. */
const NEGATIONS = /\b(?:not|never|no|don't|dont|avoid|stop|without|nothing|none)\b/;

interface SummaryIndex {
  /** The text, normalized ({@link normalize}). */
  readonly full: string;
  /** Each line's normalized text and words. */
  readonly lines: Array<{ text: string; words: Set<string> }>;
}

/**
 * The index of a summary's text, each part built on first use: a summary checked against leaving
 * messages without instructions, errors or commands needs neither, and one whose sentences are
 * all found verbatim never needs the lines.
 */
function indexOf(text: string): SummaryIndex {
  let full: string | undefined;
  let lines: SummaryIndex['lines'] | undefined;
  return {
    get full() {
      full ??= normalize(text);
      return full;
    },
    get lines() {
      lines ??= text
        .split('\n')
        .map((l) => normalize(l))
        .filter((l) => l.length > 0)
        .map((l) => ({ text: l, words: new Set(wordsOf(l)) }));
      return lines;
    },
  };
}

/**
 * Whether a sentence (an instruction, an error line, a command) is in the summary: its normalized
 * text (lower case, quotes and markup dropped, spaces collapsed, end punctuation dropped) is in the
 * normalized summary text; or, for a paraphrase, one line of the summary holds at least 80% of its
 * significant words (3 letters or more, stop words aside), and a negation when it has one.
 */
export function foundIn(sentence: string, index: SummaryIndex | string): boolean {
  const summary = typeof index === 'string' ? indexOf(index) : index;
  const needle = normalize(sentence);
  if (needle.length === 0) return true;
  if (summary.full.includes(needle)) return true;
  const words = [...new Set(wordsOf(needle))];
  if (words.length < 3) return false;
  const negated = NEGATIONS.test(needle);
  const need = Math.ceil(words.length * 0.8);
  return summary.lines.some((line) => {
    if (negated && !NEGATIONS.test(line.text)) return false;
    let hits = 0;
    for (const w of words) if (line.words.has(w)) hits++;
    return hits >= need;
  });
}

function normalize(text: string): string {
  const spaced = text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/[`*_"“”]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return trimEndWhere(spaced, (c) => END_PUNCTUATION.has(c));
}

/** What {@link normalize} drops at the end: spaces and sentence punctuation. */
const END_PUNCTUATION = new Set([' ', '.', '!', '?', ';', ':', ',']);
/** What {@link wordsOf} drops at the end of a word. */
const WORD_END = new Set(['.', "'", '/', '-']);

function wordsOf(normalized: string): string[] {
  return (normalized.match(/[\p{L}\p{N}][\p{L}\p{N}'_./-]*/gu) ?? [])
    .map((w) => trimEndWhere(w, (c) => WORD_END.has(c)))
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w));
}

/**
 * `text` without its trailing run of characters `drop` accepts. A loop: a `/[…]+$/` pattern reads a
 * run of those characters inside the text again from each of its positions (quadratic in the run).
 */
function trimEndWhere(text: string, drop: (c: string) => boolean): string {
  let end = text.length;
  while (end > 0 && drop(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}

/** Whitespace collapsed, for verbatim comparisons of requests. */
function _squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------
// Bounded lists and sanitized items

function remember(map: Map<string, string>, key: string, value: string, max: number): void {
  if (!key) return;
  map.delete(key);
  map.set(key, value);
  dropOldest(map, max);
}

function dropOldest<K, V>(map: Map<K, V>, max: number): void {
  while (map.size > max) {
    const first = map.keys().next();
    if (first.done) return;
    map.delete(first.value);
  }
}

/**
 * One item made safe to store and show: control characters (C0, DEL, C1) and bidirectional
 * controls removed, whitespace collapsed to single spaces, unpaired surrogates replaced, at most
 * {@link LOST_ITEM_CHARS} characters (a clipped item ends in `…`). The dashboard escapes HTML.
 */
export function sanitizeItem(text: string): string {
  let out = '';
  for (const char of storableText(text)) {
    const code = char.codePointAt(0) as number;
    if (code === 0x09 || code === 0x0a || code === 0x0d) out += ' ';
    else if (!isControl(code)) out += char;
  }
  return clip(out.replace(/\s+/g, ' ').trim());
}

/** C0 (but tab and line breaks, handled by the caller), DEL, C1, and bidirectional controls. */
function isControl(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    code === 0x061c ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function clip(text: string): string {
  if (text.length <= LOST_ITEM_CHARS) return text;
  let end = LOST_ITEM_CHARS - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * At most {@link LOST_ITEMS} items in all, shared in turn between the kinds (an instruction, an
 * error, a path, a command, and again), most recent first within each kind; the rest counted.
 */
function capLost(all: Omit<Lost, 'omitted'>): Lost {
  const kinds = ['instructions', 'errors', 'paths', 'commands'] as const;
  const out: Omit<Lost, 'omitted'> = { paths: [], commands: [], errors: [], instructions: [] };
  const seen = kinds.map(() => new Set<string>());
  const next = kinds.map(() => 0);
  let taken = 0;
  let progress = true;
  while (taken < LOST_ITEMS && progress) {
    progress = false;
    kinds.forEach((kind, k) => {
      const list = all[kind];
      while (taken < LOST_ITEMS && (next[k] as number) < list.length) {
        const item = sanitizeItem(list[next[k] as number] as string);
        next[k] = (next[k] as number) + 1;
        progress = true;
        if (!item || seen[k]?.has(item)) continue;
        seen[k]?.add(item);
        out[kind].push(item);
        taken++;
        break;
      }
    });
  }
  const total = kinds.reduce((n, kind) => n + new Set(all[kind].map(sanitizeItem)).size, 0);
  return { ...out, omitted: Math.max(0, total - taken) };
}
