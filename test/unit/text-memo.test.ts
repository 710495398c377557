import { describe, expect, it } from 'vitest';
import { createTextMemo } from '../../shared/trust/text-memo.ts';

describe('createTextMemo', () => {
  it('computes a text once and answers the same again from the memo', () => {
    const memo = createTextMemo<number>(100);
    let calls = 0;
    const compute = () => ++calls;
    expect(memo.get('hello', compute)).toBe(1);
    expect(memo.get('hello', compute)).toBe(1);
    expect(memo.get('world', compute)).toBe(2);
    expect(calls).toBe(2);
  });

  it('drops the least recently used text when the budget of characters is exceeded', () => {
    const memo = createTextMemo<string>(12);
    let calls = 0;
    const compute = () => `v${++calls}`;
    memo.get('aaaaa', compute); // 6 chars held
    memo.get('bbbbb', compute); // 12 held
    memo.get('aaaaa', compute); // hit: a is now the most recent
    memo.get('ccccc', compute); // over budget: b goes
    expect(memo.get('aaaaa', compute)).toBe('v1');
    expect(memo.get('bbbbb', compute)).toBe('v4');
  });

  it('computes a text longer than the budget every time without keeping it', () => {
    const memo = createTextMemo<number>(4);
    let calls = 0;
    expect(memo.get('too long', () => ++calls)).toBe(1);
    expect(memo.get('too long', () => ++calls)).toBe(2);
  });

  it('refuses a budget that is not a positive integer', () => {
    expect(() => createTextMemo(0)).toThrow(/budgetChars must be a positive integer, got 0/);
    expect(() => createTextMemo(1.5)).toThrow(/budgetChars/);
  });
});

describe('createTextMemo over many evictions', () => {
  it('keeps every text whose later distinct texts fit in half the budget, and answers each text with its own value', () => {
    const budget = 1_000;
    const half = budget / 2;
    const memo = createTextMemo<string>(budget);
    // For each text: the distinct texts used since its last use.
    const since = new Map<string, Set<string>>();
    const cost = (key: string) => key.length + 1;
    let state = 7;
    const random = () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    let hits = 0;
    let checked = 0;
    for (let i = 0; i < 5_000; i++) {
      const id = Math.floor(random() * 60);
      const key = `text ${id} ${'x'.repeat(id % 20)}`;
      let computed = false;
      const value = memo.get(key, () => {
        computed = true;
        return `value of ${key}`;
      });
      expect(value).toBe(`value of ${key}`);
      const used = since.get(key);
      if (used) {
        const later = [...used].reduce((sum, k) => sum + cost(k), 0);
        // Kept for sure while what came after it fits beside it in one half of the budget.
        if (later + cost(key) <= half) {
          expect(computed, `${key} after ${later} characters`).toBe(false);
          checked++;
        }
      }
      if (!computed) hits++;
      for (const [other, set] of since) if (other !== key) set.add(key);
      since.set(key, new Set());
    }
    expect(checked).toBeGreaterThan(100);
    // And it forgets: texts past the budget are computed again.
    expect(hits).toBeLessThan(5_000 - 100);
  });
});
