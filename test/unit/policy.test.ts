import { describe, expect, it } from 'vitest';
import {
  admit,
  checkTriggers,
  contextTokens,
  DEFAULT_POLICY,
  type GateState,
  type Policy,
  policySchema,
  resolvePolicy,
  setsStormGuard,
} from '../../shared/policy/policy.ts';
import { guardOf } from '../../worker/pipeline/change.ts';

const state = (over: Partial<GateState> = {}): GateState => ({
  messageCount: 50,
  tokenCount: 10_000,
  contextWindow: null,
  lastCompactedAt: null,
  lastSeq: 49,
  compactionVersion: 0,
  stormGuardSeq: null,
  childSessionId: null,
  ...over,
});

const policy = (input: unknown): Policy => policySchema.parse(input);
const NOW = 1_800_000_000_000;

describe('resolvePolicy', () => {
  const tenant = policy({
    strategy: { type: 'slidingWindow', maxMessages: 40 },
    triggers: { maxMessages: 100 },
  });
  const agent = policy({ strategy: { type: 'summarize', keepRecent: 5 }, mode: 'newSession' });

  it('takes the event override, then the agent, then the tenant, then the built-in default', () => {
    const override = { type: 'none' } as const;
    expect(resolvePolicy(override, agent, tenant)).toMatchObject({
      strategy: override,
      source: 'agent',
      mode: 'newSession',
    });
    expect(resolvePolicy(undefined, agent, tenant)).toMatchObject({
      strategy: { keepRecent: 5 },
      source: 'agent',
    });
    expect(resolvePolicy(undefined, null, tenant)).toMatchObject({
      strategy: { maxMessages: 40 },
      source: 'tenant',
    });
    expect(resolvePolicy(undefined, null, null)).toMatchObject({ ...DEFAULT_POLICY, source: 'default' });
  });

  it('fills defaults on write and refuses bad policies naming the field', () => {
    expect(policy({ strategy: { type: 'none' } })).toEqual({
      strategy: { type: 'none' },
      triggers: { contextFraction: 0.85, minIntervalMs: 0 },
      mode: 'inPlace',
      enabled: true,
      batch: false,
    });
    const bad = policySchema.safeParse({ strategy: { type: 'none' }, triggers: { contextFraction: 1.5 } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['triggers', 'contextFraction']);
  });
});

describe('checkTriggers', () => {
  const triggers = policy({ strategy: { type: 'none' }, triggers: { maxMessages: 40 } }).triggers;

  it('fires on messages over N', () => {
    expect(checkTriggers(triggers, state({ messageCount: 41 }), NOW)).toMatchObject({ fire: true });
    expect(checkTriggers(triggers, state({ messageCount: 40 }), NOW)).toMatchObject({
      fire: false,
      reason: 'below every trigger: 40 of 40 messages',
    });
  });

  it('fires on tokens over 85% of the context window by default', () => {
    const none = DEFAULT_POLICY.triggers;
    expect(checkTriggers(none, state({ contextWindow: 10_000, tokenCount: 8_501 }), NOW)).toMatchObject({
      fire: true,
      reason: '8501 tokens, over the limit of 8500',
    });
    expect(checkTriggers(none, state({ contextWindow: 10_000, tokenCount: 8_500 }), NOW).fire).toBe(false);
  });

  it('takes the lower of an absolute token limit and the window fraction', () => {
    const t = policy({ strategy: { type: 'none' }, triggers: { maxTokens: 5_000 } }).triggers;
    expect(checkTriggers(t, state({ contextWindow: 100_000, tokenCount: 5_001 }), NOW).fire).toBe(true);
  });

  it('holds back inside the minimum interval, whatever else fires', () => {
    const t = policy({
      strategy: { type: 'none' },
      triggers: { maxMessages: 1, minIntervalMs: 60_000 },
    }).triggers;
    const recent = state({ lastCompactedAt: NOW - 10_000 });
    expect(checkTriggers(t, recent, NOW)).toMatchObject({ fire: false });
    expect(checkTriggers(t, state({ lastCompactedAt: NOW - 61_000 }), NOW).fire).toBe(true);
  });

  it('fires when no trigger applies: no limit set and no context window known', () => {
    expect(checkTriggers(DEFAULT_POLICY.triggers, state(), NOW)).toMatchObject({ fire: true });
  });
});

describe('admit', () => {
  const eff = resolvePolicy(
    undefined,
    null,
    policy({ strategy: { type: 'summarize', keepRecent: 10 }, triggers: { maxMessages: 20 } }),
  );

  it('skips a session that continued in a child, even on a manual request', () => {
    expect(admit({ trigger: 'manual' }, eff, state({ childSessionId: 'c' }), NOW)).toMatchObject({
      fire: false,
    });
  });

  it('lets a manual request through below every trigger', () => {
    expect(admit({ trigger: 'manual' }, eff, state({ messageCount: 3 }), NOW).fire).toBe(true);
    expect(admit({ trigger: 'event' }, eff, state({ messageCount: 3 }), NOW).fire).toBe(false);
  });

  it('skips a disabled policy and a sweep job for a version compacted since', () => {
    const off = { ...eff, enabled: false };
    expect(admit({ trigger: 'event' }, off, state(), NOW).reason).toBe(
      'compaction is disabled by the tenant policy',
    );
    expect(
      admit({ trigger: 'sweep', expectedVersion: 2 }, eff, state({ compactionVersion: 3 }), NOW).reason,
    ).toMatch(/compacted since the sweep saw it/);
  });

  it('storm guard: waits for as many new messages as the strategy keeps', () => {
    const guarded = state({ stormGuardSeq: 49, lastSeq: 55 });
    expect(admit({ trigger: 'event' }, eff, guarded, NOW)).toMatchObject({
      fire: false,
      reason: expect.stringMatching(/storm guard: .* waiting for 4 more message/),
    });
    expect(admit({ trigger: 'event' }, eff, state({ stormGuardSeq: 49, lastSeq: 59 }), NOW).fire).toBe(true);
  });
});

describe('setsStormGuard', () => {
  const tenant = policy({ strategy: { type: 'summarize', keepRecent: 10 }, triggers: { maxMessages: 20 } });
  const looser = { type: 'slidingWindow', maxMessages: 200 } as const;

  it('lets automatic compactions set the guard, with or without a strategy of their own', () => {
    for (const trigger of ['event', 'sweep'] as const) {
      expect(setsStormGuard({ trigger }, resolvePolicy(undefined, null, tenant))).toBe(true);
      expect(setsStormGuard({ trigger }, resolvePolicy(looser, null, tenant))).toBe(true);
    }
  });

  it("lets a manual run of the policy's strategy set the guard", () => {
    expect(setsStormGuard({ trigger: 'manual' }, resolvePolicy(undefined, null, tenant))).toBe(true);
  });

  it('never lets a manual run with its own strategy set the guard', () => {
    const manual = resolvePolicy(looser, null, tenant);
    expect(setsStormGuard({ trigger: 'manual' }, manual)).toBe(false);
    expect(guardOf({ trigger: 'manual' }, manual, 200_000)).toBeNull();
    expect(guardOf({ trigger: 'event' }, manual, 200_000)).toEqual({
      triggers: tenant.triggers,
      contextWindow: 200_000,
    });
  });
});

describe('token triggers with the context size the agent reported', () => {
  const triggers = policy({ strategy: { type: 'none' }, triggers: { contextFraction: 0.85 } }).triggers;
  const window = { contextWindow: 100_000 };

  it('fire on the reported size when the estimate alone would not', () => {
    // Images, tool schemas and system prompts make the real context far larger than the text estimate.
    const reported = state({
      ...window,
      tokenCount: 20_000,
      reportedInputTokens: 90_000,
      reportedTokenCount: 20_000,
    });
    expect(checkTriggers(triggers, reported, NOW)).toEqual({
      fire: true,
      reason: '90000 tokens (as the agent reported them), over the limit of 85000',
    });
    expect(checkTriggers(triggers, state({ ...window, tokenCount: 20_000 }), NOW)).toEqual({
      fire: false,
      reason: 'below every trigger: 20000 of 85000 tokens',
    });
  });

  it('add what was appended since the report, by estimate', () => {
    const stats = { ...window, tokenCount: 26_000, reportedInputTokens: 80_000, reportedTokenCount: 20_000 };
    expect(contextTokens(state(stats))).toBe(86_000);
    expect(checkTriggers(triggers, state(stats), NOW).fire).toBe(true);
  });

  it('a report smaller than the estimate lowers the measure: the agent sent less than was stored', () => {
    const stats = { ...window, tokenCount: 95_000, reportedInputTokens: 40_000, reportedTokenCount: 95_000 };
    expect(contextTokens(state(stats))).toBe(40_000);
    expect(checkTriggers(triggers, state(stats), NOW).fire).toBe(false);
  });
});
