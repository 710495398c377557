/**
 * A compaction as data: the effects that carry out a plan, in order. The pipeline derives them
 * from the plan, the summary and the mode; the Postgres adapter executes them one by one under the
 * session's row lock without deciding anything itself. Pure.
 */
import { createHash } from 'node:crypto';
import type { Block } from '../contract/blocks.ts';
import type { Checkpoint } from '../summary/checkpoint.ts';
import type { CompactPlan, Rewrite } from './types.ts';

/** Move these live messages to the archive, linked to the compaction. Pinned ones never match. */
export interface ArchiveEffect {
  type: 'archive';
  /** Exactly the seqs that leave, ascending; the adapter checks that all of them moved. */
  seqs: number[];
  /** No seq above it is touched: messages appended meanwhile stay. */
  cutoffSeq: number;
}

/**
 * Continue the compacted history in a new child session: every live message but `withoutSeqs` is
 * copied with its seq; the parent stays whole and points to the child.
 */
export interface ContinueInChildEffect {
  type: 'continueInChild';
  childSessionId: string;
  withoutSeqs: number[];
}

/**
 * Write the summary message at `seq` (role `user`, kind `summary`) and make `checkpoint` the
 * session's current one; `into` says which session: the compacted one, or the child just created.
 */
export interface WriteSummaryEffect {
  type: 'writeSummary';
  into: 'session' | 'child';
  seq: number;
  text: string;
  /** Estimated tokens of what the message sends (`blocks` when set, else `text`). */
  tokenCount: number;
  checkpoint: Checkpoint;
  /**
   * The message's native content when it is not `text`: Anthropic's `compaction` block, stored
   * exactly as returned. Absent: the content is `text`.
   */
  blocks?: Block[] | undefined;
}

/**
 * Rewrite these live messages in place, each at its seq: first archive the original row whole
 * (byte-exact, marked `rewritten`, linked to the compaction), then set its content, rendering,
 * token estimate and thinking flag to the rewrite's. Pinned messages never match; the adapter checks
 * that every seq was rewritten.
 */
export interface RewriteEffect {
  type: 'rewrite';
  /** Ascending by seq. */
  rewrites: Rewrite[];
  /** Tool uses or thinking blocks the rewrites clear, for the ledger (`blocks_cleared`). */
  blocks: number;
}

/** One step of a compaction. */
export type Effect = ArchiveEffect | ContinueInChildEffect | WriteSummaryEffect | RewriteEffect;

/** The summary a compaction writes (already rendered and counted). */
export interface RenderedSummary {
  checkpoint: Checkpoint;
  text: string;
  tokenCount: number;
  /** Native content to store instead of `text` (a `compaction` block). */
  blocks?: Block[] | undefined;
}

/**
 * The effects of a compact plan.
 * @param mode `inPlace` archives what leaves; `newSession` copies what stays into a child session.
 * @param version the compaction version the session will have afterwards (names the child).
 * @throws {Error} if a summarizing plan comes without its summary, or a summary without a seq for it,
 *   or a plan that rewrites in place comes with mode `newSession` (the pipeline skips those first).
 */
export function effectsOf(
  sessionId: string,
  plan: CompactPlan,
  summary: RenderedSummary | null,
  mode: 'inPlace' | 'newSession',
  version: number,
): Effect[] {
  if ((summary === null) !== (plan.summarySeq === null)) {
    throw new Error(`effectsOf: plan of ${plan.strategy} and summary disagree on whether to write one`);
  }
  if (plan.clearing) {
    if (mode === 'newSession') {
      throw new Error(`effectsOf: ${plan.strategy} rewrites messages in place; it has no newSession mode`);
    }
    return [{ type: 'rewrite', rewrites: plan.clearing.rewrites, blocks: plan.clearing.blocks }];
  }
  const effects: Effect[] =
    mode === 'newSession'
      ? [
          {
            type: 'continueInChild',
            childSessionId: childSessionIdOf(sessionId, version),
            withoutSeqs: plan.leavingSeqs,
          },
        ]
      : [{ type: 'archive', seqs: plan.leavingSeqs, cutoffSeq: plan.cutoffSeq }];
  if (summary && plan.summarySeq !== null) {
    effects.push({
      type: 'writeSummary',
      into: mode === 'newSession' ? 'child' : 'session',
      seq: plan.summarySeq,
      text: summary.text,
      tokenCount: summary.tokenCount,
      checkpoint: summary.checkpoint,
      ...(summary.blocks ? { blocks: summary.blocks } : {}),
    });
  }
  return effects;
}

/**
 * The child's id: `<parent>.v<version>`, or for a long parent id a clipped prefix with a hash, so
 * the id stays within 200 characters and unique per parent and version.
 */
export function childSessionIdOf(parentId: string, version: number): string {
  const suffix = `.v${version}`;
  if (parentId.length + suffix.length <= 200) return `${parentId}${suffix}`;
  const hash = createHash('sha256').update(parentId).digest('hex').slice(0, 12);
  return `${parentId.slice(0, 200 - suffix.length - hash.length - 1)}~${hash}${suffix}`;
}
