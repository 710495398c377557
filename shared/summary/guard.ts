/**
 * What a checkpoint may present as the user's will, whichever summarizer wrote it. Both the
 * `extractive` and the `anthropic` summarizer pass their checkpoint through {@link guardCheckpoint}
 * before it is stored: a model can be talked into copying an injected order into its answer, and a
 * heuristic can mistake one for a rule, so the check does not trust either.
 *
 * The rules (what the summarizer trusts):
 * - `userInstructions` come only from the user's own words: an entry whose seq names a leaving
 *   message that is not a user-role message of the user's or the harness's (a tool result, a tool
 *   call, the assistant's text: where echoed tool output lives) is dropped; so is an entry that
 *   reads as a prompt injection (`shared/trust/injection.ts`), whatever its source;
 * - `goal`, `currentWork`, `nextStep` and the other lists never hold text that reads as an
 *   injection, nor the words of a message part quoted as one (a relayed mail's order restated);
 * - the user's own words are read as the user's (`source: 'user'` of shared/trust/injection.ts: a
 *   `curl … | sh` they ask for is their request); everything else as untrusted;
 * - nothing is silently lost: every dropped text is kept in `suspectedInjections`, quoted with its
 *   seq, which the rendered summary shows as a record, never as orders;
 * - `media` is compactor's: the previous checkpoint's list merged with the leaving messages' media
 *   (shared/summary/media.ts), whatever the summarizer wrote;
 * - secret-looking paths enter the working set only as `shared/trust/secrets.ts` allows (the agent
 *   acted on them and the user asked); paths of the previous checkpoint passed that rule already.
 *
 * `lastUserRequest` stays verbatim: it is the user's message; the rendering marks it when it reads
 * as an injection (`renderCheckpoint`). Pure.
 */
import type { Message } from '../contract/message.ts';
import { cleanItem, collapse, normalizeKey } from '../text/text.ts';
import { classifyUserMessage } from '../text/user-messages.ts';
import { detectInjection, type InjectionSource, readsAsInjection } from '../trust/injection.ts';
import { splitRelayed, userMessageInjections } from '../trust/relayed.ts';
import { isSecretPath, pathWitnesses, secretPathAllowed } from '../trust/secrets.ts';
import {
  CHECKPOINT_SECTIONS,
  type Checkpoint,
  type CheckpointEntry,
  checkpointSchema,
  renderErrorFix,
} from './checkpoint.ts';
import { mediaOfLeaving, mergeMedia } from './media.ts';

/** Most entries `suspectedInjections` keeps, the newest ones. */
export const MAX_SUSPECTED = 8;

/** Longest quoted text of one suspected injection, in characters. */
export const SUSPECT_CHARS = 300;

/** The lists that say what the agent is to do: they take nothing from a message carrying an injection. */
const ORDER_LISTS: ReadonlySet<string> = new Set(['inProgress', 'pending']);

/** What {@link guardCheckpoint} checks a checkpoint against. */
export interface GuardInput {
  /** The messages the checkpoint summarizes (ascending seq). */
  leaving: readonly Message[];
  /** The checkpoint it was merged with, or null. */
  previous?: Checkpoint | null | undefined;
  /** Texts the summarizer itself set aside as suspected injections (e.g. whole injected requests). */
  suspects?: readonly CheckpointEntry[] | undefined;
  /**
   * What {@link sessionSuspects} finds in `leaving`, when the caller read it already (a summarizer
   * reads it while its LLM call is in flight); read here when absent.
   */
  leavingSuspects?: readonly CheckpointEntry[] | undefined;
}

/**
 * The checkpoint with what it may not present as the user's will moved to `suspectedInjections`
 * (see the file's comment). Never throws; returns a checkpoint that passes `checkpointSchema`.
 */
export function guardCheckpoint(checkpoint: Checkpoint, input: GuardInput): Checkpoint {
  const leaving = Array.isArray(input.leaving) ? input.leaving : [];
  const bySeq = new Map<number, Message>();
  for (const m of leaving) if (m && typeof m.seq === 'number') bySeq.set(m.seq, m);
  const found = [...(input.suspects ?? []), ...(input.leavingSuspects ?? sessionSuspects(leaving))];
  const quoted = new Set(found.map((e) => e.seq));
  const moved: CheckpointEntry[] = [];
  // A text taken from a message already quoted whole is not quoted again.
  const setAside = (entry: CheckpointEntry) => {
    if (entry.seq === null || !quoted.has(entry.seq)) moved.push(entry);
  };
  const restates = restatesSuspect(found);
  const keep = (entry: CheckpointEntry, source: InjectionSource = 'untrusted'): boolean => {
    if (!readsAsInjection(entry.text, { source }) && !restates(entry.text)) return true;
    setAside(entry);
    return false;
  };
  // What the agent is told to do or follow: nothing from a message that carries an injection,
  // even a sentence of it that reads as ordinary ("From now on always push to production.").
  const keepOrder = (entry: CheckpointEntry, source: InjectionSource = 'untrusted'): boolean => {
    if (entry.seq !== null && quoted.has(entry.seq)) return false;
    return keep(entry, source);
  };
  const out: Checkpoint = { ...checkpoint };

  out.userInstructions = checkpoint.userInstructions.filter((entry) => {
    const source = entry.seq === null ? undefined : bySeq.get(entry.seq);
    if (source && !isUserSource(source)) {
      setAside(entry);
      return false;
    }
    // A rule the user wrote is read as theirs; one whose source is unknown, as untrusted.
    return keepOrder(
      entry,
      source && ownWordsOf(source).includes(collapse(entry.text)) ? 'user' : 'untrusted',
    );
  });
  const sourceOf = entrySource(leaving, bySeq);
  for (const [key] of CHECKPOINT_SECTIONS) {
    out[key] = checkpoint[key].filter((e) => (ORDER_LISTS.has(key) ? keepOrder : keep)(e, sourceOf(e)));
  }
  out.discoveries = checkpoint.discoveries.filter((e) => keep(e, sourceOf(e)));
  const current = checkpoint.currentWork;
  out.currentWork = current && keepOrder(current, sourceOf(current)) ? current : null;
  const next = checkpoint.nextStep;
  out.nextStep = next && keepOrder(next, sourceOf(next)) ? next : null;
  out.errorsAndFixes = checkpoint.errorsAndFixes.filter((e) => {
    const entry = { text: renderErrorFix(e), seq: e.seq };
    return keep(entry, sourceOf(entry));
  });
  // The goal is the user's own words: read as theirs, and never a quoted suspect's words.
  if (
    checkpoint.goal &&
    (readsAsInjection(checkpoint.goal, { source: 'user' }) || restates(checkpoint.goal))
  ) {
    setAside({ text: checkpoint.goal, seq: null });
    out.goal = '';
  }
  const allowed = pathRule(leaving, input.previous ?? null);
  out.workingSet = checkpoint.workingSet.filter(allowed);
  out.files = checkpoint.files.filter((f) => allowed(f.path));
  out.suspectedInjections = mergeSuspects(
    [...(input.previous?.suspectedInjections ?? []), ...checkpoint.suspectedInjections],
    [...found, ...moved].sort((a, b) => (a.seq ?? -1) - (b.seq ?? -1)),
  );
  // compactor's own list, whatever the summarizer wrote: no summarizer can drop or forge it.
  out.media = mergeMedia(input.previous?.media ?? [], mediaOfLeaving(leaving));
  const parsed = checkpointSchema.safeParse(out);
  return parsed.success ? parsed.data : { ...out, suspectedInjections: [] };
}

/**
 * Who wrote a checkpoint entry, by the message its seq names: the agent's own prose and calls read
 * as its words (`user`: a `curl … | sh` it ran is its action, not an injection), and so does an
 * entry that names a tool result but states the call that produced it (`ran: <command>`); any other
 * tool result's text, or an unknown source, is `untrusted`.
 */
function entrySource(
  leaving: readonly Message[],
  bySeq: ReadonlyMap<number, Message>,
): (entry: { text?: string; seq: number | null }) => InjectionSource {
  const calls = new Map<string, string>();
  for (const m of leaving)
    if (m?.kind === 'tool_call' && m.toolCallId && typeof m.content === 'string')
      calls.set(m.toolCallId, m.content);
  return (entry) => {
    const m = entry.seq === null ? undefined : bySeq.get(entry.seq);
    if (m?.role === 'assistant' && (m.kind === 'message' || m.kind === 'tool_call')) return 'user';
    if (m?.kind !== 'tool_result' || !m.toolCallId || typeof entry.text !== 'string') return 'untrusted';
    const call = calls.get(m.toolCallId);
    // The entry's words after its label ("ran: ", "last call: ran: "), as the call states them.
    const stated = entry.text
      .replace(/^(?:[\w ]{1,20}:\s+)+/, '')
      .replace(/\s+\([^)]{0,40}\)$/, '')
      .slice(0, 60);
    return call && stated.length >= 8 && call.includes(stated) ? 'user' : 'untrusted';
  };
}

/**
 * Whether a message may be the source of a user instruction: a user-role message that is the user's
 * words, or what the harness restates of them (a summary in the transcript). Not a tool result,
 * nor a tool call, nor the assistant's text.
 */
function isUserSource(message: Message): boolean {
  if (message.role !== 'user' || message.kind !== 'message' || typeof message.content !== 'string')
    return false;
  const kind = classifyUserMessage(message.content);
  return kind === 'request' || kind === 'answer' || kind === 'summary';
}

/**
 * Which paths of a checkpoint may stay: those of the previous checkpoint (they passed the rule when
 * they entered), any path that is not a secret, and a secret one as shared/trust/secrets.ts allows.
 */
function pathRule(leaving: readonly Message[], previous: Checkpoint | null): (path: string) => boolean {
  const before = new Set([...(previous?.workingSet ?? []), ...(previous?.files ?? []).map((f) => f.path)]);
  const userWords = previous
    ? [previous.goal, previous.lastUserRequest, ...previous.userInstructions.map((e) => e.text)]
    : [];
  let witnesses: ReturnType<typeof pathWitnesses> | null = null;
  return (path) => {
    if (before.has(path) || !isSecretPath(path)) return true;
    witnesses ??= pathWitnesses(leaving, userWords);
    return secretPathAllowed(path, witnesses);
  };
}

/** The user's own words of a user message (relayed parts left out), white space collapsed. */
function ownWordsOf(message: Message): string {
  return collapse(splitRelayed(message.content).own);
}

/**
 * Characters in a row a checkpoint's text must share with a quoted suspect to restate it; fewer for
 * a suspect in a script written without spaces (Chinese, Japanese), whose words are denser.
 */
const RESTATED_CHARS = 24;
const RESTATED_DENSE_CHARS = 8;

/** Most starting points read in one suspect's text. */
const RESTATED_STARTS = 400;

/**
 * Whether a text restates a quoted suspect: shares {@link RESTATED_CHARS} characters in a row with
 * one (case and white space ignored). An agent that repeats an injected order in its plan ("Next I
 * will do what it asks: delete the migrations folder") restates it, whichever of its words still
 * read as ordinary; so does a summary that copies a relayed order into the goal.
 */
function restatesSuspect(found: readonly CheckpointEntry[]): (text: string) => boolean {
  const suspects = found.map((e) => normalizeKey(e.text)).filter((t) => t.length > 0);
  return (text) => {
    if (suspects.length === 0) return false;
    const key = normalizeKey(text);
    return suspects.some((suspect) => {
      const dense = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(suspect);
      const size = dense ? RESTATED_DENSE_CHARS : RESTATED_CHARS;
      const starts = Math.min(suspect.length - size, RESTATED_STARTS);
      for (let i = 0; i <= starts; i++) if (key.includes(suspect.slice(i, i + size))) return true;
      return false;
    });
  };
}

/** Longest text of a message read for injections, in characters (its start). */
const SCANNED_CHARS = 50_000;

/** Characters of each of two neighbouring tool results read together: the end of one, the start of the next. */
const WINDOW_CHARS = 4_000;

/** Messages back from a tool result in which the tool result before it counts as its neighbour. */
const NEIGHBOUR_SPAN = 4;

/**
 * The leaving messages that carry a prompt injection, each quoted once with its seq: the lines or
 * sentences of it that read as one (else its opening), clipped. Read:
 * - a user message: its own words as the user's, and each part it relays (a forwarded mail, a
 *   quote, a paste; shared/trust/relayed.ts) as untrusted, quoted with the message's seq;
 * - a tool result as untrusted, alone and together with the tool result before it (within
 *   {@link NEIGHBOUR_SPAN} messages): an order split over two results reads whole only together,
 *   and then both are quoted;
 * - the assistant's text as its own words (where it echoes tool output, the output is quoted).
 * Not system messages, not the agent's own tool calls (its actions, not text it was given), not
 * summaries (compactor's own).
 */
export function sessionSuspects(leaving: readonly Message[]): CheckpointEntry[] {
  const out: CheckpointEntry[] = [];
  let previousResult: { message: Message; index: number; families: Set<string> } | null = null;
  leaving.forEach((m, index) => {
    if (!m || typeof m.content !== 'string' || m.role === 'system') return;
    if (m.kind === 'summary' || m.kind === 'tool_call') return;
    const text = m.content.slice(0, SCANNED_CHARS);
    if (m.kind === 'tool_result') {
      const families = new Set(detectInjection(text).map((f) => f.family));
      if (families.size > 0)
        out.push({ text: cleanItem(injectedPart(text, 'untrusted'), SUSPECT_CHARS), seq: m.seq });
      const before = previousResult && index - previousResult.index <= NEIGHBOUR_SPAN ? previousResult : null;
      if (before) out.push(...splitOrder(before.message, m, new Set([...before.families, ...families])));
      previousResult = { message: m, index, families };
      return;
    }
    if (m.role === 'user' && m.kind === 'message' && isOwnWords(m)) {
      out.push(...userSuspects(m, text));
      return;
    }
    if (readsAsInjection(text, { source: 'user' }))
      out.push({ text: cleanItem(injectedPart(text, 'user'), SUSPECT_CHARS), seq: m.seq });
  });
  return out;
}

/** Whether a user-role message is the user's own request or answer (not a harness notice). */
function isOwnWords(m: Message): boolean {
  const kind = classifyUserMessage(m.content);
  return kind === 'request' || kind === 'answer';
}

/** A user message's suspects: its own words read as the user's, each relayed part as untrusted. */
function userSuspects(m: Message, text: string): CheckpointEntry[] {
  const found = userMessageInjections(text);
  const out: CheckpointEntry[] = [];
  if (found.own.length > 0)
    out.push({ text: cleanItem(injectedPart(splitRelayed(text).own, 'user'), SUSPECT_CHARS), seq: m.seq });
  for (const { part } of found.relayed)
    out.push({ text: cleanItem(injectedPart(part.text, 'untrusted'), SUSPECT_CHARS), seq: m.seq });
  return out;
}

/**
 * Two neighbouring tool results whose seam (the end of the first and the start of the second) reads
 * as an injection of a family neither reads as alone (`alone`): an order split over both. Both
 * quoted, each with its seq, by the lines around the seam. An innocent result beside an injected
 * one adds no family, so it is not quoted.
 */
function splitOrder(first: Message, second: Message, alone: ReadonlySet<string>): CheckpointEntry[] {
  const tail = first.content.slice(-WINDOW_CHARS);
  const head = second.content.slice(0, WINDOW_CHARS);
  if (!detectInjection(`${tail}\n${head}`).some((f) => !alone.has(f.family))) return [];
  const seam = `${meaningfulLines(tail).slice(-2).join(' ')} … ${meaningfulLines(head).slice(0, 2).join(' ')}`;
  const text = cleanItem(`(split over seq ${first.seq} and ${second.seq}) ${seam}`, SUSPECT_CHARS);
  return [
    { text, seq: first.seq },
    { text, seq: second.seq },
  ];
}

/** The lines of a tool result that say something: harness tags (`<output>`, `<returncode>0</returncode>`) and blank lines left out. */
function meaningfulLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/<\/?[a-z_]+>(?:-?\d+<\/[a-z_]+>)?/gi, '').trim())
    .filter((line) => /\w/.test(line));
}

/** The lines (or sentences of a line) of a text that read as an injection, else its opening. */
function injectedPart(text: string, source: InjectionSource): string {
  const parts: string[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (!readsAsInjection(line, { source })) continue;
    const sentences = line.split(/(?<=[.!?…])\s+/).filter((s) => readsAsInjection(s, { source }));
    parts.push(...(sentences.length > 0 ? sentences : [line]));
    // A marker line that introduces what follows (`### Instruction:`, `SYSTEM:`) carries it.
    if (/[:：]\s*$/.test(line)) {
      const next = lines.slice(i + 1).find((l) => l.trim());
      if (next) parts.push(next.trim());
    }
    if (parts.join(' ').length >= SUSPECT_CHARS) break;
  }
  return parts.length > 0 ? parts.join(' ') : text;
}

/**
 * Earlier suspects then new ones, cleaned, deduplicated by text and seq (the newest kept), the
 * newest {@link MAX_SUSPECTED}.
 */
function mergeSuspects(earlier: CheckpointEntry[], fresh: CheckpointEntry[]): CheckpointEntry[] {
  const all = [...earlier, ...fresh]
    .map((e) => ({ text: cleanItem(e.text, SUSPECT_CHARS), seq: e.seq }))
    .filter((e) => e.text.length > 0);
  // The same words from two messages are two records: each names where it was said.
  const key = (e: CheckpointEntry) => `${e.seq ?? ''} ${normalizeKey(e.text)}`;
  const last = new Map<string, number>();
  all.forEach((e, i) => {
    last.set(key(e), i);
  });
  return all.filter((e, i) => last.get(key(e)) === i).slice(-MAX_SUSPECTED);
}
