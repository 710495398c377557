/** List items with their age, and merging them with the previous checkpoint's. */
import type { CheckpointEntry, CheckpointFile, ErrorFix } from '../summary/checkpoint.ts';
import { cleanItem, clipWords, normalizeKey } from '../text/text.ts';
import { ITEM_CHARS } from './limits.ts';

/**
 * A list item: its text and the seq of the message it comes from (null when unknown). `prev` marks an
 * item of the previous checkpoint: older than any leaving message, whatever its seq.
 */
export interface Item {
  text: string;
  seq: number | null;
  prev?: boolean | undefined;
  /** The call whose failure made a blocker; its later success removes the blocker. */
  source?: string | undefined;
  /**
   * An error still open at the cut (its command's or test's last run failed): the budget keeps it
   * before any other item of its list.
   */
  open?: boolean | undefined;
  /** The entry of an `errorsAndFixes` item (`text` is its rendering, for the budget). */
  fix?: ErrorFix | undefined;
  /** The entry of a `files` item (`text` is its rendering, for the budget). */
  file?: CheckpointFile | undefined;
}

/** Prefix of the item that condenses older items of a list. */
export const EARLIER = 'Earlier: ';

/** Longest text an older item keeps inside the condensed {@link EARLIER} item. */
const CONDENSED_CHARS = 80;

/** A number that orders items oldest first: previous items (by seq, unknown first), then fresh ones. */
export function ageOf(item: Item): number {
  const seq = item.seq ?? -1;
  return item.prev ? seq - 1e15 : seq;
}

/** The previous checkpoint's entries as items. */
export function previousItems(entries: CheckpointEntry[]): Item[] {
  return entries.map((e) => ({ text: e.text, seq: e.seq, prev: true }));
}

/** Items as checkpoint entries. */
export function toEntries(items: Item[]): CheckpointEntry[] {
  return items.filter((i) => i.text.length > 0).map((i) => ({ text: i.text, seq: i.seq }));
}

/**
 * Previous items then fresh ones, cleaned, deduplicated (the newest mention kept). Past `cap`, the
 * oldest items are not dropped but condensed into one `Earlier: a; b; …` item (which folds in an
 * older one), so a second compaction still shows what the first one kept.
 */
export function merge(previous: CheckpointEntry[], fresh: Item[], cap: number): Item[] {
  const all = [...previousItems(previous), ...fresh]
    .map((item) => ({ ...item, text: cleanItem(item.text, itemLimit(item)) }))
    .filter((item) => item.text.length > 0);
  const last = new Map<string, number>();
  all.forEach((item, i) => {
    last.set(normalizeKey(item.text), i);
  });
  const unique = all.filter((item, i) => last.get(normalizeKey(item.text)) === i);
  return condenseOverflow(unique, cap);
}

/** The list within `cap` items: the oldest ones past it condensed into one `Earlier:` item. */
export function condenseOverflow(items: Item[], cap: number): Item[] {
  if (items.length <= cap) return items;
  if (cap <= 1) return items.slice(-Math.max(cap, 0));
  const overflow = items.slice(0, items.length - cap + 1);
  const kept = items.slice(items.length - cap + 1);
  return [condense(overflow), ...kept];
}

/** Items condensed into one `Earlier: a; b; …` item of at most {@link ITEM_CHARS} characters. */
export function condense(items: Item[]): Item {
  const parts = items.map((i) =>
    i.text.startsWith(EARLIER) ? i.text.slice(EARLIER.length) : clipWords(i.text, CONDENSED_CHARS),
  );
  const newest = items.reduce((a, b) => (ageOf(b) > ageOf(a) ? b : a));
  // The newest condensed texts matter most: keep the end when clipping.
  let text = parts.join('; ');
  if (text.length > ITEM_CHARS - EARLIER.length) text = `…${text.slice(-(ITEM_CHARS - EARLIER.length - 1))}`;
  return { text: `${EARLIER}${text}`, seq: newest.seq, prev: true };
}

/** Previous items keep the schema's bound (another summarizer may have written them); new ones ours. */
function itemLimit(item: Item): number {
  return item.prev ? 2_000 : ITEM_CHARS;
}
