/**
 * The strategy registry and the effects a plan becomes: each strategy is one unit (schema,
 * shorthand, whether it summarizes, its planning rule), and a plan turns into data the Postgres
 * adapter executes without deciding anything.
 */
import { describe, expect, it } from 'vitest';
import type { MessageMeta } from '../../shared/contract/message.ts';
import { childSessionIdOf, effectsOf } from '../../shared/planning/effects.ts';
import { parseStrategy, STRATEGIES, strategySchema, strategyUnit } from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';

const snapshot = {
  tenantId: 't',
  sessionId: 's',
  compactionVersion: 3,
  snapshotSeq: 19,
  format: 'anthropic' as const,
};
const messages: MessageMeta[] = Array.from({ length: 20 }, (_, seq) => ({
  seq,
  role: seq % 2 === 0 ? 'user' : 'assistant',
  kind: 'message',
  toolCallId: null,
  toolName: null,
  toolUseIds: [],
  toolResultIds: [],
  thinking: false,
  tokenCount: 10,
  pinned: false,
}));

describe('strategy registry', () => {
  it("parses every unit's own shorthand into a strategy the schema accepts", () => {
    for (const unit of Object.values(STRATEGIES)) {
      const text = unit.usage.replace('[:Ttokens][:userTurn]', '').replace('[:N]', ':4').replace(':N', ':4');
      const parsed = parseStrategy(text);
      expect(parsed.type).toBe(unit.type);
      expect(strategySchema.parse(parsed)).toEqual(parsed);
    }
  });

  it('says which strategies need a summary (and so a lease) and which run under the row lock', () => {
    expect(strategyUnit(parseStrategy('none')).summarizes).toBe(false);
    expect(strategyUnit(parseStrategy('slidingWindow:5')).summarizes).toBe(false);
    expect(strategyUnit(parseStrategy('summarize')).summarizes).toBe(true);
  });

  it('names every accepted form when a shorthand is unknown', () => {
    expect(() => parseStrategy('trim:3')).toThrow(
      'strategy: unknown type "trim"; use none, slidingWindow:N[:Ttokens][:userTurn], ' +
        'summarize[:N][:Ttokens][:userTurn], clearToolResults[:N], clearThinking[:N], auto[:N][:Ttokens][:userTurn] or JSON',
    );
  });

  it('reads a token tail and a user-turn cut after the message count, and describes them the same way', () => {
    const window = parseStrategy('slidingWindow:10:20000tokens:userTurn');
    expect(window).toEqual({
      type: 'slidingWindow',
      maxMessages: 10,
      keepRecentTokens: 20_000,
      cutAtUserTurn: true,
    });
    expect(strategyUnit(window).describe(window)).toBe('slidingWindow:10:20000tokens:userTurn');
    // summarize may leave out its count: the default count stays beside the token tail.
    const summary = parseStrategy('summarize:20000tokens');
    expect(summary).toMatchObject({ type: 'summarize', keepRecent: 10, keepRecentTokens: 20_000 });
    expect(summary).not.toHaveProperty('cutAtUserTurn');
    expect(strategyUnit(summary).describe(summary)).toBe(
      'summarize:10:20000tokens (summary up to 2,000 tokens)',
    );
    expect(parseStrategy('summarize:0:userTurn')).toMatchObject({ keepRecent: 0, cutAtUserTurn: true });
  });

  it('refuses a token tail that is not a positive whole number of tokens, naming the field', () => {
    expect(() => parseStrategy('slidingWindow:5:0tokens')).toThrow(
      'strategy.keepRecentTokens: must be at least 1 token',
    );
    expect(() => parseStrategy('slidingWindow:5:1.5tokens')).toThrow(
      'strategy.keepRecentTokens: must be a whole number of tokens',
    );
    expect(() => parseStrategy('summarize:5:3000000tokens')).toThrow(
      'strategy.keepRecentTokens: must be at most 2,000,000 tokens',
    );
    expect(() => parseStrategy('{"type":"slidingWindow","maxMessages":3,"keepRecentTokens":"lots"}')).toThrow(
      'strategy.keepRecentTokens: must be a number of tokens',
    );
    expect(() => parseStrategy('{"type":"summarize","keepRecent":3,"cutAtUserTurn":"yes"}')).toThrow(
      'strategy.cutAtUserTurn: must be true or false',
    );
  });

  it('refuses tail options a strategy does not have, repeated, or not known', () => {
    expect(() => parseStrategy('none:100tokens')).toThrow('strategy: Unrecognized key: "keepRecentTokens"');
    expect(() => parseStrategy('slidingWindow:5:userTurn:userTurn')).toThrow(
      'strategy: cannot read "slidingWindow:5:userTurn:userTurn"',
    );
    expect(() => parseStrategy('slidingWindow:5:6')).toThrow('strategy: cannot read "slidingWindow:5:6"');
    expect(() => parseStrategy('slidingWindow:5:20000tok')).toThrow('cannot read');
  });
});

describe('effects of a plan', () => {
  it('in place: archive what leaves, then write the summary at the last leaving seq', () => {
    const plan = planCompaction(snapshot, messages, {
      type: 'summarize',
      keepRecent: 5,
      maxSummaryTokens: 2000,
    });
    if (plan.action !== 'compact') throw new Error('expected a compaction');
    const summary = { checkpoint: emptyCheckpoint(), text: 'summary', tokenCount: 3 };
    expect(effectsOf('s', plan, summary, 'inPlace', 4)).toEqual([
      { type: 'archive', seqs: plan.leavingSeqs, cutoffSeq: 14 },
      {
        type: 'writeSummary',
        into: 'session',
        seq: 14,
        text: 'summary',
        tokenCount: 3,
        checkpoint: summary.checkpoint,
      },
    ]);
  });

  it('new session: continue in the child named after the version, the summary written there', () => {
    const plan = planCompaction(snapshot, messages, { type: 'slidingWindow', maxMessages: 5 });
    if (plan.action !== 'compact') throw new Error('expected a compaction');
    expect(effectsOf('s', plan, null, 'newSession', 4)).toEqual([
      { type: 'continueInChild', childSessionId: 's.v4', withoutSeqs: plan.leavingSeqs },
    ]);
  });

  it('refuses a summary the plan has no place for, and the reverse', () => {
    const window = planCompaction(snapshot, messages, { type: 'slidingWindow', maxMessages: 5 });
    if (window.action !== 'compact') throw new Error('expected a compaction');
    const summary = { checkpoint: emptyCheckpoint(), text: 'x', tokenCount: 1 };
    expect(() => effectsOf('s', window, summary, 'inPlace', 4)).toThrow(/disagree/);
  });

  it('keeps a child id within 200 characters and unique per parent', () => {
    const long = 'x'.repeat(250);
    const a = childSessionIdOf(long, 2);
    expect(a.length).toBeLessThanOrEqual(200);
    expect(a.endsWith('.v2')).toBe(true);
    expect(childSessionIdOf(`${long}y`, 2)).not.toBe(a);
  });
});
