/**
 * Whether a summary is worth writing (worker/pipeline/summary.ts): it is weighed as the context an
 * agent sends holds it, its introduction and frame included, with the text of the leaving system
 * messages that the context restates, against what leaves (an earlier summary with its framing);
 * the reason says by how much the context would grow.
 */
import { describe, expect, it } from 'vitest';
import { renderContext, SUMMARY_INTRO } from '../../shared/context/render.ts';
import { estimateMessageTokens, estimateTextTokens } from '../../shared/contract/tokens.ts';
import { renderChatContext } from '../../shared/formats/openai-chat/context.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { noUsage } from '../../shared/summary/summarizer.ts';
import { contextTokensOf, notSmaller, summaryToWrite } from '../../worker/pipeline/summary.ts';

const checkpoint = {
  ...emptyCheckpoint(),
  goal: 'Fix the failing parser test',
  workingSet: ['src/parser.ts'],
};

function plan(leavingTokens: number, restatedTokens = 0): CompactPlan {
  return {
    action: 'compact',
    strategy: 'summarize',
    cutoffSeq: 9,
    leavingSeqs: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    coverSeqs: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    summarySeq: 9,
    leavingTokens,
    restatedTokens,
    keptCount: 2,
    notes: [],
  };
}

describe('the summary as the context sends it', () => {
  it('counts its introduction and frame: what either renderer makes of the summary row', () => {
    const summary = summaryToWrite(checkpoint, plan(1_000), 'extractive', noUsage());
    const row = { seq: 9, role: 'user', kind: 'summary', content: summary.text, pinned: false } as const;
    const rendered = [
      renderContext({ rows: [row], checkpoint, compactedThroughSeq: null }).tokens,
      renderChatContext({ rows: [row], checkpoint }).tokens,
    ];
    expect(summary.contextTokens).toBe(Math.max(...rendered));
    expect(summary.contextTokens).toBe(contextTokensOf(checkpoint, summary.text));
    expect(summary.contextTokens).toBeGreaterThan(
      summary.tokenCount + estimateTextTokens(SUMMARY_INTRO) - 20,
    );
    expect(summary.tokenCount).toBe(estimateMessageTokens(summary.text));
  });

  it('is not worth writing when the context would not shrink, and says by how much it would grow', () => {
    const summary = summaryToWrite(checkpoint, plan(1_000), 'extractive', noUsage());
    const { contextTokens: size, tokenCount } = summary;
    // Smaller than what leaves as stored, larger as the context sends it: skipped.
    const between = tokenCount + 1;
    expect(between).toBeLessThan(size);
    expect(notSmaller(summary, plan(between))).toBe(
      `a summary of ${size} tokens (as the context sends it) would grow the context by ${size - between} tokens ` +
        `(${between} tokens would leave)`,
    );
    expect(notSmaller(summary, plan(size))).toBe(
      `a summary of ${size} tokens (as the context sends it) would not make the context smaller (${size} tokens would leave)`,
    );
    expect(notSmaller(summary, plan(size + 1))).toBeNull();
    // The leaving system text stays in the context, restated.
    expect(notSmaller(summary, plan(size + 50, 50))).toBe(
      `a summary of ${size} tokens (as the context sends it), with 50 tokens of system text restated, ` +
        `would not make the context smaller (${size + 50} tokens would leave)`,
    );
    expect(notSmaller(summary, plan(size + 51, 50))).toBeNull();
    // An earlier summary leaves with its introduction and frame, which the stored count leaves out.
    const framing = size - tokenCount;
    const superseding = { ...plan(size - framing + 1), coverSeqs: [1, 2, 3, 4, 5, 6, 7, 8, 9] };
    expect(notSmaller(summary, superseding)).toBeNull();
    expect(notSmaller(summary, { ...superseding, leavingTokens: size - framing })).toBe(
      `a summary of ${size} tokens (as the context sends it) would not make the context smaller (${size} tokens would leave)`,
    );
  });
});
