/**
 * Summaries already in the transcript: a harness's own compaction summary sent under the user role
 * ("This session is being continued from a previous conversation…") or a structured summary the
 * agent wrote (`## Completed`, `**Next steps**:`). Their sections, recognised by their headings,
 * feed the checkpoint's fields, so what an earlier summary knew is not lost.
 */
import type { Message } from '../contract/message.ts';
import { cleanItem, isThinking } from '../text/text.ts';
import { classifyUserMessage } from '../text/user-messages.ts';
import type { Item } from './items.ts';
import { ITEM_CHARS } from './limits.ts';

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

/** A heading line but a Markdown one: `**Title**`, `**Title**:`, `1. Title:`, `A) **Title**:`, `Title:`. */
const HEADING_LINE =
  /^\s*(?:\*\*(.+?)\*\*:?|(?:\d+|[A-Z])[.)]\s+(?:\*\*)?([^:*\n]{3,60}?)(?:\*\*)?:|([A-Z][^:\n]{2,50}):)\s*$/;
/** One white space character, as `\s` matches it. */
const SPACE = /\s/;
/** Line breaks other than `\n`, which `.` does not match. */
const LINE_BREAK = /[\r\u2028\u2029]/;
const BULLET = /^\s*(?:[-*•+]|\d+[.)])\s+(.+)$/;

/**
 * The title of a heading line (`## Next steps`, `**Completed**:`, `2. Files changed:`, `Errors:`),
 * or null when the line is none. A Markdown heading is read by {@link markdownTitle}; the other
 * forms by a pattern.
 */
export function headingTitle(line: string): string | null {
  const text = line.trimStart();
  if (text.startsWith('#')) return markdownTitle(text);
  const heading = HEADING_LINE.exec(line);
  return heading ? (heading[1] ?? heading[2] ?? heading[3] ?? '') : null;
}

/**
 * The title of a Markdown heading (`## Next steps ##`) in `text` (a line without its leading white
 * space), or null: what `^#{1,6}\s+(.+?)\s*#*\s*$` captures, found without it (on a run of spaces
 * inside the line, that pattern tried every split of the rest of the run, from each of its
 * positions). The title runs from the first character after the marks and the white space to the
 * closing marks and white space at the end, one character at least; a line break other than `\n`
 * inside it (`.` did not match one) makes the line no heading. After the marks, white space alone
 * gives a white space title (the lazy `.+?` took one), which names no section.
 */
function markdownTitle(text: string): string | null {
  let marks = 0;
  while (text.charAt(marks) === '#') marks++;
  if (marks === 0 || marks > 6 || !SPACE.test(text.charAt(marks))) return null;
  let start = marks;
  while (start < text.length && SPACE.test(text.charAt(start))) start++;
  if (start === text.length) {
    // `\s+` gives back its characters from the last: `.+?` takes the last that is no line break,
    // but never the first, which `\s+` needs.
    for (let i = text.length - 1; i > marks; i--) if (!LINE_BREAK.test(text.charAt(i))) return text.charAt(i);
    return null;
  }
  let end = text.length;
  while (end > start && SPACE.test(text.charAt(end - 1))) end--;
  while (end > start && text.charAt(end - 1) === '#') end--;
  while (end > start && SPACE.test(text.charAt(end - 1))) end--;
  const title = text.slice(start, Math.max(end, start + 1));
  return LINE_BREAK.test(title) ? null : title;
}

/** The recognised sections of a text: their field and their bullet lines (or their prose lines). */
function sectionsOf(text: string): Array<[SummaryField, string[]]> {
  const sections: Array<[SummaryField, string[]]> = [];
  let current: [SummaryField, string[]] | null = null;
  for (const line of text.slice(0, 100_000).split('\n')) {
    const title = headingTitle(line);
    if (title) {
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
