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
 * dropping the least recently used first. A key longer than the budget is computed and not kept.
 *
 * @param budgetChars the most characters of keys held at once; a positive integer.
 * @throws RangeError when `budgetChars` is not a positive integer.
 */
export function createTextMemo<T>(budgetChars: number): TextMemo<T> {
  if (!Number.isInteger(budgetChars) || budgetChars <= 0)
    throw new RangeError(`createTextMemo: budgetChars must be a positive integer, got ${budgetChars}`);
  const entries = new Map<string, T>();
  // Keys in the order they were last used, oldest first. One live iterator is kept: a map keeps a
  // deleted entry's slot until it is rehashed, and a new iterator would step over every slot freed
  // by an eviction or a use so far, each time; this one resumes where the last eviction stopped and
  // still meets the keys set after it was made (a map's iterators see later insertions).
  let oldestFirst = entries.keys();
  let held = 0;
  return {
    get(key, compute) {
      if (entries.has(key)) {
        const value = entries.get(key) as T;
        entries.delete(key);
        entries.set(key, value);
        return value;
      }
      const value = compute();
      const cost = key.length + 1;
      if (cost > budgetChars) return value;
      entries.set(key, value);
      held += cost;
      while (held > budgetChars) {
        let next = oldestFirst.next();
        // Only when an earlier eviction ran to the end (not reached: the key just set stays).
        if (next.done) {
          oldestFirst = entries.keys();
          next = oldestFirst.next();
          if (next.done) break;
        }
        entries.delete(next.value);
        held -= next.value.length + 1;
      }
      return value;
    },
  };
}
