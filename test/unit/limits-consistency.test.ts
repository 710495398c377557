/**
 * A session never holds more than a read returns: the built-in defaults, the process's defaults
 * (`COMPACTOR_LIMIT_*`) and a tenant policy's `limits` are each refused, naming both settings, when
 * they would let a session grow past `maxContextTokens`; and the append's check holds it to the
 * lower of the two whatever they are set to.
 */
import { describe, expect, it } from 'vitest';
import { limitPassed } from '../../producer/limits.ts';
import { DEFAULT_LIMITS, limitsSchema, resolveLimits } from '../../shared/policy/limits.ts';
import { ConfigError, loadConfig } from '../../worker/config/config.ts';

describe('session and read limits', () => {
  it('by default, a session may hold exactly what a read returns', () => {
    expect(DEFAULT_LIMITS.maxSessionTokens).toBeLessThanOrEqual(DEFAULT_LIMITS.maxContextTokens);
    const limits = loadConfig({}).api?.limits;
    expect(limits?.maxSessionTokens).toBe(limits?.maxContextTokens);
  });

  it('lets COMPACTOR_LIMIT_SESSION_TOKENS follow COMPACTOR_LIMIT_CONTEXT_TOKENS when unset', () => {
    const limits = loadConfig({ COMPACTOR_LIMIT_CONTEXT_TOKENS: '200000' }).api?.limits;
    expect(limits).toMatchObject({ maxSessionTokens: 200_000, maxContextTokens: 200_000 });
    const lower = loadConfig({
      COMPACTOR_LIMIT_CONTEXT_TOKENS: '200000',
      COMPACTOR_LIMIT_SESSION_TOKENS: '150000',
    }).api?.limits;
    expect(lower).toMatchObject({ maxSessionTokens: 150_000, maxContextTokens: 200_000 });
  });

  it('refuses a process whose session limit is above its read limit, naming both', () => {
    const load = () => loadConfig({ COMPACTOR_LIMIT_SESSION_TOKENS: '4000000' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      'invalid environment: COMPACTOR_LIMIT_SESSION_TOKENS (4000000) is above COMPACTOR_LIMIT_CONTEXT_TOKENS (1000000)',
    );
  });

  it('refuses a policy that sets maxSessionTokens above maxContextTokens, naming both', () => {
    const parsed = limitsSchema.safeParse({ maxSessionTokens: 2_000_000, maxContextTokens: 1_000_000 });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ['maxSessionTokens'],
      message: expect.stringContaining('must be at most maxContextTokens'),
    });
    expect(limitsSchema.safeParse({ maxSessionTokens: 500_000, maxContextTokens: 1_000_000 }).success).toBe(
      true,
    );
  });

  it('holds an append to the read limit when only the session limit was raised, naming the read limit', () => {
    const limits = resolveLimits({ maxSessionTokens: 3_000_000 });
    const refused = limitPassed(
      's1',
      limits,
      { messages: 1, tokens: 900_000 },
      { messages: 1, tokens: 200_000 },
    );
    expect(refused?.limit).toBe('maxContextTokens');
    expect(refused?.message).toBe(
      'session "s1" would exceed its limit maxContextTokens of 1000000 estimated tokens (the largest ' +
        'context a read returns) (it holds 900000, the write adds 200000); nothing was written. ' +
        "Compact the session, or raise the limit in the tenant's policy (limits)",
    );
    expect(
      limitPassed('s1', limits, { messages: 1, tokens: 900_000 }, { messages: 1, tokens: 100_000 }),
    ).toBe(null);
  });

  it('names maxSessionTokens when it is the lower of the two', () => {
    const limits = resolveLimits({ maxSessionTokens: 1_000 });
    expect(limitPassed('s1', limits, { messages: 0, tokens: 0 }, { messages: 1, tokens: 1_001 })?.limit).toBe(
      'maxSessionTokens',
    );
  });
});
