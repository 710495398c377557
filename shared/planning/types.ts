/**
 * What the planner reads and what it decides: a plan is data (which seqs leave, where the summary
 * goes, why the cutoff sits where it does), never an action.
 */

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
  strategy: string;
  /** Human-readable reason, recorded in the ledger. */
  reason: string;
}

export interface CompactPlan {
  action: 'compact';
  strategy: string;
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
  /**
   * Tool calls that leave without a result: they never got one and the session moved on since
   * (absent in plans made before this was recorded).
   */
  abandonedCalls?: Array<{ toolCallId: string; seq: number }>;
  /** Why the cutoff sits where it does (window, pending tool call, tool pair), for --dry-run. */
  notes: string[];
}

export type Plan = SkipPlan | CompactPlan;
