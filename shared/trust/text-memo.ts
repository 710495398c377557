/**
 * A bounded memo of a pure function of a text: the worker reads the same message text for prompt
 * injections in several stages of one job (the summary guard, the fidelity check, the checkpoint's
 * render), and a detector pass costs far more than a map lookup. The memo holds the most recently
 * used texts up to a budget of characters, so a flood of large texts cannot grow it without bound.
 */

/** A memo of `compute` by text; `get` returns the stored answer or computes and stores it. */
export interface TextMemo<T> {
  get(key: string, compute: () => T): T;
}

/**
 * A memo holding at most `budgetChars` characters of keys (each key counts its length plus one),
 * in two generations of half the budget each: texts are stored in the young one, a text found in
 * the old one moves to the young one, and when the young one is full it becomes the old one and
 * the old one is dropped whole. A text stays while the distinct texts used after it fit beside it
 * in half the budget (its own length counted). (A least-recently-used list, which keeps a
 * little more, deleted one entry per store: over a detector pass's worth of short texts, its upkeep
 * cost about as much as the passes it saved.) A key longer than half the budget is computed and
 * not kept.
 *
 * @param budgetChars the most characters of keys held at once; a positive integer.
 * @throws RangeError when `budgetChars` is not a positive integer.
 */
export function createTextMemo<T>(budgetChars: number): TextMemo<T> {
  if (!Number.isInteger(budgetChars) || budgetChars <= 0)
    throw new RangeError(`createTextMemo: budgetChars must be a positive integer, got ${budgetChars}`);
  const generationChars = Math.floor(budgetChars / 2);
  let young = new Map<string, T>();
  let old = new Map<string, T>();
  let held = 0;
  const store = (key: string, value: T) => {
    const cost = key.length + 1;
    if (cost > generationChars) return;
    if (held + cost > generationChars) {
      old = young;
      young = new Map();
      held = 0;
    }
    young.set(key, value);
    held += cost;
  };
  return {
    get(key, compute) {
      const fresh = young.get(key);
      if (fresh !== undefined || young.has(key)) return fresh as T;
      if (old.has(key)) {
        const value = old.get(key) as T;
        old.delete(key);
        store(key, value);
        return value;
      }
      const value = compute();
      store(key, value);
      return value;
    },
  };
}
