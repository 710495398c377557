/** What the agent's prose states: intents after its last tool result, facts found, and open questions (decisions: decisions.ts). */
import type { Message } from '../contract/message.ts';
import { clipWords, collapse, findLastIndex, isThinking, sentences } from '../text/text.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS, LIST_CAPS } from './limits.ts';

/** Discoveries taken from one run of leaving messages. */
const NEW_DISCOVERIES = 6;

/** Intents (pending) taken from the agent's last words. */
const NEW_INTENTS = 5;

/** "I'll", "I will", "I'm going to" and the like, as regular-expression alternatives. */
const WILL = "I'll|I will|we'll|we will|I'm going to|I am going to";

const INTENT = new RegExp(
  `\\b(?:next,? (?:I|we)\\b|${WILL}|let me|let's|I need to|we need to|still need to)`,
  'i',
);

/**
 * Intent sentences of the assistant's messages after the last tool result. An intent that only
 * points back at its object ("Let me fix this:", "Let me check that method:") carries the sentence
 * before it in the same message, which names it ({@link pointsBack}).
 */
export function trailingIntents(messages: Message[]): Item[] {
  const lastResult = findLastIndex(messages, (m) => m.kind === 'tool_result');
  const items: Item[] = [];
  messages.forEach((m, index) => {
    if (index <= lastResult || m.role !== 'assistant' || m.kind !== 'message' || isThinking(m.content))
      return;
    const said = sentences(m.content);
    said.forEach((sentence, k) => {
      if ((!INTENT.test(sentence) && !/\bTODO\b/.test(sentence)) || sentence.endsWith('?')) return;
      const before = said[k - 1];
      let text = sentence;
      if (pointsBack(sentence)) {
        const seen = before === undefined ? firstOutputLine(messages[lastResult]?.content ?? '') : null;
        if (before !== undefined) text = `${before} ${sentence}`;
        else if (seen) text = `${sentence} (after: ${seen})`;
      }
      items.push({ text: clipWords(text, ITEM_CHARS), seq: m.seq });
    });
  });
  return items.slice(-NEW_INTENTS);
}

/** Longest line of a tool result an intent quotes as what it points back at, in characters. */
const SEEN_CHARS = 120;

/**
 * The first line of a tool result that says something (three word characters or more), without
 * harness tags such as `<returncode>0</returncode>` or `<output>`, clipped; null when none.
 */
function firstOutputLine(content: string): string | null {
  for (const raw of content.slice(0, 4_000).split('\n')) {
    const line = collapse(raw.replace(/<\/?[a-z_]+>(?:-?\d+<\/[a-z_]+>)?/gi, ''));
    if (/\w{3}/.test(line)) return clipWords(line, SEEN_CHARS);
  }
  return null;
}

/** Words that point back at something named earlier. */
const BACK_REFERENCE = /\b(?:this|that|these|those|it|them|there)\b/i;

/** A name: something in backticks or quotes, a path, a call, an identifier with `_`, `.` or inner capitals. */
const NAMED = /[`'"]|\w[/.]\w|\w\(|\w_\w|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*/;

/**
 * Whether a sentence only points back at its object: a short one (at most 8 words) with "this",
 * "that", "it" and the like and no name of its own.
 */
export function pointsBack(sentence: string): boolean {
  return sentence.split(/\s+/).length <= 8 && BACK_REFERENCE.test(sentence) && !NAMED.test(sentence);
}

/**
 * Facts about the environment and the code, as the agent states them: causes, locations, versions,
 * how something behaves.
 */
const DISCOVERY = new RegExp(
  `\\b(?:${[
    'root cause|the (?:issue|problem|bug|cause|error|failure) (?:is|was|comes from|happens|occurs)',
    'is caused by|(?:it )?turns out|I (?:found|discovered|noticed|see) that|this (?:means|shows) that',
    'is (?:defined|located|implemented|declared|configured|handled|called|set) (?:in|at|by)|lives in',
    "(?:is|are) not installed|version \\d|is missing|does not exist|doesn't exist",
  ].join('|')})\\b`,
  'i',
);

/** Sentences that narrate rather than decide or find ("Let me look", "Now I'll check"). */
const NARRATION = new RegExp(
  `^(?:now,? |first,? |ok(?:ay)?,? |great,? |good,? )?(?:let me|let's|${WILL})\\b`,
  'i',
);

/** Up to {@link NEW_DISCOVERIES} assistant sentences stating a fact found, the newest kept. */
export function discoveryItems(messages: Message[]): Item[] {
  return proseItems(messages, DISCOVERY, NEW_DISCOVERIES, true);
}

function proseItems(messages: Message[], pattern: RegExp, max: number, thinkingToo: boolean): Item[] {
  const found: Item[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || m.kind !== 'message') continue;
    if (!thinkingToo && isThinking(m.content)) continue;
    for (const sentence of sentences(m.content)) {
      if (sentence.length < 25 || sentence.endsWith('?') || sentence.endsWith(':')) continue;
      if (NARRATION.test(sentence) || !pattern.test(sentence)) continue;
      found.push({ text: clipWords(sentence, ITEM_CHARS), seq: m.seq });
    }
  }
  return found.slice(-max);
}

/**
 * Questions (sentences ending in `?`) nobody answered: a user's, when no assistant text follows; the
 * assistant's, when asked after its last tool result (to the user, not to itself) and no user text follows.
 */
export function questionItems(messages: Message[]): Item[] {
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
