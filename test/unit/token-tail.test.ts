/**
 * The kept tail measured in tokens (`keepRecentTokens`) and cut at a user turn (`cutAtUserTurn`),
 * planned on real corpus sessions: what leaves and what stays, with the planner's other rules
 * (pinned messages, whole tool pairs, pending calls) still holding.
 */
import { describe, expect, it } from 'vitest';
import type { MessageMeta } from '../../shared/contract/message.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { type CompactPlan, type Plan, planCompaction } from '../../shared/strategies/plan.ts';
import { loadCorpusSession } from '../support/fixtures.ts';

/** Tool-heavy sessions with one user turn, and chat sessions with many. */
const TOOL_HEAVY = ['minisweagent__astropy-12907', 'openhands__ponyc-4593', 'sweagent__ctf-web-i_got_id'];
const MANY_TURNS = ['claudecode__session-share-general-tool-calls', 'claudecode__session-share-0ccf1a04'];

async function load(name: string): Promise<MessageMeta[]> {
  return loadCorpusSession(name);
}

function plan(messages: MessageMeta[], strategy: Strategy): Plan {
  const snapshotSeq = messages[messages.length - 1]?.seq ?? 0;
  return planCompaction(
    { tenantId: 't', sessionId: 's', compactionVersion: 0, snapshotSeq, format: 'anthropic' },
    messages,
    strategy,
  );
}

function compact(messages: MessageMeta[], strategy: Strategy): CompactPlan {
  const p = plan(messages, strategy);
  if (p.action !== 'compact') throw new Error(`expected a compaction, got skip: ${p.reason}`);
  return p;
}

/** The messages above the cutoff: the kept tail. */
function tail(messages: MessageMeta[], p: CompactPlan): MessageMeta[] {
  return messages.filter((m) => m.seq > p.cutoffSeq);
}

/** Seqs that stay in the live history. */
function staying(messages: MessageMeta[], p: Plan): Set<number> {
  const leaving = new Set(p.action === 'compact' ? p.leavingSeqs : []);
  return new Set(messages.filter((m) => !leaving.has(m.seq)).map((m) => m.seq));
}

function tokens(messages: MessageMeta[]): number {
  return messages.reduce((sum, m) => sum + m.tokenCount, 0);
}

/** Every tool call and its result either both leave or both stay. */
function expectPairsWhole(messages: MessageMeta[], p: CompactPlan): void {
  const leaving = new Set(p.leavingSeqs);
  const sides = new Map<string, boolean[]>();
  for (const m of messages) {
    for (const id of [...m.toolUseIds, ...m.toolResultIds]) {
      sides.set(id, [...(sides.get(id) ?? []), leaving.has(m.seq)]);
    }
  }
  for (const [id, side] of sides) expect(new Set(side).size, `tool pair ${id}`).toBe(1);
}

function expectPinnedStay(messages: MessageMeta[], p: CompactPlan): void {
  const leaving = new Set(p.leavingSeqs);
  expect(messages.filter((m) => m.pinned && leaving.has(m.seq))).toEqual([]);
}

describe('keepRecentTokens', () => {
  it('keeps a tail of at least that many tokens, tool pairs whole and pinned messages in place', async () => {
    let compactions = 0;
    for (const name of [...TOOL_HEAVY, ...MANY_TURNS]) {
      const messages = await load(name);
      for (const keepRecentTokens of [500, 4_000, 15_000]) {
        const strategy: Strategy = { type: 'slidingWindow', maxMessages: 1, keepRecentTokens };
        const p = plan(messages, strategy);
        if (p.action === 'skip') {
          // Only when the whole session fits in the tail, or nothing below it may leave.
          expect(tokens(messages) < keepRecentTokens || p.reason.startsWith('nothing can leave'), name).toBe(
            true,
          );
          continue;
        }
        compactions++;
        expect(tokens(tail(messages, p)), `${name} ${keepRecentTokens}`).toBeGreaterThanOrEqual(
          keepRecentTokens,
        );
        expectPairsWhole(messages, p);
        expectPinnedStay(messages, p);
      }
    }
    expect(compactions).toBeGreaterThanOrEqual(10);
  });

  it('keeps more of a tool-heavy session than the message count alone, and no more than it needs', async () => {
    const messages = await load('minisweagent__astropy-12907');
    const byCount = compact(messages, { type: 'slidingWindow', maxMessages: 10 });
    const byTokens = compact(messages, { type: 'slidingWindow', maxMessages: 10, keepRecentTokens: 5_000 });
    expect(tokens(tail(messages, byCount))).toBeLessThan(5_000);
    expect(tokens(tail(messages, byTokens))).toBeGreaterThanOrEqual(5_000);
    expect(byTokens.keptCount).toBeGreaterThan(byCount.keptCount);
    // No more than it needs: without its oldest message (or oldest call and its result), the tail
    // would fall short of the budget.
    const kept = tail(messages, byTokens);
    const withoutOldestPair = kept.slice(kept[0]?.toolUseIds.length ? 2 : 1);
    expect(tokens(withoutOldestPair)).toBeLessThan(5_000);
    expect(byTokens.notes[0]).toContain('the larger of the 10-message and 5,000-token tails');
  });

  it('leaves everything in place when the session holds fewer tokens than the tail', async () => {
    const messages = await load('sweagent__humanevalfix-0');
    const total = tokens(messages);
    const p = plan(messages, {
      type: 'summarize',
      keepRecent: 2,
      keepRecentTokens: total + 1,
      maxSummaryTokens: 2000,
    });
    expect(p).toMatchObject({ action: 'skip' });
    if (p.action === 'skip') expect(p.reason).toContain('within the kept tail');
  });

  it('the larger tail wins: a longer message count beats a small token budget, and the reverse', async () => {
    const messages = await load('openhands__ponyc-4593');
    const count40 = compact(messages, { type: 'slidingWindow', maxMessages: 40 });
    const count40tokens1 = compact(messages, { type: 'slidingWindow', maxMessages: 40, keepRecentTokens: 1 });
    expect(count40tokens1.leavingSeqs).toEqual(count40.leavingSeqs);

    const count2 = compact(messages, { type: 'slidingWindow', maxMessages: 2 });
    const count2tokens = compact(messages, {
      type: 'slidingWindow',
      maxMessages: 2,
      keepRecentTokens: 8_000,
    });
    expect(tokens(tail(messages, count2tokens))).toBeGreaterThanOrEqual(8_000);
    expect(count2tokens.keptCount).toBeGreaterThan(count2.keptCount);
    // What the larger tail keeps is a superset of what the smaller one keeps.
    const small = staying(messages, count2);
    const large = staying(messages, count2tokens);
    expect([...small].every((seq) => large.has(seq))).toBe(true);
  });

  it('summarize with no message count keeps a tail measured in tokens only', async () => {
    const messages = await load('minisweagent__astropy-12907');
    const p = compact(messages, {
      type: 'summarize',
      keepRecent: 0,
      keepRecentTokens: 3_000,
      maxSummaryTokens: 2000,
    });
    expect(tokens(tail(messages, p))).toBeGreaterThanOrEqual(3_000);
    expect(p.coverSeqs).toEqual(p.leavingSeqs);
    expect(p.summarySeq).toBe(p.cutoffSeq);
    expectPairsWhole(messages, p);
  });
});

describe('cutAtUserTurn', () => {
  const startsUserTurn = (m: MessageMeta | undefined) => m?.role === 'user' && m.kind === 'message';

  it('begins the kept tail with a user turn, keeping everything the plain cut keeps', async () => {
    let moved = 0;
    for (const name of MANY_TURNS) {
      const messages = await load(name);
      for (const tailOptions of [
        { maxMessages: 1 },
        { maxMessages: 7 },
        { maxMessages: 25 },
        { maxMessages: 3, keepRecentTokens: 2_000 },
        { maxMessages: 3, keepRecentTokens: 20_000 },
      ]) {
        const plain = plan(messages, { type: 'slidingWindow', ...tailOptions });
        const p = plan(messages, { type: 'slidingWindow', ...tailOptions, cutAtUserTurn: true });
        const label = `${name} ${JSON.stringify(tailOptions)}`;
        // Only ever keeps more.
        const keptPlain = staying(messages, plain);
        const kept = staying(messages, p);
        expect(
          [...keptPlain].every((seq) => kept.has(seq)),
          label,
        ).toBe(true);
        if (p.action === 'skip') continue;
        expect(startsUserTurn(tail(messages, p)[0]), label).toBe(true);
        expectPairsWhole(messages, p);
        expectPinnedStay(messages, p);
        if (plain.action === 'compact' && !startsUserTurn(tail(messages, plain)[0])) moved++;
      }
    }
    expect(moved).toBeGreaterThanOrEqual(3);
  });

  it('moves a cut that falls inside a tool-using turn back to the user message that began it', async () => {
    const messages = await load('claudecode__session-share-general-tool-calls');
    // The newest 15 messages begin mid-turn: the plain cut keeps tool traffic without its question.
    const plain = compact(messages, { type: 'slidingWindow', maxMessages: 15 });
    expect(startsUserTurn(tail(messages, plain)[0])).toBe(false);
    const p = compact(messages, { type: 'slidingWindow', maxMessages: 15, cutAtUserTurn: true });
    const first = tail(messages, p)[0] as MessageMeta;
    expect(startsUserTurn(first)).toBe(true);
    // It is the nearest user turn at or below the plain cut: no user turn starts between them.
    const between = messages.filter((m) => m.seq > first.seq && m.seq <= plain.cutoffSeq);
    expect(between.filter(startsUserTurn)).toEqual([]);
    expect(p.notes.join('\n')).toContain(`the kept tail begins with the user turn at seq ${first.seq}`);
    // The newest call still waits for its result: it stays, and so does everything after the cut.
    const newest = messages[messages.length - 1] as MessageMeta;
    expect(newest.toolUseIds.length).toBeGreaterThan(0);
    expect(p.leavingSeqs).not.toContain(newest.seq);
  });

  it('does not cut a session that is one long user turn', async () => {
    // One task, then only the agent's tool calls: no user turn to begin a tail with but the first.
    const messages = await load('minisweagent__astropy-12907');
    expect(compact(messages, { type: 'slidingWindow', maxMessages: 10 }).leavingSeqs.length).toBeGreaterThan(
      0,
    );
    const p = plan(messages, {
      type: 'slidingWindow',
      maxMessages: 10,
      keepRecentTokens: 2_000,
      cutAtUserTurn: true,
    });
    expect(p).toMatchObject({
      action: 'skip',
      reason: 'nothing can leave: the kept tail begins with the user turn at seq 1: cutoff at seq 0',
    });
  });

  it('summarize cut at a user turn summarizes whole turns only', async () => {
    const messages = await load('claudecode__session-share-0ccf1a04');
    const p = compact(messages, {
      type: 'summarize',
      keepRecent: 4,
      keepRecentTokens: 1_000,
      cutAtUserTurn: true,
      maxSummaryTokens: 2000,
    });
    const kept = tail(messages, p);
    expect(startsUserTurn(kept[0])).toBe(true);
    expect(tokens(kept)).toBeGreaterThanOrEqual(1_000);
    expect(p.summarySeq).toBe(p.cutoffSeq);
    // Without the option the same tail begins inside a turn, its question summarized away.
    const plain = compact(messages, {
      type: 'summarize',
      keepRecent: 4,
      keepRecentTokens: 1_000,
      maxSummaryTokens: 2000,
    });
    expect(startsUserTurn(tail(messages, plain)[0])).toBe(false);
    expect(p.coverSeqs.length).toBeLessThan(plain.coverSeqs.length);
    expectPairsWhole(messages, p);
    expectPinnedStay(messages, p);
  });
});
