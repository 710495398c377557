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
  it('keeps exactly the most recently used texts that fit, as a plain least-recently-used list would', () => {
    const budget = 200;
    const memo = createTextMemo<string>(budget);
    // The reference: keys in order of last use, oldest first.
    let order: string[] = [];
    let held = 0;
    let state = 7;
    const random = () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    for (let i = 0; i < 2_000; i++) {
      const key = `text ${Math.floor(random() * 60)} ${'x'.repeat(Math.floor(random() * 30))}`;
      const kept = order.includes(key);
      let computed = false;
      memo.get(key, () => {
        computed = true;
        return key;
      });
      expect(computed).toBe(!kept);
      if (kept) order = [...order.filter((k) => k !== key), key];
      else {
        order.push(key);
        held += key.length + 1;
        while (held > budget) {
          const oldest = order.shift() as string;
          held -= oldest.length + 1;
        }
      }
    }
  });
});
