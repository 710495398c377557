/**
 * The pure rule of `clearThinking`: which content it reads, which thinking blocks go (those of
 * assistant turns older than the newest `keep` turns with thinking), what stays (the rest of each
 * message, the newest turns, an open tool loop, pinned rows, rows holding nothing but thinking),
 * the skip when nothing is left to drop, and its shorthand.
 */
import { describe, expect, it } from 'vitest';
import type { Block, StoredContent } from '../../shared/contract/blocks.ts';
import type { MessageMeta, Role } from '../../shared/contract/message.ts';
import type { CompactPlan, Plan, SessionSnapshot } from '../../shared/planning/types.ts';
import { type ClearThinkingStrategy, parseStrategy, STRATEGIES } from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { metaOfContent } from '../support/messages.ts';

const thought = (n: number): Block => ({ type: 'thinking', thinking: `plan ${n}`, signature: `sig-${n}` });
const redacted: Block = { type: 'redacted_thinking', data: 'opaque' };

/** Rows of `[role, content]`, at seqs 0..n-1. */
function rows(list: Array<[Role, StoredContent]>, pinned: number[] = []) {
  const messages: MessageMeta[] = list.map(([role, content], seq) =>
    metaOfContent(seq, role, content, pinned.includes(seq)),
  );
  return { messages, contents: new Map(list.map(([, content], seq) => [seq, content])) };
}

/** A finished tool loop per entry: user prompt, then per step an assistant call and its result, then an answer. */
function loops(steps: number[], options: { open?: boolean } = {}): Array<[Role, StoredContent]> {
  const out: Array<[Role, StoredContent]> = [];
  let n = 0;
  steps.forEach((count, loop) => {
    out.push(['user', `task ${loop}`]);
    for (let i = 0; i < count; i++) {
      const id = `t${n}`;
      out.push(['assistant', [thought(n++), { type: 'tool_use', id, name: 'bash', input: { i } }]]);
      out.push(['user', [{ type: 'tool_result', tool_use_id: id, content: 'ok' }]]);
    }
    const last = options.open === true && loop === steps.length - 1;
    if (!last) out.push(['assistant', [thought(n++), { type: 'text', text: `done ${loop}` }]]);
  });
  return out;
}

function plan(list: Array<[Role, StoredContent]>, keep: number | undefined, pinned: number[] = []) {
  const { messages, contents } = rows(list, pinned);
  const strategy = parseStrategy(keep === undefined ? 'clearThinking' : `clearThinking:${keep}`);
  const read = new Set(STRATEGIES.clearThinking.reads?.(messages, strategy as ClearThinkingStrategy));
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
  return { plan: planCompaction(snapshot, messages, strategy), read: [...read] };
}

const content = (p: Plan, seq: number) =>
  (p as CompactPlan).clearing?.rewrites.find((r) => r.seq === seq)?.content as Block[] | undefined;
const rewrittenSeqs = (p: Plan) => (p as CompactPlan).clearing?.rewrites.map((r) => r.seq);

describe('clearThinking', () => {
  it('drops the thinking of every assistant row older than the newest `keep` turns, nothing else', () => {
    // seq 0 user, 1 assistant call, 2 result, 3 answer, 4 user, 5 call, 6 result, 7 answer.
    const list = loops([1, 1]);
    list[3] = ['assistant', [thought(1), redacted, { type: 'text', text: 'done 0' }]];
    const { plan: p, read } = plan(list, undefined);
    expect(p.action).toBe('compact');
    // Turns with thinking: [1], [3], [5], [7]; keep 1 keeps seq 7's.
    expect(read).toEqual([1, 3, 5]);
    expect(rewrittenSeqs(p)).toEqual([1, 3, 5]);
    expect(content(p, 1)).toEqual([{ type: 'tool_use', id: 't0', name: 'bash', input: { i: 0 } }]);
    expect(content(p, 3)).toEqual([{ type: 'text', text: 'done 0' }]);
    const compact = p as CompactPlan;
    expect(compact.clearing?.blocks).toBe(4);
    expect(compact.leavingSeqs).toEqual([]);
    expect(compact.keptCount).toBe(list.length);
    const r = compact.clearing?.rewrites[0];
    expect(r?.thinking).toBe(false);
    expect(r?.tokensBefore).toBeGreaterThan(r?.tokenCount ?? 0);
    expect(compact.notes.join('\n')).toContain('4 thinking blocks cleared in 3 message(s)');

    expect(rewrittenSeqs(plan(list, 3).plan)).toEqual([1]);
    expect(rewrittenSeqs(plan(list, 0).plan)).toEqual([1, 3, 5, 7]);
  });

  it('counts adjacent assistant rows as one turn, and turns without thinking not at all', () => {
    const list: Array<[Role, StoredContent]> = [
      ['user', 'go'],
      ['assistant', [thought(0), { type: 'text', text: 'a' }]],
      ['assistant', [thought(1), { type: 'text', text: 'b' }]],
      ['user', 'next'],
      ['assistant', [{ type: 'text', text: 'no thinking here' }]],
      ['user', 'again'],
    ];
    // One turn with thinking (seqs 1 and 2): keep 1 keeps both.
    expect(plan(list, 1).plan).toMatchObject({
      action: 'skip',
      reason: 'nothing to clear: 1 assistant turn(s) hold thinking, none older than the kept ones',
    });
    expect(rewrittenSeqs(plan(list, 0).plan)).toEqual([1, 2]);
  });

  it('never touches the open tool loop, pinned rows, nor a row holding only thinking', () => {
    // The last turn is an open loop: seq 5 made a call whose result (seq 6) is the last row.
    const open = loops([1, 1], { open: true });
    expect(open.at(-1)?.[0]).toBe('user');
    const p = plan(open, 0).plan;
    expect(rewrittenSeqs(p)).toEqual([1, 3]);
    expect((p as CompactPlan).notes.join('\n')).toContain('the open tool loop keeps its thinking (seq 5..5)');
    // The call with no result yet is an open loop too.
    expect(rewrittenSeqs(plan(open.slice(0, -1), 0).plan)).toEqual([1, 3]);

    expect(rewrittenSeqs(plan(loops([1, 1]), 0, [3]).plan)).toEqual([1, 5, 7]);

    const only: Array<[Role, StoredContent]> = [
      ['user', 'go'],
      ['assistant', [thought(0)]],
      ['assistant', [{ type: 'text', text: 'answer' }]],
      ['user', 'next'],
      ['assistant', [thought(1), { type: 'text', text: 'answer 2' }]],
      ['user', 'more'],
    ];
    expect(plan(only, 1).plan).toMatchObject({
      action: 'skip',
      reason: 'nothing to clear: every older row left with thinking holds nothing else',
    });
    const some = plan(only, 0).plan as CompactPlan;
    expect(rewrittenSeqs(some)).toEqual([4]);
    expect(some.notes.join('\n')).toContain('1 row(s) holding nothing but thinking keep it');
  });

  it('skips, with the reason, when there is no thinking or it is cleared already', () => {
    expect(
      plan(
        [
          ['user', 'hi'],
          ['assistant', 'hello'],
        ],
        0,
      ).plan,
    ).toMatchObject({
      action: 'skip',
      reason: 'nothing to clear: no assistant turn holds thinking',
    });
    const list = loops([2]);
    const once = plan(list, 1).plan as CompactPlan;
    for (const r of once.clearing?.rewrites ?? []) list[r.seq] = ['assistant', r.content];
    expect(plan(list, 1).plan).toMatchObject({
      action: 'skip',
      reason: expect.stringMatching(/^nothing to clear: /),
    });
  });

  it('reads the shorthand, and refuses tail options and unknown keys', () => {
    expect(parseStrategy('clearThinking')).toEqual({ type: 'clearThinking', keep: 1 });
    expect(parseStrategy('clearThinking:4')).toEqual({ type: 'clearThinking', keep: 4 });
    expect(() => parseStrategy('clearThinking:2:userTurn')).toThrow(/cutAtUserTurn/);
    expect(() => parseStrategy('{"type":"clearThinking","clearAtLeast":5}')).toThrow(/clearAtLeast/);
    expect(STRATEGIES.clearThinking.describe(parseStrategy('clearThinking:2') as ClearThinkingStrategy)).toBe(
      'clearThinking:2',
    );
  });
});
