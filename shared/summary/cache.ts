/**
 * Prompt caching's minimum cacheable prefix per model, and where a summary request may put its
 * `cache_control` breakpoints. Pure.
 *
 * Source: Anthropic's prompt-caching documentation ("Cache limitations": minimum cacheable prompt
 * length), as of 2026-09. A prefix shorter than the model's minimum is not cached, silently: the
 * request succeeds, `cache_creation_input_tokens` is 0, and the breakpoint was wasted (a request
 * may carry at most {@link MAX_CACHE_BREAKPOINTS}).
 *
 * Models released after that table was checked (Haiku 5.5, Sonnet 5.5, Fable 5.2, Mythos 5.2, the
 * current ones @anthropic-ai/sdk 1.11 lists) are not in it: they get
 * {@link DEFAULT_MIN_CACHEABLE_TOKENS}. That errs cheap either way: a breakpoint under a model's
 * real minimum caches nothing and costs nothing, and a prefix between the real minimum and 1,024
 * tokens is only sent uncached.
 */

/** Most `cache_control` breakpoints one Messages API request may carry (the API refuses more). */
export const MAX_CACHE_BREAKPOINTS = 4;

/** Minimum of a model the table does not know, tokens: the most common value. */
export const DEFAULT_MIN_CACHEABLE_TOKENS = 1_024;

/**
 * The documented minimums, tokens, by model family and version (`opus-4.5` is `claude-opus-4-5`,
 * `claude-opus-4-5-20251101`, ...).
 */
export const MIN_CACHEABLE_TOKENS: Readonly<Record<string, number>> = {
  'haiku-4.5': 4_096,
  'opus-4.5': 4_096,
  'opus-4.6': 4_096,
  'haiku-3.5': 2_048,
  'opus-4.7': 2_048,
  'sonnet-4': 1_024,
  'sonnet-4.5': 1_024,
  'sonnet-4.6': 1_024,
  'sonnet-5': 1_024,
  'opus-4': 1_024,
  'opus-4.1': 1_024,
  'opus-4.8': 1_024,
  'opus-5': 512,
  'opus-5.5': 512,
  'fable-5': 512,
  'fable-5.1': 512,
  'mythos-5': 512,
  'mythos-5.1': 512,
};

/**
 * `family-version` of a model id: `claude-haiku-4-5` and `claude-haiku-4-5-20251001` → `haiku-4.5`,
 * `claude-3-5-haiku-latest` → `haiku-3.5`, `claude-opus-4-20250514` → `opus-4`; null when the id
 * names no known family. A date suffix (8 digits) is not a version.
 */
export function modelFamilyVersion(model: string): string | null {
  const id = model.toLowerCase();
  const modern = /(opus|sonnet|haiku|fable|mythos)-(\d{1,2})(?:[-.](\d{1,2}))?(?!\d)/.exec(id);
  if (modern?.[1] && modern[2]) return `${modern[1]}-${modern[2]}${modern[3] ? `.${modern[3]}` : ''}`;
  const legacy = /claude-(\d)(?:[-.](\d))?-(opus|sonnet|haiku)/.exec(id);
  if (legacy?.[1] && legacy[3]) return `${legacy[3]}-${legacy[1]}${legacy[2] ? `.${legacy[2]}` : ''}`;
  return null;
}

/**
 * The minimum cacheable prefix of `model`, tokens: the documented value (see the file's comment),
 * or {@link DEFAULT_MIN_CACHEABLE_TOKENS} for a model the table does not list.
 */
export function minCacheableTokens(model: string): number {
  const key = modelFamilyVersion(model);
  return (key && MIN_CACHEABLE_TOKENS[key]) || DEFAULT_MIN_CACHEABLE_TOKENS;
}

/** Where a summary request puts its breakpoints, and why. */
export interface CachePlan {
  /** Whether the system block (after the tool: tools, then system) carries a breakpoint. */
  system: boolean;
  /** Whether the user turn's text block (the end of the whole prompt) carries one. */
  userTurn: boolean;
  /** The model's minimum, tokens. */
  minTokens: number;
}

/**
 * Breakpoints of a summary request: one after tools + system when that prefix alone reaches the
 * model's minimum (it is the same for every call, so every summary reads it), and one at the end
 * of the user turn when the whole prompt reaches it (a retry of the same request, after an invalid
 * answer or an overloaded error within the cache's 5 minutes, reads all of it instead of paying
 * again). Never one whose prefix is under the minimum: it would not cache, and the API would
 * still count it toward its 4. The caller's estimates should err low (compactor counts about 4
 * characters a token of unescaped text, fewer tokens than the API finds in code), so that a
 * breakpoint is placed only where the prefix surely reaches the minimum.
 * @param model the request's model id.
 * @param prefixTokens estimated tokens of the tool definition and the system prompt.
 * @param totalTokens estimated tokens of the whole request input (prefix and user turn).
 */
export function planCacheBreakpoints(model: string, prefixTokens: number, totalTokens: number): CachePlan {
  const minTokens = minCacheableTokens(model);
  return { system: prefixTokens >= minTokens, userTurn: totalTokens >= minTokens, minTokens };
}
