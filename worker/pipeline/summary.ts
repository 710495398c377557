/**
 * The summarize stage: the previous checkpoint and the messages now leaving go to the summarizer,
 * and its checkpoint comes back rendered as the summary message's text. No transaction is open.
 */
import { type Block, estimateContentTokens } from '../../shared/contract/blocks.ts';
import { estimateMessageTokens } from '../../shared/contract/tokens.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import type { SummaryOptions } from '../../shared/strategies/index.ts';
import { type Checkpoint, renderCheckpoint } from '../../shared/summary/checkpoint.ts';
import type { SummarizeInput, Summarizer, SummaryUsage } from '../../shared/summary/summarizer.ts';

/** The summary to write with a compaction. */
export interface SummaryToWrite {
  checkpoint: Checkpoint;
  /** Rendered text of the summary message. */
  text: string;
  /** Estimated tokens of what the summary message sends (`blocks` when set, else `text`). */
  tokenCount: number;
  /** The summarizer's name, recorded in the ledger. */
  summarizer: string;
  usage: SummaryUsage;
  /** The summary message's native content instead of `text`: Anthropic's `compaction` block. */
  blocks?: Block[] | undefined;
}

/** The summarizer's input for a request. */
export function summarizeInput(
  where: { tenantId: string; sessionId: string },
  options: SummaryOptions,
  previous: Checkpoint | null,
  leaving: SummarizeInput['leaving'],
  signal?: AbortSignal,
  request?: SummarizeInput['request'],
): SummarizeInput {
  return {
    tenantId: where.tenantId,
    sessionId: where.sessionId,
    previous,
    leaving,
    maxSummaryTokens: options.maxSummaryTokens,
    model: options.model,
    instructions: options.instructions,
    signal,
    request,
  };
}

/** A summarizer's checkpoint as the summary message to write at the plan's cutoff. */
export function summaryToWrite(
  checkpoint: Checkpoint,
  plan: CompactPlan,
  summarizer: string,
  usage: SummaryUsage,
  block?: Block,
): SummaryToWrite {
  const text = renderCheckpoint(checkpoint, plan.cutoffSeq);
  if (block) {
    const blocks = [block];
    return { checkpoint, text, tokenCount: estimateContentTokens(blocks), summarizer, usage, blocks };
  }
  return { checkpoint, text, tokenCount: estimateMessageTokens(text), summarizer, usage };
}

/** Why a summary is not worth writing (it would not make the session smaller), or null. */
export function notSmaller(summary: SummaryToWrite, plan: CompactPlan): string | null {
  if (summary.tokenCount < plan.leavingTokens) return null;
  return (
    `a summary of ${summary.tokenCount} tokens would not make the session smaller ` +
    `(${plan.leavingTokens} tokens would leave)`
  );
}

/** Runs the summarizer. @throws what the summarizer throws; nothing has been written. */
export async function summarize(
  summarizer: Summarizer,
  input: SummarizeInput,
  plan: CompactPlan,
): Promise<SummaryToWrite> {
  const result = await summarizer.summarize(input);
  return summaryToWrite(result.checkpoint, plan, summarizer.name, result.usage, result.block);
}
