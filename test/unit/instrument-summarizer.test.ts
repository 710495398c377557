import { describe, expect, it } from 'vitest';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { createWorkerMetrics, instrumentSummarizer } from '../../worker/observability/metrics.ts';
import { createOpenAICompactionSummarizer } from '../../worker/summarizers/openai-compaction.ts';

describe('instrumentSummarizer', () => {
  it('keeps what the pipeline reads of a summarizer: that it reads the conversation, and its estimate', () => {
    const compaction = createOpenAICompactionSummarizer({ apiKey: 'sk-test', model: 'gpt-5.4-mini' });
    const timed = instrumentSummarizer(compaction, createWorkerMetrics());
    expect(timed.name).toBe('openai-compaction');
    // Without `reads`, the pipeline would not hand it the Responses items and every summary failed.
    expect(timed.reads).toBe('request');
    const sized = {
      tenantId: 't',
      sessionId: 's',
      previous: null,
      maxSummaryTokens: 2_000,
      leavingTokens: 9_000,
    };
    expect(timed.estimate?.(sized)).toEqual(compaction.estimate?.(sized));
    const plain = instrumentSummarizer(createExtractiveSummarizer(), createWorkerMetrics());
    expect(plain.reads).toBeUndefined();
    expect(plain.estimate).toBeUndefined();
  });
});
