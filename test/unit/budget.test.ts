import { describe, expect, it } from 'vitest';
import {
  type BudgetLimit,
  budgetLimits,
  budgetSchema,
  budgetWindows,
  decideBudget,
  estimatedCostUsd,
  utcDayStart,
  utcMonthStart,
} from '../../shared/policy/budget.ts';
import { policySchema } from '../../shared/policy/policy.ts';
import { costUsd } from '../../shared/summary/pricing.ts';

const at = (iso: string) => Date.parse(iso);

describe('budget windows (UTC)', () => {
  it('a day starts at 00:00 UTC, whatever the local time zone', () => {
    expect(utcDayStart(at('2026-03-14T23:59:59.999Z')).toISOString()).toBe('2026-03-14T00:00:00.000Z');
    expect(utcDayStart(at('2026-03-15T00:00:00.000Z')).toISOString()).toBe('2026-03-15T00:00:00.000Z');
    // 01:30 in UTC+2 is still the previous UTC day.
    expect(utcDayStart(at('2026-03-15T01:30:00+02:00')).toISOString()).toBe('2026-03-14T00:00:00.000Z');
  });

  it('a month starts on the 1st at 00:00 UTC, across years and leap days', () => {
    expect(utcMonthStart(at('2026-12-31T23:59:59Z')).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(utcMonthStart(at('2027-01-01T00:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(utcMonthStart(at('2028-02-29T12:00:00Z')).toISOString()).toBe('2028-02-01T00:00:00.000Z');
    expect(budgetWindows(at('2028-02-29T12:00:00Z'))).toEqual({
      dayStart: new Date('2028-02-29T00:00:00Z'),
      monthStart: new Date('2028-02-01T00:00:00Z'),
    });
  });
});

describe('budget schema', () => {
  it('defaults onExceeded to extractive and lives in a policy', () => {
    expect(budgetSchema.parse({ dailyUsd: 0.5 })).toEqual({ dailyUsd: 0.5, onExceeded: 'extractive' });
    const policy = policySchema.parse({
      strategy: { type: 'summarize', keepRecent: 10 },
      budget: { monthlyUsd: 20, onExceeded: 'skip' },
    });
    expect(policy.budget).toEqual({ monthlyUsd: 20, onExceeded: 'skip' });
  });

  it('refuses a budget without a limit, a zero or negative limit, an unknown action or field', () => {
    expect(budgetSchema.safeParse({ onExceeded: 'skip' }).success).toBe(false);
    expect(budgetSchema.safeParse({ dailyUsd: 0 }).success).toBe(false);
    expect(budgetSchema.safeParse({ dailyUsd: -1 }).success).toBe(false);
    expect(budgetSchema.safeParse({ dailyUsd: 1, onExceeded: 'panic' }).success).toBe(false);
    expect(budgetSchema.safeParse({ dailyUsd: 1, weeklyUsd: 3 }).success).toBe(false);
  });
});

describe('budgetLimits', () => {
  const tenant = budgetSchema.parse({ dailyUsd: 1, monthlyUsd: 10, onExceeded: 'skip' });
  const agent = budgetSchema.parse({ dailyUsd: 0.2 });

  it("applies the agent's budget and the tenant's, most specific first", () => {
    expect(budgetLimits(agent, tenant, 'coder')).toEqual([
      { scope: 'agent', period: 'daily', limitUsd: 0.2, onExceeded: 'extractive' },
      { scope: 'tenant', period: 'daily', limitUsd: 1, onExceeded: 'skip' },
      { scope: 'tenant', period: 'monthly', limitUsd: 10, onExceeded: 'skip' },
    ]);
  });

  it('has no agent limit for a session without an agent, and none at all without budgets', () => {
    expect(budgetLimits(agent, undefined, null)).toEqual([]);
    expect(budgetLimits(undefined, undefined, 'coder')).toEqual([]);
  });
});

describe('decideBudget', () => {
  const daily: BudgetLimit = { scope: 'tenant', period: 'daily', limitUsd: 0.5, onExceeded: 'extractive' };
  const monthly: BudgetLimit = { scope: 'tenant', period: 'monthly', limitUsd: 5, onExceeded: 'skip' };
  const spend = (dailySpent: number, reserved = 0, monthlySpent = dailySpent) => ({
    tenant: {
      daily: { spentUsd: dailySpent, reservedUsd: reserved },
      monthly: { spentUsd: monthlySpent, reservedUsd: reserved },
    },
  });

  it('allows a summary that fits, up to the limit exactly', () => {
    expect(decideBudget([daily], spend(0.4), 0.1)).toEqual({ allowed: true });
    expect(decideBudget([daily], {}, 0.5)).toEqual({ allowed: true });
  });

  it("refuses one that would exceed the limit, with the policy's action and the figures", () => {
    expect(decideBudget([daily, monthly], spend(0.48), 0.05)).toEqual({
      allowed: false,
      action: 'extractive',
      limit: daily,
      reason: 'budget: daily 0.50 USD of the tenant, spent 0.48, this summary ≈0.05',
    });
  });

  it('counts what summaries in flight reserved as spent', () => {
    const decision = decideBudget([daily], spend(0.3, 0.18), 0.05);
    expect(decision).toMatchObject({ allowed: false });
    if (!decision.allowed) expect(decision.reason).toContain('spent 0.48 (0.18 of it in flight)');
  });

  it('checks the month when the day has room', () => {
    expect(decideBudget([daily, monthly], spend(0, 0, 4.99), 0.05)).toMatchObject({
      allowed: false,
      action: 'skip',
      limit: monthly,
    });
  });

  it('refuses nothing when no limit applies', () => {
    expect(decideBudget([], spend(1_000), 1_000)).toEqual({ allowed: true });
  });
});

describe('estimatedCostUsd', () => {
  it('prices input at the cache-write rate and the whole max_tokens at the output rate: an upper bound', () => {
    const estimate = { model: 'claude-haiku-4-5', inputTokens: 10_000, maxOutputTokens: 2_000 };
    // 10,000 × 1.25 / 1e6 + 2,000 × 5 / 1e6
    expect(estimatedCostUsd(estimate)).toBeCloseTo(0.0225, 9);
    const real = costUsd('claude-haiku-4-5', {
      inputTokens: 9_000,
      cacheWriteTokens: 1_000,
      cacheReadTokens: 0,
      outputTokens: 800,
    });
    expect(real.usd).toBeLessThan(estimatedCostUsd(estimate));
  });

  it('is 0 for a model without a price', () => {
    expect(estimatedCostUsd({ model: 'claude-unknown-9', inputTokens: 1e6, maxOutputTokens: 1e4 })).toBe(0);
  });
});
