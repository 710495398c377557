/**
 * The pure rule of `clearToolResults`: which content it reads, which results become placeholders,
 * what stays (the newest tool uses, excluded tools, pinned pairs, results cleared already), the
 * skip under `clearAtLeast`, and its shorthand.
 */
import { describe, expect, it } from 'vitest';
import type { Block, StoredContent } from '../../shared/contract/blocks.ts';
import type { MessageMeta } from '../../shared/contract/message.ts';
import type { CompactPlan, SessionSnapshot } from '../../shared/planning/types.ts';
import { type ClearToolResultsStrategy, parseStrategy, STRATEGIES } from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { metaOfContent } from '../support/messages.ts';

const big = 'x'.repeat(4_000);

/** A session of `n` tool uses: a user turn, then per use an assistant call and a user result. */
function session(names: string[], options: { pinned?: number[] } = {}) {
  const contents: StoredContent[] = ['fix the bug'];
  names.forEach((name, i) => {
    contents.push([{ type: 'tool_use', id: `t${i}`, name, input: { command: `step ${i}` } }]);
    contents.push([
      {
        type: 'tool_result',
        tool_use_id: `t${i}`,
        content: `${big} ${i}`,
        ...(i === 0 ? { is_error: true } : {}),
      },
    ]);
  });
  const messages: MessageMeta[] = contents.map((content, seq) =>
    metaOfContent(seq, seq % 2 === 1 ? 'assistant' : 'user', content, options.pinned?.includes(seq) ?? false),
  );
  return { messages, contents: new Map(contents.map((c, seq) => [seq, c])) };
}

function plan(
  names: string[],
  strategy: Partial<ClearToolResultsStrategy>,
  options: { pinned?: number[] } = {},
) {
  const { messages, contents } = session(names, options);
  const full = parseStrategy(
    JSON.stringify({ type: 'clearToolResults', ...strategy }),
  ) as ClearToolResultsStrategy;
  const read = new Set(STRATEGIES.clearToolResults.reads?.(messages, full));
  const snapshot: SessionSnapshot = {
    tenantId: 't',
    sessionId: 's',
    compactionVersion: 0,
    snapshotSeq: messages.length - 1,
    format: 'anthropic',
    compactionId: '00000000-0000-4000-8000-000000000001',
    // Only what the strategy asked to read.
    contents: new Map([...contents].filter(([seq]) => read.has(seq))),
  };
  return { plan: planCompaction(snapshot, messages, full), contents };
}

function rewritten(p: CompactPlan, seq: number): Block[] | undefined {
  return p.clearing?.rewrites.find((r) => r.seq === seq)?.content as Block[] | undefined;
}

describe('clearToolResults', () => {
  it('replaces the results older than the newest `keep` tool uses with a placeholder, keeping the block', () => {
    const { plan: p } = plan(['bash', 'bash', 'read', 'bash', 'bash'], { keep: 2 });
    expect(p.action).toBe('compact');
    const compact = p as CompactPlan;
    expect(compact.clearing?.rewrites.map((r) => r.seq)).toEqual([2, 4, 6]);
    expect(compact.leavingSeqs).toEqual([]);
    expect(compact.keptCount).toBe(11);
    expect(rewritten(compact, 2)).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 't0',
        content: expect.stringMatching(
          /^\[tool result cleared: bash, 1,003 tokens, archived by compactor \(compaction 00000000-0000-4000-8000-000000000001\)\]$/,
        ),
        is_error: true,
      },
    ]);
    expect(String(rewritten(compact, 6)?.[0]?.content)).toMatch(/^\[tool result cleared: read,/);
    expect(compact.clearing?.blocks).toBe(3);
    expect(compact.clearing?.tokensFreed).toBeGreaterThan(2_900);
    const rewrite = compact.clearing?.rewrites[0];
    expect(rewrite?.tokensBefore).toBeGreaterThan(rewrite?.tokenCount ?? 0);
  });

  it('never touches excluded tools, pinned pairs, nor the calls unless clearToolInputs', () => {
    const { plan: p } = plan(
      ['bash', 'read', 'bash', 'bash'],
      { keep: 1, excludeTools: ['read'], clearAtLeast: 0 },
      { pinned: [5] },
    );
    const compact = p as CompactPlan;
    // t1 (read) is excluded, t2's call at seq 5 is pinned: only t0's result clears.
    expect(compact.clearing?.rewrites.map((r) => r.seq)).toEqual([2]);
    expect(compact.notes.join('\n')).toContain('2 older tool use(s) stay');

    const withInputs = plan(['bash', 'bash', 'bash'], { keep: 1, clearToolInputs: true }).plan as CompactPlan;
    expect(withInputs.clearing?.rewrites.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(rewritten(withInputs, 1)).toEqual([{ type: 'tool_use', id: 't0', name: 'bash', input: {} }]);
    expect(withInputs.clearing?.blocks).toBe(2);
  });

  it('skips when too few tool uses, too few tokens, or everything is cleared already', () => {
    expect(plan(['bash', 'bash'], { keep: 3 }).plan).toMatchObject({
      action: 'skip',
      reason: '2 tool uses, not more than the 3 kept',
    });
    expect(plan(['bash', 'bash'], { keep: 1, clearAtLeast: 5_000 }).plan).toMatchObject({
      action: 'skip',
      reason: expect.stringMatching(
        /^clearing 1 tool use would free [\d,]+ tokens, less than clearAtLeast \(5,000\)/,
      ),
    });
    // Results shorter than their placeholder: the reason says the context would grow, and by how much.
    const tiny = session(['bash', 'bash']);
    tiny.contents.set(2, [{ type: 'tool_result', tool_use_id: 't0', content: '12' }]);
    const tinyMessages = tiny.messages.map((m) =>
      m.seq === 2 ? metaOfContent(2, 'user', tiny.contents.get(2) as StoredContent, false) : m,
    );
    expect(
      planCompaction(
        {
          tenantId: 't',
          sessionId: 's',
          compactionVersion: 0,
          snapshotSeq: 4,
          format: 'anthropic',
          contents: tiny.contents,
        },
        tinyMessages,
        parseStrategy(JSON.stringify({ type: 'clearToolResults', keep: 1, clearAtLeast: 0 })),
      ),
    ).toMatchObject({
      action: 'skip',
      reason: expect.stringMatching(
        /^clearing 1 tool use would grow the context by [1-9][\d,]* tokens: the placeholders are longer/,
      ),
    });
    const { messages, contents } = session(['bash', 'bash']);
    const once = plan(['bash', 'bash'], { keep: 1, clearAtLeast: 0 }).plan as CompactPlan;
    for (const r of once.clearing?.rewrites ?? []) contents.set(r.seq, r.content);
    const again = planCompaction(
      { tenantId: 't', sessionId: 's', compactionVersion: 1, snapshotSeq: 4, format: 'anthropic', contents },
      messages,
      parseStrategy('{"type":"clearToolResults","keep":1,"clearAtLeast":0}'),
    );
    expect(again).toMatchObject({
      action: 'skip',
      reason: expect.stringMatching(/^nothing to clear: .*cleared already$/),
    });
  });

  it('reads the shorthand, and refuses tail options', () => {
    expect(parseStrategy('clearToolResults')).toEqual({
      type: 'clearToolResults',
      keep: 3,
      clearAtLeast: 1_000,
      clearToolInputs: false,
      excludeTools: [],
    });
    expect(parseStrategy('clearToolResults:5')).toMatchObject({ keep: 5 });
    expect(() => parseStrategy('clearToolResults:5:userTurn')).toThrow(/cutAtUserTurn/);
    expect(
      STRATEGIES.clearToolResults.describe(parseStrategy('clearToolResults:2') as ClearToolResultsStrategy),
    ).toBe('clearToolResults:2 (at least 1,000 tokens)');
  });
});
