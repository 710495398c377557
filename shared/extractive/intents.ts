/** What the agent's prose states: intents after its last tool result, decisions, and open questions. */
import type { Message } from '../contract/message.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS, LIST_CAPS } from './limits.ts';
import { clipWords, findLastIndex, isThinking, sentences } from './text.ts';

/** Decisions taken from one run of leaving messages. */
const NEW_DECISIONS = 6;

/** Intents (pending) taken from the agent's last words. */
const NEW_INTENTS = 5;

/** "I'll", "I will", "I'm going to" and the like, as regular-expression alternatives. */
const WILL = "I'll|I will|we'll|we will|I'm going to|I am going to";

const INTENT = new RegExp(
  `\\b(?:next,? (?:I|we)\\b|${WILL}|let me|let's|I need to|we need to|still need to)`,
  'i',
);

/** Intent sentences of the assistant's messages after the last tool result. */
export function trailingIntents(messages: Message[]): Item[] {
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
export function decisionItems(messages: Message[]): Item[] {
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
