/**
 * The planner: a pure function `(session, messages, strategy) -> Plan`. It decides which messages
 * leave the live history and which stay, with no I/O and no clock, so every rule below is unit-tested
 * without a database.
 *
 * Rules, each one an invariant of compaction (see docs/architecture.md, "Invariants"):
 * - the newest `maxMessages` / `keepRecent` messages stay verbatim;
 * - pinned messages never leave, nor the other half of a pinned tool pair;
 * - a cutoff never separates a tool call from its result, and never passes a tool call still
 *   waiting for its result: the cutoff moves down to just before such a call;
 * - `slidingWindow` keeps earlier summary messages; `summarize` supersedes them (the previous
 *   checkpoint is merged instead, so nothing is summarized twice).
 */
import type { MessageMeta } from '../contract/message.ts';
import type { Strategy } from '../strategies/index.ts';

/** The part of a session the planner reads. */
export interface SessionSnapshot {
  tenantId: string;
  sessionId: string;
  /** Fencing token read with the snapshot. */
  compactionVersion: number;
  /** Highest seq in the snapshot; later appends are not seen and never touched. */
  snapshotSeq: number;
}

export interface SkipPlan {
  action: 'skip';
  strategy: Strategy['type'];
  /** Human-readable reason, recorded in the ledger. */
  reason: string;
}

export interface CompactPlan {
  action: 'compact';
  strategy: 'slidingWindow' | 'summarize';
  /** Highest seq that leaves; every leaving seq is ≤ it. */
  cutoffSeq: number;
  /** Exactly the seqs that leave, ascending (pinned and pair partners excluded). */
  leavingSeqs: number[];
  /** Leaving seqs the summary must cover: `leavingSeqs` without earlier summaries. Empty for slidingWindow. */
  coverSeqs: number[];
  /** Seq the new summary message takes (the highest leaving seq), or null without a summary. */
  summarySeq: number | null;
  /** Estimated tokens of the leaving messages. */
  leavingTokens: number;
  /** Messages that stay in the live history (pinned ones included). */
  keptCount: number;
  /** Why the cutoff sits where it does (window, pending tool call, tool pair), for --dry-run. */
  notes: string[];
}

export type Plan = SkipPlan | CompactPlan;

/**
 * Plans one compaction.
 * @param messages the snapshot's live messages in ascending seq (no duplicates).
 * @throws {Error} if `messages` is not strictly ascending by seq or goes past `snapshot.snapshotSeq`:
 *   a caller bug, never data.
 */
export function planCompaction(snapshot: SessionSnapshot, messages: MessageMeta[], strategy: Strategy): Plan {
  assertAscending(messages);
  const newest = messages[messages.length - 1];
  if (newest && newest.seq > snapshot.snapshotSeq) {
    throw new Error(`planCompaction: seq ${newest.seq} is past the snapshot's seq ${snapshot.snapshotSeq}`);
  }
  if (strategy.type === 'none') return skip(strategy.type, 'strategy is none');

  const keep = strategy.type === 'slidingWindow' ? strategy.maxMessages : strategy.keepRecent;
  if (messages.length <= keep) {
    return skip(strategy.type, `${messages.length} messages, not more than the ${keep} kept`);
  }

  const notes: string[] = [];
  const firstKept = messages[messages.length - keep];
  let cutoff = firstKept ? firstKept.seq - 1 : (messages[messages.length - 1]?.seq ?? -1);
  notes.push(`window: newest ${keep} messages stay, cutoff at seq ${cutoff}`);

  const pairs = indexToolPairs(messages);
  cutoff = stopBeforePendingCalls(cutoff, pairs, notes);
  cutoff = keepToolPairsWhole(cutoff, messages, pairs, notes);

  const stay = partnersOfPinned(messages, pairs);
  const keepSummaries = strategy.type === 'slidingWindow';
  const leaving = messages.filter(
    (m) => m.seq <= cutoff && !m.pinned && !stay.has(m.seq) && !(keepSummaries && m.kind === 'summary'),
  );
  if (leaving.length === 0) return skip(strategy.type, `nothing can leave: ${notes[notes.length - 1]}`);

  const cover = strategy.type === 'summarize' ? leaving.filter((m) => m.kind !== 'summary') : [];
  if (strategy.type === 'summarize' && cover.length === 0) {
    return skip(strategy.type, 'only earlier summaries would leave; nothing new to summarize');
  }
  const leavingSeqs = leaving.map((m) => m.seq);
  const last = leavingSeqs[leavingSeqs.length - 1] as number;
  return {
    action: 'compact',
    strategy: strategy.type,
    cutoffSeq: last,
    leavingSeqs,
    coverSeqs: cover.map((m) => m.seq),
    summarySeq: strategy.type === 'summarize' ? last : null,
    leavingTokens: leaving.reduce((sum, m) => sum + m.tokenCount, 0),
    keptCount: messages.length - leaving.length,
    notes,
  };
}

interface ToolPairs {
  /** tool_call_id -> seq of the call. */
  callSeq: Map<string, number>;
  /** tool_call_id -> seq of the (first) result. */
  resultSeq: Map<string, number>;
}

function indexToolPairs(messages: MessageMeta[]): ToolPairs {
  const callSeq = new Map<string, number>();
  const resultSeq = new Map<string, number>();
  for (const m of messages) {
    if (m.toolCallId === null) continue;
    if (m.kind === 'tool_call' && !callSeq.has(m.toolCallId)) callSeq.set(m.toolCallId, m.seq);
    if (m.kind === 'tool_result' && !resultSeq.has(m.toolCallId)) resultSeq.set(m.toolCallId, m.seq);
  }
  return { callSeq, resultSeq };
}

/** A call with no result yet pins the cutoff below it: the agent is still waiting on it. */
function stopBeforePendingCalls(cutoff: number, pairs: ToolPairs, notes: string[]): number {
  let result = cutoff;
  for (const [id, seq] of pairs.callSeq) {
    if (seq <= result && !pairs.resultSeq.has(id)) {
      result = seq - 1;
      notes.push(`tool call ${id} at seq ${seq} still waits for its result: cutoff at seq ${result}`);
    }
  }
  return result;
}

/** Moves the cutoff down until no kept result has its call leaving (a fixpoint; the cutoff only falls). */
function keepToolPairsWhole(
  cutoff: number,
  messages: MessageMeta[],
  pairs: ToolPairs,
  notes: string[],
): number {
  let result = cutoff;
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i] as MessageMeta;
      if (m.seq <= result) break;
      if (m.kind !== 'tool_result' || m.toolCallId === null) continue;
      const call = pairs.callSeq.get(m.toolCallId);
      if (call !== undefined && call <= result) {
        result = call - 1;
        changed = true;
        notes.push(
          `tool result at seq ${m.seq} stays, so its call at seq ${call} stays: cutoff at seq ${result}`,
        );
      }
    }
  }
  return result;
}

/** Seqs that stay because the other half of their tool pair is pinned. */
function partnersOfPinned(messages: MessageMeta[], pairs: ToolPairs): Set<number> {
  const stay = new Set<number>();
  for (const m of messages) {
    if (!m.pinned || m.toolCallId === null) continue;
    const partner =
      m.kind === 'tool_call' ? pairs.resultSeq.get(m.toolCallId) : pairs.callSeq.get(m.toolCallId);
    if (partner !== undefined) stay.add(partner);
  }
  return stay;
}

function skip(strategy: Strategy['type'], reason: string): SkipPlan {
  return { action: 'skip', strategy, reason };
}

function assertAscending(messages: MessageMeta[]): void {
  for (let i = 1; i < messages.length; i++) {
    if ((messages[i] as MessageMeta).seq <= (messages[i - 1] as MessageMeta).seq) {
      throw new Error(`planCompaction: messages must be in strictly ascending seq (at index ${i})`);
    }
  }
}

/** Why one message at or below the cutoff stays, for `compact --dry-run`. */
export interface StayReason {
  seq: number;
  reason: 'pinned' | 'pair of a pinned tool message' | 'earlier summary kept by slidingWindow';
}

/**
 * Explains a compaction plan: the messages at or below the cutoff that stay, each with its reason
 * (everything above the cutoff stays as the kept window).
 */
export function explainStays(messages: MessageMeta[], plan: CompactPlan): StayReason[] {
  const leaving = new Set(plan.leavingSeqs);
  const out: StayReason[] = [];
  for (const m of messages) {
    if (m.seq > plan.cutoffSeq || leaving.has(m.seq)) continue;
    if (m.pinned) out.push({ seq: m.seq, reason: 'pinned' });
    else if (m.kind === 'summary') out.push({ seq: m.seq, reason: 'earlier summary kept by slidingWindow' });
    else out.push({ seq: m.seq, reason: 'pair of a pinned tool message' });
  }
  return out;
}
