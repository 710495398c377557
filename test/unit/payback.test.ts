import { describe, expect, it } from 'vitest';
import {
  addMeasuredRequest,
  expectedRequests,
  type PaybackPrediction,
  paybackSchema,
  paybackSkipReason,
  predictPayback,
} from '../../shared/policy/payback.ts';
import { policySchema } from '../../shared/policy/policy.ts';
import { describeZodError, runCompletedEventSchema } from '../../shared/protocol/events.ts';

// claude-sonnet-4-6: input $3, output $15, cache write $3.75, cache read $0.30 per MTok.
const SONNET = 'claude-sonnet-4-6';

describe('predictPayback', () => {
  it('prices saved tokens at the cache-read rate and the rewrite at write minus read', () => {
    const p = predictPayback({
      tokensBefore: 150_000,
      tokensAfter: 20_000,
      requests: 20,
      horizon: 'policy',
      agentModel: SONNET,
      promptCaching: true,
      summary: { model: SONNET, inputTokens: 130_000, maxOutputTokens: 4_000 },
    });
    // 130,000 tokens × 20 requests × $0.30/MTok
    expect(p.savingsUsd).toBeCloseTo(0.78, 9);
    // summary 130,000 × $3 + 4,000 × $15 = $0.45; rewrite 20,000 × ($3.75 − $0.30) = $0.069
    expect(p.inputs.summaryUsd).toBeCloseTo(0.45, 9);
    expect(p.inputs.rewriteUsd).toBeCloseTo(0.069, 9);
    expect(p.costUsd).toBeCloseTo(0.519, 9);
    expect(p.ratio).toBeCloseTo(1.5029, 4);
    expect(p.inputs).toMatchObject({ tokensSavedPerRequest: 130_000, requests: 20, pricedAs: SONNET });
  });

  it('costs only the rewrite for a strategy without a summary, and nothing without caching', () => {
    const base = {
      tokensBefore: 60_000,
      tokensAfter: 40_000,
      requests: 3,
      horizon: 'history' as const,
      agentModel: SONNET,
      summary: null,
    };
    const cached = predictPayback({ ...base, promptCaching: true });
    expect(cached.inputs.summaryUsd).toBe(0);
    expect(cached.costUsd).toBeCloseTo(0.138, 9); // 40,000 × $3.45/MTok
    expect(cached.savingsUsd).toBeCloseTo(0.018, 9); // 20,000 × 3 × $0.30/MTok
    expect(cached.ratio).toBeCloseTo(0.1304, 4);
    const uncached = predictPayback({ ...base, promptCaching: false });
    expect(uncached.savingsUsd).toBeCloseTo(0.18, 9); // at the $3 input rate
    expect(uncached.ratio).toBeNull(); // free: it pays whatever it saves
  });

  it('prices an agent on gpt-5.5 at its cached input rate, its rewrite without a write premium', () => {
    // gpt-5.5: input $5, cached input $0.50, output $30 per MTok; OpenAI charges no cache write
    // before GPT-5.6, so a rewritten prefix costs the input rate instead of the cached one.
    // gpt-5.4-mini (the summary): input $0.75, output $4.50 per MTok.
    const p = predictPayback({
      tokensBefore: 150_000,
      tokensAfter: 20_000,
      requests: 20,
      horizon: 'policy',
      agentModel: 'gpt-5.5',
      promptCaching: true,
      summary: { model: 'gpt-5.4-mini', inputTokens: 130_000, maxOutputTokens: 4_000 },
    });
    expect(p.inputs).toMatchObject({ pricedAs: 'gpt-5.5', savedTokenUsd: 0.5 / 1_000_000 });
    expect(p.savingsUsd).toBeCloseTo(1.3, 9); // 130,000 × 20 × $0.50/MTok
    expect(p.inputs.summaryUsd).toBeCloseTo(0.1155, 9); // 130,000 × $0.75 + 4,000 × $4.50
    expect(p.inputs.rewriteUsd).toBeCloseTo(0.09, 9); // 20,000 × ($5 − $0.50)
    expect(p.costUsd).toBeCloseTo(0.2055, 9);
    expect(p.ratio).toBeCloseTo(6.326, 3);
    const uncached = predictPayback({
      tokensBefore: 150_000,
      tokensAfter: 20_000,
      requests: 20,
      horizon: 'policy',
      agentModel: 'openai/gpt-5.5-2026-04-23',
      promptCaching: false,
      summary: null,
    });
    expect(uncached.inputs.pricedAs).toBe('gpt-5.5');
    expect(uncached.savingsUsd).toBeCloseTo(13, 9); // at the $5 input rate
    expect(uncached.costUsd).toBe(0);
  });

  it('prices an unknown agent model at 0 and says so', () => {
    const p = predictPayback({
      tokensBefore: 10_000,
      tokensAfter: 1_000,
      requests: 5,
      horizon: 'policy',
      agentModel: 'some-model-nobody-priced',
      promptCaching: true,
      summary: null,
    });
    expect(p.inputs.pricedAs).toBeNull();
    expect(p.savingsUsd).toBe(0);
  });
});

describe('expectedRequests', () => {
  it("takes the policy's horizon, else as many requests again as the live history shows", () => {
    expect(expectedRequests(20, 7)).toEqual({ requests: 20, source: 'policy' });
    expect(expectedRequests(undefined, 7)).toEqual({ requests: 7, source: 'history' });
    expect(expectedRequests(undefined, 0)).toEqual({ requests: 1, source: 'history' });
  });
});

describe('paybackSkipReason', () => {
  const poor = predictPayback({
    tokensBefore: 60_000,
    tokensAfter: 40_000,
    requests: 3,
    horizon: 'history',
    agentModel: SONNET,
    promptCaching: true,
    summary: null,
  });
  const context = { trigger: 'event' as const, tokenCount: 60_000, contextWindow: 200_000 };

  it('skips under minRatio with the numbers in the reason', () => {
    expect(paybackSkipReason(poor, { minRatio: 1, promptCaching: true }, context)).toBe(
      'payback: predicted ratio 0.1304 < minRatio 1: saves 20000 tokens × 3 requests (history) ≈ 0.0180 USD ' +
        'at claude-sonnet-4-6 cache reads; costs 0.1380 USD (summary 0.0000, cache rewrite 0.1380)',
    );
  });

  it('never skips without the option, a manual run, a full window, a free or unpriced compaction', () => {
    const policy = { minRatio: 1, promptCaching: true };
    expect(paybackSkipReason(poor, undefined, context)).toBeNull();
    expect(paybackSkipReason(poor, { minRatio: 0.1, promptCaching: true }, context)).toBeNull();
    expect(paybackSkipReason(poor, policy, { ...context, trigger: 'manual' })).toBeNull();
    expect(paybackSkipReason(poor, policy, { ...context, contextWindow: 60_000 })).toBeNull();
    const free: PaybackPrediction = { ...poor, ratio: null };
    expect(paybackSkipReason(free, policy, context)).toBeNull();
    const unpriced: PaybackPrediction = { ...poor, inputs: { ...poor.inputs, pricedAs: null } };
    expect(paybackSkipReason(unpriced, policy, context)).toBeNull();
  });
});

describe('addMeasuredRequest', () => {
  const inputs = {
    tokensSavedPerRequest: 100_000,
    agentModel: SONNET,
    promptCaching: true,
    rewriteUsd: 0.05,
  };

  it('adds each reported prompt and what it would have held, priced by whether it read the cache', () => {
    const one = addMeasuredRequest(null, inputs, 0.1, { inputTokens: 30_000, cacheReadTokens: 25_000 });
    expect(one).toMatchObject({ requests: 1, tokensSent: 30_000, tokensWithout: 130_000 });
    expect(one.savingsUsd).toBeCloseTo(0.03, 9); // 100,000 × $0.30/MTok
    expect(one.ratio).toBeCloseTo(0.2, 4); // of $0.10 summary + $0.05 rewrite
    const two = addMeasuredRequest(one, inputs, 0.1, { inputTokens: 32_000, cacheReadTokens: 0 });
    expect(two).toMatchObject({ requests: 2, tokensSent: 62_000, tokensWithout: 262_000 });
    expect(two.savingsUsd).toBeCloseTo(0.33, 9); // + 100,000 × $3/MTok: that request missed the cache
    const unsaid = addMeasuredRequest(null, inputs, 0.1, { inputTokens: 30_000 });
    expect(unsaid.savingsUsd).toBeCloseTo(0.03, 9); // the policy's assumption: cached
  });
});

describe('the policy option', () => {
  it('is absent by default and refuses a bad ratio by name', () => {
    expect(policySchema.parse({ strategy: { type: 'none' } }).payback).toBeUndefined();
    expect(paybackSchema.parse({ minRatio: 1.5 })).toEqual({ minRatio: 1.5, promptCaching: true });
    const bad = policySchema.safeParse({ strategy: { type: 'none' }, payback: { minRatio: -1 } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['payback', 'minRatio']);
    const unpriced = policySchema.safeParse({
      strategy: { type: 'none' },
      payback: { minRatio: 1, model: 'claude-unheard-of' },
    });
    expect(unpriced.success).toBe(false);
    expect(unpriced.error && describeZodError(unpriced.error, 'policy')).toBe(
      'policy.payback.model: has no price in the pricing table: name a priced model (e.g. claude-sonnet-4-6, gpt-5.5)',
    );
    expect(paybackSchema.parse({ minRatio: 1, model: 'claude-opus-4-6-20260101' }).model).toBe(
      'claude-opus-4-6-20260101',
    );
  });

  it('takes an OpenAI model the table prices, and refuses one it does not (GPT-5.6 writes cost extra)', () => {
    expect(paybackSchema.parse({ minRatio: 1, model: 'gpt-5.5' }).model).toBe('gpt-5.5');
    expect(paybackSchema.parse({ minRatio: 1, model: 'gpt-5.4-mini-2026-03-17' }).model).toBe(
      'gpt-5.4-mini-2026-03-17',
    );
    const unpriced = policySchema.safeParse({
      strategy: { type: 'none' },
      payback: { minRatio: 1, model: 'gpt-5.6' },
    });
    expect(unpriced.error && describeZodError(unpriced.error, 'policy')).toBe(
      'policy.payback.model: has no price in the pricing table: name a priced model (e.g. claude-sonnet-4-6, gpt-5.5)',
    );
  });
});

describe('session.run.completed cacheReadTokens', () => {
  const event = { eventId: 'e-1', tenantId: 't', sessionId: 's' };

  it('is accepted within inputTokens and refused, by name, without them or above them', () => {
    expect(
      runCompletedEventSchema.parse({ ...event, inputTokens: 10, cacheReadTokens: 8 }).cacheReadTokens,
    ).toBe(8);
    for (const bad of [{ cacheReadTokens: 8 }, { inputTokens: 7, cacheReadTokens: 8 }]) {
      const parsed = runCompletedEventSchema.safeParse({ ...event, ...bad });
      expect(parsed.success).toBe(false);
      if (!parsed.success) {
        expect(describeZodError(parsed.error)).toBe(
          'event.cacheReadTokens: must come with inputTokens and be at most inputTokens (cache reads are part of the prompt)',
        );
      }
    }
  });
});
