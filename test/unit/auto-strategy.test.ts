/**
 * The `auto` strategy's schema and shorthand (every option defaulted, each stage's options those of
 * its strategy), its stages, and the rule that decides whether the summary stage runs.
 */
import { describe, expect, it } from 'vitest';
import { nextStageFires, resolvePolicy, withInstructions } from '../../shared/policy/policy.ts';
import { parseStrategy, strategySchema, strategyUnit } from '../../shared/strategies/index.ts';

const DEFAULT_AUTO = {
  type: 'auto',
  clear: { keep: 3, clearAtLeast: 1_000, clearToolInputs: false, excludeTools: [] },
  summarize: { keepRecent: 10, maxSummaryTokens: 2_000 },
};

describe('auto strategy', () => {
  it('reads the shorthand `auto` alone, and `{ "type": "auto" }`, as both stages with their defaults', () => {
    expect(parseStrategy('auto')).toEqual(DEFAULT_AUTO);
    expect(parseStrategy('{"type":"auto"}')).toEqual(DEFAULT_AUTO);
    expect(strategySchema.parse({ type: 'auto', clear: {}, summarize: {} })).toEqual(DEFAULT_AUTO);
  });

  it("gives the shorthand's count and tail options to the summary stage", () => {
    expect(parseStrategy('auto:20:5000tokens:userTurn')).toEqual({
      ...DEFAULT_AUTO,
      summarize: { keepRecent: 20, keepRecentTokens: 5_000, cutAtUserTurn: true, maxSummaryTokens: 2_000 },
    });
  });

  it('defaults what a partial JSON form leaves out, stage by stage', () => {
    const strategy = parseStrategy(
      '{"type":"auto","clear":{"keep":1,"excludeTools":["read"]},"summarize":{"model":"m","fallback":"extractive"}}',
    );
    expect(strategy).toEqual({
      type: 'auto',
      clear: { keep: 1, clearAtLeast: 1_000, clearToolInputs: false, excludeTools: ['read'] },
      summarize: { keepRecent: 10, maxSummaryTokens: 2_000, model: 'm', fallback: 'extractive' },
    });
  });

  it('refuses unknown keys and a stage type, naming where', () => {
    expect(() => parseStrategy('{"type":"auto","clear":{"bogus":1}}')).toThrow(/^strategy\.clear: /);
    expect(() => parseStrategy('{"type":"auto","summarize":{"type":"summarize"}}')).toThrow(
      /^strategy\.summarize: /,
    );
    expect(() => parseStrategy('{"type":"auto","then":{}}')).toThrow(/^strategy: /);
    expect(() => parseStrategy('{"type":"auto","summarize":{"keepRecent":-1}}')).toThrow(
      /^strategy\.summarize\.keepRecent: /,
    );
  });

  it('summarizes (so the pipeline takes the lease) in two stages, clearing then summary', () => {
    const strategy = parseStrategy('auto:7');
    const unit = strategyUnit(strategy);
    expect(unit.summarizes).toBe(true);
    expect(unit.summaryOptions(strategy)).toMatchObject({ maxSummaryTokens: 2_000 });
    expect(unit.kept(strategy)).toBe(7);
    expect(unit.stages?.(strategy)).toEqual([
      { type: 'clearToolResults', ...DEFAULT_AUTO.clear },
      { type: 'summarize', keepRecent: 7, maxSummaryTokens: 2_000 },
    ]);
    for (const stage of unit.stages?.(strategy) ?? []) expect(strategySchema.parse(stage)).toEqual(stage);
    expect(unit.describe(strategy)).toBe(
      'auto (clearToolResults:3 (at least 1,000 tokens), then while over the trigger summarize:7 (summary up to 2,000 tokens))',
    );
  });

  it('gives request instructions to the summary stage', () => {
    const policy = withInstructions(resolvePolicy(parseStrategy('auto'), null, null), 'keep the SQL');
    expect(policy.strategy).toMatchObject({ type: 'auto', summarize: { instructions: 'keep the SQL' } });
    expect(strategyUnit(policy.strategy).summaryOptions(policy.strategy)?.instructions).toBe('keep the SQL');
  });
});

describe('nextStageFires', () => {
  const session = { messageCount: 50, tokenCount: 9_000, contextWindow: null, lastCompactedAt: 1_000 };
  const triggers = { contextFraction: 0.85, minIntervalMs: 60_000 };

  it('fires while the session is over a limit, whatever the minimum interval', () => {
    expect(nextStageFires({ ...triggers, maxMessages: 40 }, session)).toEqual({
      fire: true,
      reason: '50 messages, over the limit of 40',
    });
    expect(nextStageFires({ ...triggers, maxTokens: 8_000 }, session).fire).toBe(true);
  });

  it('does not fire once the session is under every limit', () => {
    expect(nextStageFires({ ...triggers, maxMessages: 60, maxTokens: 10_000 }, session).fire).toBe(false);
    expect(nextStageFires(triggers, { ...session, contextWindow: 20_000 }).fire).toBe(false);
  });

  it('fires when no limit applies, as admission does', () => {
    expect(nextStageFires(triggers, session).fire).toBe(true);
  });
});
