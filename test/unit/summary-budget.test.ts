/**
 * Unit tests of the summary budget (shared/summary/budget.ts), the minimum cacheable prefix per
 * model (shared/summary/cache.ts) and the grown budget a fallback summarizer gets.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../shared/contract/message.ts';
import {
  analysisAllowanceTokens,
  analysisWordTarget,
  summaryBudgetTokens,
  summaryMaxTokens,
} from '../../shared/summary/budget.ts';
import { minCacheableTokens, modelFamilyVersion, planCacheBreakpoints } from '../../shared/summary/cache.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { noUsage, type Summarizer, withSummaryBudget } from '../../shared/summary/summarizer.ts';

describe('summaryBudgetTokens', () => {
  it('is the configured value for small compactions: the floor', () => {
    expect(summaryBudgetTokens(2_000, 0)).toBe(2_000);
    expect(summaryBudgetTokens(2_000, 1_000)).toBe(2_000);
    expect(summaryBudgetTokens(2_000, 28_000)).toBe(2_000);
  });

  it('grows with the leaving tokens, 7% of them', () => {
    expect(summaryBudgetTokens(2_000, 50_000)).toBe(3_500);
    expect(summaryBudgetTokens(2_000, 90_000)).toBe(6_300);
  });

  it('stops at 4x the configured value, and at 16,000 tokens whatever is configured', () => {
    expect(summaryBudgetTokens(2_000, 200_000)).toBe(8_000);
    expect(summaryBudgetTokens(2_000, 10_000_000)).toBe(8_000);
    expect(summaryBudgetTokens(8_000, 10_000_000)).toBe(16_000);
    // A configured value above the absolute cap is still the floor.
    expect(summaryBudgetTokens(20_000, 10_000_000)).toBe(20_000);
  });

  it('never passes a quarter of the leaving tokens unless the floor does', () => {
    for (const leaving of [3_000, 10_000, 40_000, 120_000, 1_000_000]) {
      const budget = summaryBudgetTokens(1_000, leaving);
      expect(budget, String(leaving)).toBeLessThanOrEqual(Math.max(1_000, leaving / 4));
      expect(budget, String(leaving)).toBeGreaterThanOrEqual(1_000);
    }
    expect(summaryBudgetTokens(2_000, 500)).toBe(2_000);
  });

  it('treats a missing or non-finite leaving count as nothing, and refuses a bad configured value', () => {
    expect(summaryBudgetTokens(2_000, Number.NaN)).toBe(2_000);
    expect(summaryBudgetTokens(2_000, -5)).toBe(2_000);
    expect(() => summaryBudgetTokens(0, 100)).toThrow(RangeError);
    expect(() => summaryBudgetTokens(1.5, 100)).toThrow(/positive integer/);
  });

  it('leaves max_tokens room for the analysis: half the budget, 1,024 to 4,096 tokens', () => {
    expect(analysisAllowanceTokens(2_000)).toBe(1_024);
    expect(analysisAllowanceTokens(6_300)).toBe(3_150);
    expect(analysisAllowanceTokens(16_000)).toBe(4_096);
    expect(summaryMaxTokens(2_000)).toBe(3_024);
    // The analysis is asked to stay well under its allowance.
    expect(analysisWordTarget(2_000)).toBe(350);
    expect(analysisWordTarget(2_000) / 0.75).toBeLessThan(analysisAllowanceTokens(2_000));
  });
});

describe('minCacheableTokens', () => {
  it('gives the documented minimum of each model', () => {
    expect(minCacheableTokens('claude-haiku-4-5')).toBe(4_096);
    expect(minCacheableTokens('claude-haiku-4-5-20251001')).toBe(4_096);
    expect(minCacheableTokens('claude-opus-4-5')).toBe(4_096);
    expect(minCacheableTokens('claude-opus-4-6')).toBe(4_096);
    expect(minCacheableTokens('claude-3-5-haiku-latest')).toBe(2_048);
    expect(minCacheableTokens('claude-opus-4-7')).toBe(2_048);
    expect(minCacheableTokens('claude-sonnet-4-20250514')).toBe(1_024);
    expect(minCacheableTokens('claude-sonnet-4-6')).toBe(1_024);
    expect(minCacheableTokens('claude-opus-4-1')).toBe(1_024);
    expect(minCacheableTokens('claude-sonnet-5')).toBe(1_024);
    expect(minCacheableTokens('claude-opus-5-5')).toBe(512);
    expect(minCacheableTokens('claude-fable-5-1')).toBe(512);
    expect(minCacheableTokens('claude-mythos-5')).toBe(512);
  });

  it('uses 1,024 for a model it does not know', () => {
    expect(minCacheableTokens('claude-test')).toBe(1_024);
    expect(minCacheableTokens('claude-haiku-9-9')).toBe(1_024);
    expect(modelFamilyVersion('gpt-x')).toBeNull();
  });

  it('places a breakpoint only where the prefix reaches the minimum', () => {
    expect(planCacheBreakpoints('claude-haiku-4-5', 2_800, 3_500)).toEqual({
      system: false,
      userTurn: false,
      minTokens: 4_096,
    });
    expect(planCacheBreakpoints('claude-haiku-4-5', 2_800, 20_000)).toMatchObject({
      system: false,
      userTurn: true,
    });
    expect(planCacheBreakpoints('claude-sonnet-4-6', 2_800, 3_500)).toMatchObject({
      system: true,
      userTurn: true,
    });
  });
});

describe('withSummaryBudget', () => {
  it('gives a stand-in summarizer the grown budget, under its own name', async () => {
    const seen: number[] = [];
    const inner: Summarizer = {
      name: 'extractive',
      async summarize(input) {
        seen.push(input.maxSummaryTokens);
        return { checkpoint: { ...emptyCheckpoint(), goal: 'g' }, usage: noUsage() };
      },
    };
    const wrapped = withSummaryBudget(inner);
    expect(wrapped.name).toBe('extractive');
    const base = {
      tenantId: 't',
      sessionId: 's',
      previous: null,
      leaving: [] as Message[],
      maxSummaryTokens: 2_000,
    };
    await wrapped.summarize({ ...base, leavingTokens: 90_000 });
    await wrapped.summarize(base);
    expect(seen).toEqual([6_300, 2_000]);
  });
});
