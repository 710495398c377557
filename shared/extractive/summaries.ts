/**
 * Summaries already in the transcript: a harness's own compaction summary sent under the user role
 * ("This session is being continued from a previous conversation…") or a structured summary the
 * agent wrote (`## Completed`, `**Next steps**:`). Their sections, recognised by their headings,
 * feed the checkpoint's fields, so what an earlier summary knew is not lost.
 */
import type { Message } from '../contract/message.ts';
import { classifyUserMessage } from '../summary/user-messages.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';
import { cleanItem, isThinking } from './text.ts';

/** The fields a transcript summary's sections feed. */
export type SummaryField =
  | 'goal'
  | 'userInstructions'
  | 'currentWork'
  | 'nextStep'
  | 'completed'
  | 'pending'
  | 'blockers'
  | 'decisions'
  | 'discoveries'
  | 'errorsAndFixes'
  | 'files';

/** Headings and the field their section feeds; the first match wins. */
const HEADINGS: Array<[RegExp, SummaryField]> = [
  [/\bnext steps?\b/i, 'nextStep'],
  [
    /\b(?:user(?:'s)? (?:messages|instructions|feedback|requirements)|constraints|rules)\b/i,
    'userInstructions',
  ],
  [/\b(?:primary request|intent|goal|objective|task description)\b/i, 'goal'],
  [/\b(?:current(?:ly)? work|in progress|current (?:state|status))\b/i, 'currentWork'],
  [/\b(?:errors?|fix(?:es)?|problems? solved|issues? (?:found|fixed))\b/i, 'errorsAndFixes'],
  [/\b(?:pending|todo|remaining|open tasks?|still to do)\b/i, 'pending'],
  [/\b(?:blockers?|blocked)\b/i, 'blockers'],
  [
    /\b(?:completed|done|accomplished|changes made|what (?:was|I|we) did|summary of changes|implemented)\b/i,
    'completed',
  ],
  [/\b(?:decisions?|approach|design)\b/i, 'decisions'],
  [/\b(?:files?|code sections?)\b/i, 'files'],
  [
    /\b(?:key (?:technical )?concepts|findings|discover(?:y|ies)|learned|root cause|analysis)\b/i,
    'discoveries',
  ],
];

/** Items per section at most. */
const PER_SECTION = 6;

/** What the transcript's summaries say, by field, newest summary last. */
export function transcriptSummaryItems(messages: Message[]): Partial<Record<SummaryField, Item[]>> {
  const out: Partial<Record<SummaryField, Item[]>> = {};
  for (const m of messages) {
    if (m.kind !== 'message' || typeof m.content !== 'string') continue;
    const isHarnessSummary = m.role === 'user' && classifyUserMessage(m.content) === 'summary';
    if (!isHarnessSummary && (m.role !== 'assistant' || isThinking(m.content))) continue;
    const sections = sectionsOf(m.content);
    // An agent's message is a summary only with at least two recognised sections.
    if (!isHarnessSummary && sections.length < 2) continue;
    for (const [field, lines] of sections) {
      const items = lines
        .slice(0, PER_SECTION)
        .map((text) => ({ text: cleanItem(text, ITEM_CHARS), seq: m.seq }));
      out[field] = [...(out[field] ?? []), ...items.filter((i) => i.text.length > 0)];
    }
  }
  return out;
}

const HEADING_LINE =
  /^\s*(?:#{1,6}\s+(.+?)\s*#*|\*\*(.+?)\*\*:?|(?:\d+|[A-Z])[.)]\s+(?:\*\*)?([^:*\n]{3,60}?)(?:\*\*)?:|([A-Z][^:\n]{2,50}):)\s*$/;
const BULLET = /^\s*(?:[-*•+]|\d+[.)])\s+(.+)$/;

/** The recognised sections of a text: their field and their bullet lines (or their prose lines). */
function sectionsOf(text: string): Array<[SummaryField, string[]]> {
  const sections: Array<[SummaryField, string[]]> = [];
  let current: [SummaryField, string[]] | null = null;
  for (const line of text.slice(0, 100_000).split('\n')) {
    const heading = HEADING_LINE.exec(line);
    const title = heading ? (heading[1] ?? heading[2] ?? heading[3] ?? heading[4] ?? '') : '';
    if (heading && title) {
      const field = HEADINGS.find(([pattern]) => pattern.test(title))?.[1];
      current = field ? [field, []] : null;
      if (current) sections.push(current);
      continue;
    }
    if (!current || !line.trim() || /^\s*```/.test(line)) continue;
    const bullet = BULLET.exec(line)?.[1] ?? line.trim();
    if (bullet.length >= 3) current[1].push(bullet.replace(/\*\*/g, ''));
  }
  return sections.filter(([, lines]) => lines.length > 0);
}
