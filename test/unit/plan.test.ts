import { describe, expect, it } from 'vitest';
import { legacyToolIds, type MessageMeta } from '../../shared/contract/message.ts';
import { type CompactPlan, planCompaction, type SessionSnapshot } from '../../shared/strategies/plan.ts';

const snapshot: SessionSnapshot = {
  tenantId: 't',
  sessionId: 's',
  compactionVersion: 0,
  snapshotSeq: 1_000,
  format: 'anthropic',
};

/** Builds messages from a compact notation: `u` user, `a` assistant, `s` system, `S` summary,
 *  `c1`/`r1` tool call/result with id 1; a trailing `!` pins the message. */
function msgs(spec: string): MessageMeta[] {
  return spec.split(' ').map((token, seq): MessageMeta => {
    const m = meta(token, seq);
    return { ...m, ...legacyToolIds(m.kind, m.toolCallId) };
  });
}

function meta(token: string, seq: number): Omit<MessageMeta, 'toolUseIds' | 'toolResultIds' | 'thinking'> {
  {
    const pinned = token.endsWith('!');
    const t = pinned ? token.slice(0, -1) : token;
    const base = { seq, toolCallId: null, toolName: null, tokenCount: 10, pinned };
    if (t === 'u') return { ...base, role: 'user', kind: 'message' };
    if (t === 'a') return { ...base, role: 'assistant', kind: 'message' };
    if (t === 's') return { ...base, role: 'system', kind: 'message' };
    if (t === 'S') return { ...base, role: 'user', kind: 'summary' };
    if (t.startsWith('c')) return { ...base, role: 'assistant', kind: 'tool_call', toolCallId: t.slice(1) };
    if (t.startsWith('r')) return { ...base, role: 'tool', kind: 'tool_result', toolCallId: t.slice(1) };
    throw new Error(`bad token ${token}`);
  }
}

function compact(spec: string, strategy: Parameters<typeof planCompaction>[2]): CompactPlan {
  const plan = planCompaction(snapshot, msgs(spec), strategy);
  if (plan.action !== 'compact') throw new Error(`expected a compaction, got skip: ${plan.reason}`);
  return plan;
}

/** Every tool pair is either wholly leaving or wholly staying. */
function pairsWhole(spec: string, plan: CompactPlan): boolean {
  const all = msgs(spec);
  const leaving = new Set(plan.leavingSeqs);
  const byId = new Map<string, boolean[]>();
  for (const m of all) {
    if (m.toolCallId === null) continue;
    byId.set(m.toolCallId, [...(byId.get(m.toolCallId) ?? []), leaving.has(m.seq)]);
  }
  return [...byId.values()].every((v) => v.every((x) => x === v[0]));
}

describe('planCompaction', () => {
  it('keeps the newest maxMessages and archives the rest (slidingWindow)', () => {
    const plan = compact('u a u a u a u a', { type: 'slidingWindow', maxMessages: 3 });
    expect(plan.leavingSeqs).toEqual([0, 1, 2, 3, 4]);
    expect(plan.cutoffSeq).toBe(4);
    expect(plan.keptCount).toBe(3);
    expect(plan.summarySeq).toBeNull();
    expect(plan.leavingTokens).toBe(50);
  });

  it('skips when the session is not larger than the window, and for strategy none', () => {
    expect(planCompaction(snapshot, msgs('u a u'), { type: 'slidingWindow', maxMessages: 3 })).toMatchObject({
      action: 'skip',
      reason: '3 messages, not more than the 3 kept',
    });
    expect(planCompaction(snapshot, msgs('u a u a'), { type: 'none' })).toMatchObject({ action: 'skip' });
  });

  it('never archives pinned messages', () => {
    const plan = compact('s! u a u! a u a', { type: 'slidingWindow', maxMessages: 2 });
    expect(plan.leavingSeqs).toEqual([1, 2, 4]);
    expect(plan.keptCount).toBe(4);
  });

  it('counts the leaving system messages as restated, and skips when only they would leave', () => {
    const plan = compact('s u s a u a', { type: 'summarize', keepRecent: 2, maxSummaryTokens: 2000 });
    expect(plan.leavingSeqs).toEqual([0, 1, 2, 3]);
    expect(plan).toMatchObject({ leavingTokens: 40, restatedTokens: 20 });
    for (const strategy of [
      { type: 'slidingWindow', maxMessages: 2 },
      { type: 'summarize', keepRecent: 2, maxSummaryTokens: 2000 },
    ] as const) {
      expect(planCompaction(snapshot, msgs('s s u! a! u a'), strategy)).toMatchObject({
        action: 'skip',
        reason:
          'only system messages would leave (20 tokens), and the context restates their text: it would not get smaller',
      });
    }
  });

  it('moves the cutoff below a tool call whose result would stay', () => {
    // window of 2 would keep only r1 and a: the call c1 (seq 2) must stay with its result.
    const spec = 'u a c1 r1 a';
    const plan = compact(spec, { type: 'slidingWindow', maxMessages: 2 });
    expect(plan.leavingSeqs).toEqual([0, 1]);
    expect(pairsWhole(spec, plan)).toBe(true);
    expect(plan.notes.join('\n')).toContain('tool result at seq 3 stays');
  });

  it('keeps parallel tool calls and their results together', () => {
    const spec = 'u a c1 c2 r1 r2 a u';
    for (let keep = 1; keep <= 7; keep++) {
      const plan = planCompaction(snapshot, msgs(spec), { type: 'slidingWindow', maxMessages: keep });
      if (plan.action === 'compact') expect(pairsWhole(spec, plan), `keep ${keep}`).toBe(true);
    }
  });

  it('does not compact past a tool call of the newest turn, still waiting for its result', () => {
    const plan = compact('u a u a u a c9', { type: 'summarize', keepRecent: 0, maxSummaryTokens: 2000 });
    expect(plan.cutoffSeq).toBe(5);
    expect(plan.leavingSeqs).not.toContain(6);
    expect(plan.notes.join('\n')).toContain('still waits for its result');
    expect(plan.abandonedCalls).toEqual([]);
  });

  it('lets a call leave without its result once the session moved on past it (a later user message)', () => {
    // The tool's process died at seq 1; 200 messages later the session must still compact past it.
    const spec = ['u', 'c1', ...Array.from({ length: 100 }, () => 'u a')].join(' ');
    const plan = compact(spec, { type: 'summarize', keepRecent: 10, maxSummaryTokens: 2000 });
    expect(plan.leavingSeqs).toContain(1);
    expect(plan.cutoffSeq).toBe(191);
    expect(plan.abandonedCalls).toEqual([{ toolCallId: '1', seq: 1 }]);
    expect(plan.notes.join('\n')).toContain(
      'tool call 1 at seq 1 never got its result and the session moved on',
    );
  });

  it('lets a call leave once a later assistant turn made new calls, but not for a sibling of its own turn', () => {
    const later = compact('u c1 c2 r2 a c3 r3 a', { type: 'slidingWindow', maxMessages: 2 });
    expect(later.abandonedCalls).toEqual([{ toolCallId: '1', seq: 1 }]);
    expect(later.leavingSeqs).toEqual([0, 1, 2, 3, 4]);
    // r2 answered its sibling; c1 of the newest turn may still get its result.
    const sibling = planCompaction(snapshot, msgs('u a c1 c2 r2'), { type: 'slidingWindow', maxMessages: 1 });
    expect(sibling).toMatchObject({ action: 'compact', leavingSeqs: [0, 1], abandonedCalls: [] });
  });

  it('keeps an assistant turn that carries thinking whole, and splits one without', () => {
    const spec = 'u a a u a a u a';
    const withThinking = msgs(spec).map((m) => (m.seq === 4 ? { ...m, thinking: true } : m));
    const plan = planCompaction(snapshot, withThinking, { type: 'slidingWindow', maxMessages: 3 });
    if (plan.action !== 'compact') throw new Error(plan.reason);
    // The window's edge falls between seq 4 and 5, one turn: both stay.
    expect(plan.leavingSeqs).toEqual([0, 1, 2, 3]);
    expect(compact(spec, { type: 'slidingWindow', maxMessages: 3 }).leavingSeqs).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps the other half of a pinned tool pair', () => {
    const plan = compact('u c1! r1 a u a', { type: 'slidingWindow', maxMessages: 1 });
    expect(plan.leavingSeqs).toEqual([0, 3, 4]);
  });

  it('summarize supersedes the previous summary but only covers new messages', () => {
    const plan = compact('s! S u a u a u a', { type: 'summarize', keepRecent: 2, maxSummaryTokens: 2000 });
    expect(plan.leavingSeqs).toEqual([1, 2, 3, 4, 5]);
    expect(plan.coverSeqs).toEqual([2, 3, 4, 5]);
    expect(plan.summarySeq).toBe(5);
  });

  it('slidingWindow keeps earlier summaries', () => {
    const plan = compact('S u a u a u a', { type: 'slidingWindow', maxMessages: 2 });
    expect(plan.leavingSeqs).toEqual([1, 2, 3, 4]);
  });

  it('skips a summarize that would only move earlier summaries', () => {
    const plan = planCompaction(snapshot, msgs('S u a'), {
      type: 'summarize',
      keepRecent: 2,
      maxSummaryTokens: 2000,
    });
    expect(plan).toMatchObject({
      action: 'skip',
      reason: 'only earlier summaries would leave; nothing new to summarize',
    });
  });

  it('skips when the only candidates are tied to a pending call', () => {
    const plan = planCompaction(snapshot, msgs('c1 c2'), { type: 'slidingWindow', maxMessages: 1 });
    expect(plan.action).toBe('skip');
  });

  it('cuts at a user turn: a tool result sent as a user message does not begin one', () => {
    const spec = 'u c1 r1 a u c2 r2 a';
    const plain = compact(spec, { type: 'slidingWindow', maxMessages: 2 });
    expect(plain.leavingSeqs).toEqual([0, 1, 2, 3, 4]);
    // The result at seq 6 comes back as a user message (native content): still not a user turn.
    const native = msgs(spec).map((m) => (m.seq === 6 ? { ...m, role: 'user' as const } : m));
    const plan = planCompaction(snapshot, native, {
      type: 'slidingWindow',
      maxMessages: 2,
      cutAtUserTurn: true,
    });
    expect(plan).toMatchObject({ action: 'compact', leavingSeqs: [0, 1, 2, 3], cutoffSeq: 3 });
  });

  it('cuts at a user turn with pinned messages below it staying where they are', () => {
    const plan = compact('s! u a u! a u a a', {
      type: 'summarize',
      keepRecent: 1,
      cutAtUserTurn: true,
      maxSummaryTokens: 2000,
    });
    expect(plan.leavingSeqs).toEqual([1, 2, 4]);
    expect(plan.cutoffSeq).toBe(4);
  });

  it('a token tail keeps the newest messages holding at least that many tokens', () => {
    // Every message holds 10 tokens: 25 tokens take three messages, more than the two counted.
    const plan = compact('u a u a u a u a', { type: 'slidingWindow', maxMessages: 2, keepRecentTokens: 25 });
    expect(plan.leavingSeqs).toEqual([0, 1, 2, 3, 4]);
    expect(
      compact('u a u a u a u a', { type: 'slidingWindow', maxMessages: 4, keepRecentTokens: 25 }).leavingSeqs,
    ).toEqual([0, 1, 2, 3]);
  });

  it('refuses messages out of seq order', () => {
    const bad = msgs('u a u').reverse();
    expect(() => planCompaction(snapshot, bad, { type: 'slidingWindow', maxMessages: 1 })).toThrow(
      /ascending seq/,
    );
  });
});
