/**
 * Whether any pattern of a list matches a text, in one search: the patterns joined as the
 * alternatives of one regular expression. The detector (shared/trust/injection.ts) runs lists of
 * dozens of patterns over every message, and nearly every message matches none of them; one search
 * over the alternatives costs a fraction of a search per pattern, and only a text that matches it
 * is searched pattern by pattern, as before, for which one matched first. Pure.
 *
 * Joined alternatives match a text exactly when one of the patterns does: at each position the
 * search tries every alternative. Patterns are joined only with others of the same flags (`g` and
 * `y` aside: the joined search starts at the text's start and keeps no `lastIndex`); a pattern that
 * refers to its own groups (`\1`, `\k<name>`, a named group) is searched alone, as its numbers
 * would change among others.
 */

/** A pattern's own group references or names, which joining would renumber or duplicate. */
const OWN_GROUPS = /\\[1-9]|\\k<|\(\?<(?![=!])/;

/** The top-level alternatives of a pattern's source (`a|b(c|d)` is `a` and `b(c|d)`). */
function alternativesOf(source: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') i++;
    else if (inClass) inClass = ch !== ']';
    else if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '|' && depth === 0) {
      out.push(source.slice(start, i));
      start = i + 1;
    }
  }
  out.push(source.slice(start));
  return out;
}

/**
 * The rest of a pattern's source after a leading word boundary (`\b`) that binds all of it, or
 * null: a source `\bfoo|bar` has an alternative the boundary does not bind. (A quantified `\b` is
 * not a pattern: JavaScript refuses it.)
 */
function afterLeadingBoundary(source: string): string | null {
  if (!source.startsWith('\\b')) return null;
  return alternativesOf(source).length === 1 ? source.slice(2) : null;
}

/**
 * The alternatives of one search: those led by a word boundary share one (`\b(?:a|b)` for
 * `\ba|\bb`, the same matches), so that at a position inside a word the search tries one boundary
 * rather than every alternative; the others follow. Not under the `v` flag, whose classes nest
 * (the scan of a source above reads a class to its first `]`).
 */
function joinedSource(sources: readonly string[], flags: string): string {
  const led: string[] = [];
  const rest: string[] = [];
  for (const source of sources) {
    const after = flags.includes('v') ? null : afterLeadingBoundary(source);
    if (after === null) rest.push(`(?:${source})`);
    else led.push(`(?:${after})`);
  }
  return [...(led.length > 0 ? [`\\b(?:${led.join('|')})`] : []), ...rest].join('|');
}

/**
 * A test of whether any of `patterns` matches a text (see the file's comment): true exactly when
 * `patterns.some((p) => new RegExp(p.source, p.flags).test(text))` would be. Never throws on a
 * text; an empty list matches nothing.
 */
export function anyMatch(patterns: readonly RegExp[]): (text: string) => boolean {
  const searches = searchesOf(patterns);
  const [only] = searches;
  if (searches.length === 1 && only) return (text) => only.test(text);
  return (text) => searches.some((search) => search.test(text));
}

/** The searches over `patterns`: one per set of flags, and one for each pattern searched alone. */
function searchesOf(patterns: readonly RegExp[]): RegExp[] {
  const byFlags = new Map<string, string[]>();
  const alone: RegExp[] = [];
  for (const pattern of patterns) {
    const flags = pattern.flags.replace(/[gy]/g, '');
    if (OWN_GROUPS.test(pattern.source)) {
      alone.push(new RegExp(pattern.source, flags));
      continue;
    }
    const sources = byFlags.get(flags) ?? [];
    sources.push(pattern.source);
    byFlags.set(flags, sources);
  }
  return [
    ...[...byFlags].map(([flags, sources]) => new RegExp(joinedSource(sources, flags), flags)),
    ...alone,
  ];
}
