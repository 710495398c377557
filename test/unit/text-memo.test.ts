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
