/**
 * The summarize stage: the previous checkpoint and the messages now leaving go to the summarizer,
 * and its checkpoint comes back rendered as the summary message's text. No transaction is open.
 */
import type { ContextRow } from '../../shared/context/render.ts';
import { type Block, estimateContentTokens } from '../../shared/contract/blocks.ts';
import { estimateMessageTokens } from '../../shared/contract/tokens.ts';
import { SESSION_FORMAT_RULES } from '../../shared/formats/registry.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import type { SummaryOptions } from '../../shared/strategies/index.ts';
import { type Checkpoint, renderCheckpoint } from '../../shared/summary/checkpoint.ts';
import type { SummarizeInput, Summarizer, SummaryUsage } from '../../shared/summary/summarizer.ts';

/** The summary to write with a compaction. */
export interface SummaryToWrite {
  checkpoint: Checkpoint;
  /** Rendered text of the summary message. */
  text: string;
  /** Estimated tokens of the summary message as stored (`blocks` when set, else `text`). */
  tokenCount: number;
  /**
   * Estimated tokens the summary adds to the context an agent sends ({@link contextTokensOf}): the
   * checkpoint as the renderers frame it, introduction included, or the compaction block as stored.
   */
  contextTokens: number;
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
    const tokenCount = estimateContentTokens(blocks);
    return { checkpoint, text, tokenCount, contextTokens: tokenCount, summarizer, usage, blocks };
  }
  const tokenCount = estimateMessageTokens(text);
  return {
    checkpoint,
    text,
    tokenCount,
    contextTokens: contextTokensOf(checkpoint, text),
    summarizer,
    usage,
  };
}

/**
 * Estimated tokens of a text summary in the context an agent sends: the largest of what each
 * session format's context makes of it (`summaryTokens`, the summary row rendered alone), so what
 * any adds (the introduction, the record's frame) counts, whichever format the session has.
 */
export function contextTokensOf(checkpoint: Checkpoint, text: string): number {
  const row: ContextRow = { seq: 0, role: 'user', kind: 'summary', content: text, pinned: false };
  const rendered = Object.values(SESSION_FORMAT_RULES).map((f) =>
    f.summaryTokens({ rows: [row], checkpoint }),
  );
  return Math.max(...rendered, estimateMessageTokens(text));
}

/**
 * Why a summary is not worth writing, or null: the context an agent sends would not get smaller.
 * What the context gains is the summary as rendered ({@link SummaryToWrite.contextTokens}) and the
 * text of the leaving system messages, which it restates (the plan's `restatedTokens`); what it
 * loses is the leaving messages (`leavingTokens`), an earlier summary among them with the framing
 * it was sent with (the new summary's: the introduction and frame replace the stored header). The
 * reason says by how much the context would grow.
 */
export function notSmaller(summary: SummaryToWrite, plan: CompactPlan): string | null {
  const restated = plan.restatedTokens ?? 0;
  const gained = summary.contextTokens + restated;
  const framing = Math.max(0, summary.contextTokens - summary.tokenCount);
  const earlierSummaries = plan.leavingSeqs.length - plan.coverSeqs.length;
  const leaving = plan.leavingTokens + earlierSummaries * framing;
  if (gained < leaving) return null;
  const effect =
    gained > leaving
      ? `would grow the context by ${gained - leaving} tokens`
      : 'would not make the context smaller';
  const system = restated > 0 ? `, with ${restated} tokens of system text restated,` : '';
  return (
    `a summary of ${summary.contextTokens} tokens (as the context sends it)${system} ${effect} ` +
    `(${leaving} tokens would leave)`
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
