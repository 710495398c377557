import { describe, expect, it } from 'vitest';
import { legacyToolIds, type Message } from '../../shared/contract/message.ts';
import { chunkByBudget, transcriptTokens } from '../../shared/summary/chunks.ts';

function message(
  seq: number,
  kind: Message['kind'],
  content: string,
  toolCallId: string | null = null,
): Message {
  const role = kind === 'tool_result' ? 'tool' : kind === 'tool_call' ? 'assistant' : 'user';
  return {
    seq,
    role,
    kind,
    content,
    toolCallId,
    toolName: null,
    tokenCount: 0,
    pinned: false,
    ...legacyToolIds(kind, toolCallId),
  };
}

const words = (n: number) => 'lorem ipsum '.repeat(n);

describe('chunkByBudget', () => {
  it('keeps everything in one chunk when it fits', () => {
    const messages = [message(1, 'message', 'hi'), message(2, 'message', 'there')];
    expect(chunkByBudget(messages, 10_000)).toEqual([messages]);
    expect(chunkByBudget([], 10_000)).toEqual([]);
  });

  it('splits in order, every chunk within the budget, nothing lost or repeated', () => {
    const messages = Array.from({ length: 40 }, (_, i) => message(i, 'message', words(30 + i)));
    const budget = 1_500;
    const chunks = chunkByBudget(messages, budget);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.flat()).toEqual(messages);
    for (const chunk of chunks) {
      expect(chunk.reduce((n, m) => n + transcriptTokens(m), 0)).toBeLessThanOrEqual(budget);
    }
  });

  it('does not cut between a tool call and its result when the pair fits', () => {
    const messages = [
      message(1, 'message', words(100)),
      message(2, 'tool_call', words(60), 'a'),
      message(3, 'tool_call', words(60), 'b'),
      message(4, 'tool_result', words(60), 'a'),
      message(5, 'tool_result', words(60), 'b'),
      message(6, 'message', words(10)),
    ];
    const chunks = chunkByBudget(messages, 1_000);
    const chunkOf = (seq: number) => chunks.findIndex((c) => c.some((m) => m.seq === seq));
    expect(chunks.length).toBeGreaterThan(1);
    expect(new Set([2, 3, 4, 5].map(chunkOf)).size).toBe(1);
  });

  it('splits a single exchange larger than the budget rather than exceed it', () => {
    const messages = [message(1, 'tool_call', words(300), 'x'), message(2, 'tool_result', words(300), 'x')];
    expect(chunkByBudget(messages, 800)).toEqual([[messages[0]], [messages[1]]]);
  });

  it('refuses a budget that is not positive', () => {
    expect(() => chunkByBudget([], 0)).toThrow(/budgetTokens must be > 0/);
  });
});
