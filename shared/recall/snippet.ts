/**
 * The snippet of a recall hit: the part of the message's text where the query matched, the match
 * between « and ». The search (producer/postgres/recall-query.ts) finds a message by its words read
 * two ways, as written and with path separators as spaces, so `refresh_token` finds
 * `src/auth/refresh_token.ts`; PostgreSQL's `ts_headline` reads the text one way only and, when the
 * query matched a part of a path, showed the message's first words instead. Here the place is found
 * as a reader would look for it: the query as written (case-insensitive), else its words, each
 * where it stands between non-alphanumeric characters (inside a path too). Pure.
 */

/** Characters of text a snippet shows (whole words: a little more or less). */
export const SNIPPET_CHARS = 240;

/** Characters of text the search hands over each side of where it placed the match ({@link anchorPattern}). */
export const SNIPPET_WINDOW_CHARS = 400;

/** Where a snippet's text came from: a window of the message's text, maybe cut at either end. */
export interface SnippetSource {
  /** The window: the text around where the search placed the match. */
  text: string;
  /** The message's text goes on before the window. */
  cutBefore: boolean;
  /** The message's text goes on after the window. */
  cutAfter: boolean;
}

/** A query's words: its runs of letters and digits, lower-cased, each once, longest first. */
export function queryWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].sort((a, b) => b.length - a.length);
}

/**
 * Where the search places the snippet's window when the message does not hold the query as
 * written: a PostgreSQL regular expression (ARE) for the query's longest word (the most telling)
 * standing alone in lower-cased text, between characters that are not letters or digits or at the
 * text's ends, the word its second group; '' when the query has no word. A word is letters and
 * digits only, so it needs no escaping.
 */
export function anchorPattern(query: string): string {
  const [longest] = queryWords(query);
  return longest === undefined ? '' : `(^|[^[:alnum:]])(${longest})([^[:alnum:]]|$)`;
}

/** A match in the text: from, to (exclusive), and which word (or -1: the whole query). */
interface Match {
  from: number;
  to: number;
  word: number;
}

const ALNUM = /[\p{L}\p{N}]/u;

/**
 * Every occurrence of the whole query, case-insensitive, not inside a longer word (`ts` is not
 * found in `tests`, `refresh_token` is in `src/refresh_token.ts`).
 */
function exactMatches(text: string, query: string): Match[] {
  const needle = query.trim().toLowerCase();
  if (needle === '') return [];
  const lower = text.toLowerCase();
  if (lower.length !== text.length) return [];
  const glued = (at: number, edge: string) => ALNUM.test(edge) && ALNUM.test(text.charAt(at));
  const found: Match[] = [];
  for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
    if (glued(at - 1, needle.charAt(0)) || glued(at + needle.length, needle.charAt(needle.length - 1)))
      continue;
    found.push({ from: at, to: at + needle.length, word: -1 });
    at += needle.length - 1;
  }
  return found;
}

/** Every occurrence of a query word standing alone, in order. */
function wordMatches(text: string, words: string[]): Match[] {
  if (words.length === 0) return [];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${words.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  return [...text.matchAll(pattern)].map((m) => ({
    from: m.index,
    to: m.index + (m[0] as string).length,
    word: words.indexOf((m[0] as string).toLowerCase()),
  }));
}

/**
 * Where the snippet starts: before the match that has the most distinct words within
 * {@link SNIPPET_CHARS} after it (the first such), a fifth of the snippet before it.
 */
function windowStart(matches: Match[]): number {
  let best = matches[0] as Match;
  let bestWords = 0;
  for (const anchor of matches) {
    const words = new Set(
      matches.filter((m) => m.from >= anchor.from && m.to <= anchor.from + SNIPPET_CHARS).map((m) => m.word),
    );
    if (words.size > bestWords) {
      best = anchor;
      bestWords = words.size;
    }
  }
  return Math.max(0, best.from - Math.floor(SNIPPET_CHARS / 5));
}

/**
 * `at` moved out (`-1`: back, `1`: on) to the nearest space within 20 characters, so the window
 * does not begin or end inside a word; it only ever grows.
 */
function wordEdge(text: string, at: number, direction: -1 | 1): number {
  for (let i = 0; i <= 20; i++) {
    const p = at + i * direction;
    if (p <= 0 || p >= text.length) return Math.min(Math.max(p, 0), text.length);
    if (text[p] === ' ') return direction === -1 ? p + 1 : p;
  }
  return at;
}

/**
 * The snippet of `source` for `query`: at most about {@link SNIPPET_CHARS} characters of its text on
 * one line, around the first occurrence of the whole query or, without one, where most of its
 * words stand together; each match shown between « and », and `…` where the text goes on. Text in
 * which neither is found (the search matched something else) gives its beginning, unmarked.
 */
export function recallSnippet(source: SnippetSource, query: string): string {
  const text = source.text.replace(/\s+/g, ' ');
  const exact = exactMatches(text, query);
  const matches = exact.length > 0 ? exact : wordMatches(text, queryWords(query));
  let from = matches.length > 0 ? windowStart(exact.length > 0 ? exact.slice(0, 1) : matches) : 0;
  let to = Math.min(text.length, from + SNIPPET_CHARS);
  // Never cut the first match: the window grows to hold it whole; its edges move out to spaces.
  const first = matches.find((m) => m.from >= from);
  if (first && first.to > to) to = first.to;
  if (from > 0) from = wordEdge(text, from, -1);
  if (to < text.length) to = wordEdge(text, to, 1);
  let body = '';
  let at = from;
  for (const m of matches.filter((m) => m.from >= from && m.to <= to)) {
    body += `${text.slice(at, m.from)}«${text.slice(m.from, m.to)}»`;
    at = m.to;
  }
  body += text.slice(at, to);
  const before = from > 0 || source.cutBefore ? '… ' : '';
  const after = to < text.length || source.cutAfter ? ' …' : '';
  return `${before}${body.trim()}${after}`;
}
