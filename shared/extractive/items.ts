/** List items with their age, and merging them with the previous checkpoint's. */
import { ITEM_CHARS } from './limits.ts';
import { cleanItem, normalizeKey } from './text.ts';

/** A list item with its age: the seq it comes from ({@link PREVIOUS} for the previous checkpoint). */
export interface Item {
  text: string;
  seq: number;
  /** The call whose failure made a blocker; its later success removes the blocker. */
  source?: string | undefined;
}

/** The age of an item taken from the previous checkpoint: older than any message. */
export const PREVIOUS = Number.NEGATIVE_INFINITY;

function asItems(texts: string[]): Item[] {
  return texts.map((text) => ({ text, seq: PREVIOUS }));
}

/** Previous items then fresh ones, cleaned, deduplicated (the newest mention kept), the last `cap`. */
export function merge(previous: string[], fresh: Item[], cap: number): Item[] {
  const all = [...asItems(previous), ...fresh]
    .map((item) => ({ ...item, text: cleanItem(item.text, itemLimit(item)) }))
    .filter((item) => item.text.length > 0);
  const last = new Map<string, number>();
  all.forEach((item, i) => {
    last.set(normalizeKey(item.text), i);
  });
  return all.filter((item, i) => last.get(normalizeKey(item.text)) === i).slice(-cap);
}

/** Previous items keep the schema's bound (another summarizer may have written them); new ones ours. */
function itemLimit(item: Item): number {
  return item.seq === PREVIOUS ? 2_000 : ITEM_CHARS;
}
