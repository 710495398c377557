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

/**
 * A test of whether any of `patterns` matches a text (see the file's comment): true exactly when
 * `patterns.some((p) => new RegExp(p.source, p.flags).test(text))` would be. Never throws on a
 * text; an empty list matches nothing.
 */
export function anyMatch(patterns: readonly RegExp[]): (text: string) => boolean {
  const byFlags = new Map<string, string[]>();
  const alone: RegExp[] = [];
  for (const pattern of patterns) {
    const flags = pattern.flags.replace(/[gy]/g, '');
    if (OWN_GROUPS.test(pattern.source)) {
      alone.push(new RegExp(pattern.source, flags));
      continue;
    }
    const sources = byFlags.get(flags) ?? [];
    sources.push(`(?:${pattern.source})`);
    byFlags.set(flags, sources);
  }
  const searches = [
    ...[...byFlags].map(([flags, sources]) => new RegExp(sources.join('|'), flags)),
    ...alone,
  ];
  const [only] = searches;
  if (searches.length === 1 && only) return (text) => only.test(text);
  return (text) => searches.some((search) => search.test(text));
}
