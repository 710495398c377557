/**
 * The planner: a pure function `(session, messages, strategy) -> Plan`. It decides which messages
 * leave the live history and which stay, with no I/O and no clock, so every rule is unit-tested
 * without a database. Each strategy's own rule lives in `shared/strategies/`; this checks the input
 * and hands it to the strategy.
 */
import type { MessageMeta } from '../contract/message.ts';
import type { CompactPlan, Plan, SessionSnapshot } from '../planning/types.ts';
import { type Strategy, strategyUnit } from './index.ts';

export type { CompactPlan, Plan, SessionSnapshot, SkipPlan } from '../planning/types.ts';

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
  return strategyUnit(strategy).plan(snapshot, messages, strategy);
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
