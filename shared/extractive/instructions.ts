/**
 * What the user said that must outlive a compaction: the goal (as the user's corrections left it),
 * the user's rules and corrections verbatim, and the short answers they gave, each paired with the
 * question it answers. Harness messages sent under the user role are not the user's words
 * (shared/text/user-messages.ts).
 */
import type { Message } from '../contract/message.ts';
import type { CheckpointEntry } from '../summary/checkpoint.ts';
import { cleanItem, clipWords, collapse } from '../text/text.ts';
import {
  classifyUserMessage,
  lastQuestion,
  questionBefore,
  stripMarkupPrefix,
  type UserMessageKind,
} from '../text/user-messages.ts';
import { readsAsInjection } from '../trust/injection.ts';
import { userWordsOf } from '../trust/relayed.ts';
import { condenseOverflow, type Item, previousItems } from './items.ts';
import { GOAL_CHARS, ITEM_CHARS, LIST_CAPS } from './limits.ts';
import { liftsRule, lineSentences, ruleStrength } from './rule-markers.ts';

/** A user message and what it is. */
interface UserWords {
  message: Message;
  index: number;
  text: string;
  /** What the message is; `injection`: the user's kind of message, but it reads as a prompt injection. */
  kind: UserMessageKind | 'injection';
}

/** Rules per message at most: a long task prompt states many (a dozen is common), the strongest are kept. */
const RULES_PER_MESSAGE = 16;

/** Longest user message taken whole as a correction. */
const CORRECTION_CHARS = 400;

/** A text that asks rather than answers, even without a question mark ("are you able to test it"). */
const ASKS = /^(?:are|is|can|could|would|will|do|does|did|what|why|how|when|where|who|which|should|shall)\b/i;

/** A message that corrects what came before: "no, ...", "actually ...", "I meant ...". */
const CORRECTION =
  /^(?:no[,.!:]|nope\b|actually\b|wait\b|instead\b|sorry\b|I meant\b|that's (?:not|wrong)\b|that is (?:not|wrong)\b|not (?:that|this|what)\b|scratch that\b|change of plans?\b|forget (?:it|that|about)\b|stop\b|don't\b|do not\b)/i;

/**
 * The user-role messages of `messages` with their kind. A user's message is read for what the user
 * says: a text it relays (a forwarded mail, a quote, a pasted text that reads as an injection;
 * shared/trust/relayed.ts) is data, replaced by a note naming it, so its wording becomes no goal,
 * rule or correction. A message whose own words read as a prompt injection (shared/trust/injection.ts,
 * as the user's words) is kind `injection`: none of its sentences is the user's rule, goal or
 * correction, however ordinary some look (shared/summary/guard.ts quotes it as a suspected injection).
 */
function userMessages(messages: Message[]): UserWords[] {
  const out: UserWords[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'user' || message.kind !== 'message' || typeof message.content !== 'string') return;
    const kind = classifyUserMessage(message.content);
    const own = kind === 'request' || kind === 'answer';
    const raw = stripMarkupPrefix(message.content).trim();
    const text = own ? userWordsOf(raw, message.seq).trim() : raw;
    const injected = own && readsAsInjection(text, { source: 'user' });
    out.push({ message, index, text, kind: injected ? 'injection' : kind });
  });
  return out;
}

/**
 * The goal: the previous one, else the first user request (not a command, notice, demonstration or
 * answer), framing tags removed and clipped to `max`; a later correction by the user is appended
 * ("— corrected (seq 12): use Postgres, not SQLite"), the newest replacing an older one.
 */
export function goalOf(
  previous: string,
  messages: Message[],
  max = GOAL_CHARS,
): { goal: string; seq: number | null } {
  const users = userMessages(messages);
  const first = users.find((u) => u.kind === 'request');
  let goal = previous.trim();
  let seq: number | null = null;
  if (!goal && first) {
    goal = clipWords(collapse(first.text.replace(/<\/?[\w-]+>/g, ' ')), max);
    seq = first.message.seq;
  }
  const correction = users.filter((u) => u !== first && u.kind === 'request' && isCorrection(u.text)).at(-1);
  if (goal && correction) {
    const base = goal.replace(/ — corrected \(seq \d+\): .*$/s, '');
    const note = ` — corrected (seq ${correction.message.seq}): ${clipWords(collapse(correction.text), 300)}`;
    goal = clipWords(base, Math.max(100, 4_000 - note.length)) + note;
  }
  return { goal, seq };
}

function isCorrection(text: string): boolean {
  return text.length <= CORRECTION_CHARS * 2 && CORRECTION.test(text.trim());
}

/**
 * The user's instructions: the previous ones, then for each user message its rule sentences
 * verbatim (a short correction whole), and each short answer with the question it answers
 * (`YES (answering: "Shall I delete the old files?")`). A rule sentence is one of the user's own
 * words whose form states a rule in any of several languages (rule-markers.ts); relayed text
 * (quotes, forwarded mails, pastes) and harness or tool text under the user role are not the
 * user's words. The newest wins on conflict: an older instruction about the same words (same
 * content words, negations aside) is dropped, and so is one a later sentence lifts ("you can use X
 * now", "forget what I said about X") when they share a name.
 */
export function instructionItems(previous: CheckpointEntry[], messages: Message[]): Item[] {
  const fresh: Item[] = [];
  const users = userMessages(messages);
  const firstRequest = users.find((u) => u.kind === 'request');
  for (const u of users) {
    const seq = u.message.seq;
    // A short reply right after a question answers it, whatever its words ("Postgres", "the red one").
    const asked = questionBefore(messages, u.index);
    const short = u.kind === 'request' && u.text.length <= 60 && !/[?\n]/.test(u.text) && !ASKS.test(u.text);
    if (u.kind === 'answer' || (short && asked !== null && /\?/.test(asked.content))) {
      const question = asked ? lastQuestion(asked.content) : null;
      if (question) fresh.push({ text: cleanItem(`${u.text} (answering: "${question}")`, ITEM_CHARS), seq });
      continue;
    }
    if (u.kind !== 'request') continue;
    if (isCorrection(u.text) && u.text.length <= CORRECTION_CHARS) {
      fresh.push({ text: cleanItem(u.text, ITEM_CHARS), seq });
      continue;
    }
    // The first request is the task (the goal); the list items of a later one are instructions.
    const bullets = u === firstRequest ? [] : listItems(u.text);
    const rules = [...bullets, ...ruleSentences(u.text)].slice(0, RULES_PER_MESSAGE);
    fresh.push(...rules.map((text) => ({ text, seq })));
  }
  let items = previousItems(previous);
  for (const item of fresh) {
    const words = contentWords(item.text);
    const lifts = liftsRule(item.text);
    items = items.filter((old) => {
      const theirs = contentWords(old.text);
      if (collapse(old.text).toLowerCase() === collapse(item.text).toLowerCase()) return false;
      if (sameSubject(words, theirs)) return false;
      // A permission or cancellation lifts an older message's rule about what it names.
      const older = old.prev === true || (old.seq ?? -1) < (item.seq ?? -1);
      return !(lifts && older && sharedWords(words, theirs) >= 1);
    });
    items.push(item);
  }
  return condenseOverflow(items, LIST_CAPS.userInstructions);
}

/** The list items (`- x`, `1. x`) of a user message, verbatim. */
function listItems(text: string): string[] {
  return text
    .replace(/```[\s\S]*?(?:```|$)/g, '\n')
    .split('\n')
    .flatMap((l) => {
      const item = /^\s*(?:[-*+•]|\d+[.)])\s+(.{4,})$/.exec(l)?.[1];
      return item ? [cleanItem(item, ITEM_CHARS)] : [];
    });
}

/**
 * The rule sentences of a user message, strongest first, at most {@link RULES_PER_MESSAGE}. A rule
 * that ends with a colon ("You MUST use this EXACT command to submit:") carries what it introduces:
 * the code block or the list items that follow it, so the command or the file list survives with it.
 * A heading (a line without a sentence's end, title-cased or `#`-marked) is not a rule.
 */
function ruleSentences(text: string): string[] {
  const candidates: string[] = [];
  const units = textUnits(text.replace(/<\/?[\w-]+>/g, '\n'));
  units.forEach((unit, i) => {
    if (unit.code) return;
    const line = unit.text.replace(/^\s*(?:[-*+>]+|\d+[.)])\s+/, '').trim();
    if (/^#/.test(line) || isHeading(line)) return;
    for (const sentence of lineSentences(line)) {
      if (sentence.length < (CJK.test(sentence) ? 4 : 8) || /[?？]$/.test(sentence)) continue;
      const introduced = sentence.endsWith(':') ? introducedBy(units, i) : '';
      const full = introduced ? `${sentence} ${introduced}` : sentence;
      if (full.length <= ITEM_CHARS) candidates.push(full);
    }
  });
  // A permission ("you can now …") is kept to lift an earlier rule, but ranks below the rules.
  const strength = (s: string) => ruleStrength(s) ?? (liftsRule(s) ? 'weak' : null);
  const strong = candidates.filter((s) => strength(s) === 'strong');
  const weak = candidates.filter((s) => strength(s) === 'weak');
  return [...strong, ...weak].slice(0, RULES_PER_MESSAGE).map((s) => cleanItem(s, ITEM_CHARS));
}

/** A line of prose, or a fenced code block's content. */
interface TextUnit {
  text: string;
  code: boolean;
}

/** The non-blank lines of a text, a fenced code block (```) as one unit of its own. */
function textUnits(text: string): TextUnit[] {
  const units: TextUnit[] = [];
  let code: string[] | null = null;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      if (code === null) code = [];
      else {
        units.push({ text: code.join('\n'), code: true });
        code = null;
      }
      continue;
    }
    if (code !== null) code.push(line);
    else if (line.trim()) units.push({ text: line, code: false });
  }
  if (code !== null) units.push({ text: code.join('\n'), code: true });
  return units;
}

/** What the unit after `index` introduces: a code block's first lines, or the list items that follow. */
function introducedBy(units: TextUnit[], index: number): string {
  const next = units[index + 1];
  if (!next) return '';
  if (next.code) {
    const lines = next.text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    return lines.length > 0 ? `\`${clipWords(lines.slice(0, 3).join('; '), 200)}\`` : '';
  }
  const items: string[] = [];
  for (const unit of units.slice(index + 1)) {
    const item = /^\s*(?:[-*+•]|\d+[.)])\s+(.+)$/.exec(unit.text)?.[1];
    if (unit.code || !item) break;
    items.push(clipWords(item.trim(), 60));
  }
  return items.length > 0 ? clipWords(items.join('; '), 200) : '';
}

/** A heading: short, no sentence end, most words capitalized ("Important Boundaries"). */
function isHeading(line: string): boolean {
  if (line.length > 60 || /[.!?:;,]$/.test(line)) return false;
  const words = line.split(/\s+/).filter((w) => /^\p{L}/u.test(w));
  return words.length > 0 && words.length <= 6 && words.every((w) => /^\p{Lu}/u.test(w));
}

const STOP_WORDS = new Set(
  (
    'the a an and or to of in on for with be is are it this that you your we i me my please do does not ' +
    "don't dont never always must should no any all use using just only make sure"
  ).split(' '),
);

function contentWords(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .replace(/\(answering: .*\)$/, '')
      .split(/[^\p{L}\p{N}_.'-]+/u)
      .filter((w) => w.length >= 3 && !STOP_WORDS.has(w)),
  );
}

/** Two instructions about the same thing: most content words shared (at least two). */
function sameSubject(a: Set<string>, b: Set<string>): boolean {
  if (a.size < 2 || b.size < 2) return false;
  const shared = sharedWords(a, b);
  return shared >= 2 && shared / Math.min(a.size, b.size) >= 0.75;
}

/** Content words of four characters or more (a name, not a filler) two instructions share. */
function sharedWords(a: Set<string>, b: Set<string>): number {
  let shared = 0;
  for (const w of a) if (w.length >= 4 && !LIFT_WORDS.has(w) && b.has(w)) shared++;
  return shared;
}

/** Words of a permission or a cancellation that name no subject. */
const LIFT_WORDS = new Set(
  'can may now again also feel free fine okay alright allowed longer need needed forget ignore mind earlier previous said what about'.split(
    ' ',
  ),
);

/** Chinese, Japanese or Korean script: sentences are short in characters. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
