/**
 * The AI SDK middleware's pure parts, for each specification version (v2: AI SDK 5, v3: AI SDK 6,
 * v4: AI SDK 7), on values typed with each version's own types: an answer's content as the
 * assistant message the AI SDK sends back (reasoning metadata as `providerOptions`, tool inputs
 * parsed), a stream passed through unchanged while its answer is collected, the usage read, and the
 * rule that decides which prompt messages are new.
 */
import type {
  LanguageModelV2Content,
  LanguageModelV2Message,
  LanguageModelV2StreamPart,
  LanguageModelV2Usage,
  LanguageModelV3Content,
  LanguageModelV3Message,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  LanguageModelV4Content,
  LanguageModelV4Message,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import {
  afterLastAssistant,
  canonicalJson,
  requestPrompt,
  splitPrompt,
  unstored,
} from '../../producer/frameworks/ai-sdk/prompt.ts';
import { callsClientTools, replyMessage } from '../../producer/frameworks/ai-sdk/reply.ts';
import { type CollectedAnswer, collectingStream } from '../../producer/frameworks/ai-sdk/stream.ts';
import { finishReasonOf, inputUsageOf } from '../../producer/frameworks/ai-sdk/versions.ts';

const SIGNATURE = { anthropic: { signature: 'sig-1' } };

/** Runs `parts` through the collecting transform; returns what came out and what was collected. */
async function throughStream<
  P extends LanguageModelV2StreamPart | LanguageModelV3StreamPart | LanguageModelV4StreamPart,
>(parts: P[]): Promise<{ out: P[]; answer: CollectedAnswer | null }> {
  let answer: CollectedAnswer | null = null;
  const source = new ReadableStream<P>({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  });
  const out: P[] = [];
  const reader = source
    .pipeThrough(
      collectingStream<P>(async (a) => {
        answer = a;
      }),
    )
    .getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out.push(value);
  }
  return { out, answer };
}

describe('v4 (AI SDK 7)', () => {
  const content: LanguageModelV4Content[] = [
    { type: 'reasoning', text: 'Let me look.', providerMetadata: SIGNATURE },
    { type: 'text', text: 'Reading it.' },
    { type: 'text', text: '' },
    { type: 'source', sourceType: 'url', id: 's1', url: 'https://example.com' },
    { type: 'tool-call', toolCallId: 'call-1', toolName: 'read_file', input: '{"path":"a.ts"}' },
    { type: 'tool-call', toolCallId: 'call-2', toolName: 'list', input: '' },
    {
      type: 'tool-result',
      toolCallId: 'srv-1',
      toolName: 'web_search',
      result: { hits: 2 },
      providerMetadata: { anthropic: { x: 1 } },
    },
  ];

  it('stores an answer as the assistant message the AI SDK sends back', () => {
    const message = replyMessage<LanguageModelV4Message>(content);
    expect(message).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me look.', providerOptions: SIGNATURE },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'read_file', input: { path: 'a.ts' } },
        { type: 'tool-call', toolCallId: 'call-2', toolName: 'list', input: {} },
        {
          type: 'tool-result',
          toolCallId: 'srv-1',
          toolName: 'web_search',
          output: { type: 'json', value: { hits: 2 } },
          providerOptions: { anthropic: { x: 1 } },
        },
      ],
    });
    expect(callsClientTools(content)).toBe(true);
    expect(callsClientTools([{ type: 'text', text: 'done' }])).toBe(false);
    expect(replyMessage([{ type: 'text', text: '' }])).toBeNull();
  });

  it('passes a stream through unchanged and collects its answer, the signature from the last delta', async () => {
    const usage: LanguageModelV4Usage = {
      inputTokens: { total: 1200, noCache: 200, cacheRead: 1000, cacheWrite: 0 },
      outputTokens: { total: 30, text: 20, reasoning: 10 },
    };
    const parts: LanguageModelV4StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Let me ' },
      { type: 'reasoning-delta', id: 'r', delta: 'look.' },
      { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: SIGNATURE },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Read' },
      { type: 'text-delta', id: 't', delta: 'ing it.' },
      { type: 'text-end', id: 't' },
      { type: 'tool-input-start', id: 'call-1', toolName: 'read_file' },
      { type: 'tool-input-delta', id: 'call-1', delta: '{"path":"a.ts"}' },
      { type: 'tool-input-end', id: 'call-1' },
      { type: 'tool-call', toolCallId: 'call-1', toolName: 'read_file', input: '{"path":"a.ts"}' },
      { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
    ];
    const { out, answer } = await throughStream(parts);
    expect(out).toEqual(parts);
    expect(out.every((p, i) => p === parts[i])).toBe(true);
    expect(replyMessage(answer?.content ?? [])).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me look.', providerOptions: SIGNATURE },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'read_file', input: { path: 'a.ts' } },
      ],
    });
    expect(inputUsageOf(answer?.usage)).toEqual({ inputTokens: 1200, cacheReadTokens: 1000 });
    expect(finishReasonOf(answer?.finishReason)).toBe('tool-calls');
  });

  it('stores nothing of a stream that ends without finish', async () => {
    const { answer } = await throughStream<LanguageModelV4StreamPart>([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'half' },
      { type: 'error', error: new Error('overloaded') },
    ]);
    expect(answer).toBeNull();
  });

  it('keeps a file answer with its tagged data', () => {
    const data = new Uint8Array([1, 2, 3]);
    expect(replyMessage([{ type: 'file', mediaType: 'image/png', data: { type: 'data', data } }])).toEqual({
      role: 'assistant',
      content: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data } }],
    });
  });
});

describe('v3 (AI SDK 6)', () => {
  it('maps content, usage and finish reason', () => {
    const content: LanguageModelV3Content[] = [
      { type: 'reasoning', text: 'Hmm.', providerMetadata: SIGNATURE },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'tool-call', toolCallId: 'c', toolName: 't', input: '{"a":[1,2]}', providerExecuted: false },
      { type: 'tool-approval-request', approvalId: 'ap', toolCallId: 'c' },
    ];
    expect(replyMessage<LanguageModelV3Message>(content)).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Hmm.', providerOptions: SIGNATURE },
        { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'tool-call', toolCallId: 'c', toolName: 't', input: { a: [1, 2] }, providerExecuted: false },
      ],
    });
    const usage: LanguageModelV3Usage = {
      inputTokens: { total: 90, noCache: 90, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 5, text: 5, reasoning: undefined },
    };
    expect(inputUsageOf(usage)).toEqual({ inputTokens: 90, cacheReadTokens: undefined });
    expect(finishReasonOf({ unified: 'stop', raw: 'end_turn' })).toBe('stop');
  });

  it('collects a v3 stream', async () => {
    const { answer } = await throughStream<LanguageModelV3StreamPart>([
      { type: 'text-start', id: '0' },
      { type: 'text-delta', id: '0', delta: 'Hello' },
      { type: 'text-end', id: '0', providerMetadata: { openai: { itemId: 'msg_1' } } },
      {
        type: 'finish',
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        finishReason: { unified: 'stop', raw: 'stop' },
      },
    ]);
    expect(replyMessage(answer?.content ?? [])).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello', providerOptions: { openai: { itemId: 'msg_1' } } }],
    });
  });
});

describe('v2 (AI SDK 5)', () => {
  it('maps content, flat usage and a string finish reason', async () => {
    const content: LanguageModelV2Content[] = [
      { type: 'text', text: 'Done.' },
      { type: 'tool-call', toolCallId: 'c', toolName: 't', input: 'not json' },
    ];
    expect(replyMessage<LanguageModelV2Message>(content)).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Done.' },
        { type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} },
      ],
    });
    const usage: LanguageModelV2Usage = {
      inputTokens: 500,
      outputTokens: 10,
      totalTokens: 510,
      cachedInputTokens: 400,
    };
    expect(inputUsageOf(usage)).toEqual({ inputTokens: 500, cacheReadTokens: 400 });
    expect(finishReasonOf('tool-calls')).toBe('tool-calls');
    const { answer } = await throughStream<LanguageModelV2StreamPart>([
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Think.' },
      { type: 'reasoning-end', id: 'r', providerMetadata: SIGNATURE },
      { type: 'finish', usage, finishReason: 'stop' },
    ]);
    expect(replyMessage(answer?.content ?? [])?.content).toEqual([
      { type: 'reasoning', text: 'Think.', providerOptions: SIGNATURE },
    ]);
    expect(finishReasonOf(answer?.finishReason)).toBe('stop');
  });
});

describe('which prompt messages are new', () => {
  const system: LanguageModelV4Message = { role: 'system', content: 'Be careful.' };
  const user = (text: string): LanguageModelV4Message => ({
    role: 'user',
    content: [{ type: 'text', text }],
  });
  const assistant: LanguageModelV4Message = {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input: {} }],
  };
  const tool: LanguageModelV4Message = {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'text', value: 'ok' } },
    ],
  };
  const key = canonicalJson;

  it('takes what follows the last assistant message, less what the session holds after its own', () => {
    const prompt = [system, user('a'), assistant, tool, user('b')];
    const { system: instructions, conversation } = splitPrompt(prompt);
    expect(instructions).toEqual([system]);
    expect(afterLastAssistant(conversation)).toEqual([tool, user('b')]);
    expect(afterLastAssistant([user('only')])).toEqual([user('only')]);
    expect(unstored([tool, user('b')], [], key)).toEqual([tool, user('b')]);
    // A retried call: the session already holds the tool result.
    expect(unstored([tool, user('b')], [key(tool)], key)).toEqual([user('b')]);
    // Key order does not matter.
    const reordered = JSON.parse(JSON.stringify({ content: tool.content, role: 'tool' }));
    expect(unstored([tool, user('b')], [key(reordered)], key)).toEqual([user('b')]);
    // The application changed a stored message: nothing is skipped.
    expect(unstored([user('b2')], [key(user('b'))], key)).toEqual([user('b2')]);
  });

  it("sends the call's own instructions, then the session's other system messages and its conversation", () => {
    const later: LanguageModelV4Message = { role: 'system', content: 'Answer in French from now on.' };
    const context = [system, later, user('summary'), assistant, tool];
    expect(requestPrompt([system], context, key)).toEqual([system, later, user('summary'), assistant, tool]);
    expect(requestPrompt([], context, key)).toEqual(context);
  });
});
