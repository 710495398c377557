/**
 * What the planner reads and what it decides: a plan is data (which seqs leave, where the summary
 * goes, which messages are rewritten in place and into what, why the cutoff sits where it does),
 * never an action.
 */
import type { StoredContent } from '../contract/blocks.ts';
import type { SessionFormat } from '../contract/session-format.ts';

/** The part of a session the planner reads. */
export interface SessionSnapshot {
  tenantId: string;
  sessionId: string;
  /** Fencing token read with the snapshot. */
  compactionVersion: number;
  /** Highest seq in the snapshot; later appends are not seen and never touched. */
  snapshotSeq: number;
  /** The session's format (`sessions.format`): what its rows hold, and which rules rewrite them. */
  format: SessionFormat;
  /**
   * The stored content (`content_blocks`) of the messages the strategy asked to read (its unit's
   * `reads`), by seq, read in the same snapshot; absent for strategies that read none.
   */
  contents?: ReadonlyMap<number, StoredContent> | undefined;
  /**
   * The id the ledger row will have if the plan applies, for a plan that names its compaction in
   * what it writes (a cleared block's placeholder); absent when unknown (a dry run).
   */
  compactionId?: string | undefined;
}

/**
 * One message a plan rewrites in place, at the same seq: its new content and what is derived from
 * it. The original row is archived first, byte-exact, so a restore puts it back.
 */
export interface Rewrite {
  seq: number;
  /** The new `content_blocks`: a string or blocks, valid for the Messages API. */
  content: StoredContent;
  /** Its plain-text rendering (the new `content`). */
  text: string;
  /** Estimated tokens of the new content. */
  tokenCount: number;
  /** Estimated tokens of the message before (its live `token_count`). */
  tokensBefore: number;
  /** Whether the new content still holds thinking blocks. */
  thinking: boolean;
}

/** What a plan that rewrites messages in place does, instead of moving them out. */
export interface Clearing {
  /** The rewritten messages, ascending by seq. */
  rewrites: Rewrite[];
  /** What was cleared: tool uses whose result (or input) was replaced, or thinking blocks dropped. */
  blocks: number;
  /** Estimated tokens the rewrites free: the sum of `tokensBefore - tokenCount`. */
  tokensFreed: number;
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
  /**
   * Estimated tokens of the leaving system messages, whose text the rendered context restates
   * (shared/context/restated-system.ts): what leaves the stored history but not the context an agent
   * sends. An upper bound: a text restated already, or identical to another, is restated once. Absent
   * (plans made before this was recorded, clearing plans): 0.
   */
  restatedTokens?: number;
  /** Messages that stay in the live history (pinned ones included). */
  keptCount: number;
  /**
   * Tool calls that leave without a result: they never got one and the session moved on since
   * (absent in plans made before this was recorded).
   */
  abandonedCalls?: Array<{ toolCallId: string; seq: number }>;
  /**
   * Messages rewritten in place (`clearToolResults`, `clearThinking`): then `leavingSeqs` and
   * `coverSeqs` are empty, `summarySeq` is null and `cutoffSeq` is the highest rewritten seq.
   * Absent for plans that only move messages.
   */
  clearing?: Clearing | undefined;
  /** Why the cutoff sits where it does (window, pending tool call, tool pair), for --dry-run. */
  notes: string[];
}

export type Plan = SkipPlan | CompactPlan;
