/**
 * The `openai-chat` codec of the Mastra adapter (producer/frameworks/mastra/openai-chat.ts): the AI
 * SDK prompt messages Mastra builds become Chat Completions messages compactor accepts; read back
 * and sent through the real `@ai-sdk/openai` provider (to the strict fake over HTTP), they make a
 * request whose messages are exactly the stored ones; storing what was read back stores the same
 * again; and what a Chat Completions message cannot carry is refused, naming the part.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedChatContext } from '../../producer/context.ts';
import { openaiChatCodec } from '../../producer/frameworks/mastra/openai-chat.ts';
import type { PromptMessage, PromptVersion } from '../../producer/frameworks/mastra/prompt.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { chatMessageProblem } from '../../shared/formats/openai-chat/message.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';

/** A 1x1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n').toString('base64');
const mastra = { mastra: { createdAt: 1_795_000_000_000 } };

/** A conversation of every kind of part the codec stores, as Mastra builds it for a V4 model. */
const conversation: PromptMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'Look at this.', providerOptions: mastra }] },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'The screen, the spec and a note:' },
      { type: 'file', mediaType: 'image/png', data: { type: 'data', data: Buffer.from(PNG, 'base64') } },
      {
        type: 'file',
        mediaType: 'image/png',
        data: { type: 'data', data: PNG },
        providerOptions: { openai: { imageDetail: 'low' } },
      },
      {
        type: 'file',
        mediaType: 'image/*',
        data: { type: 'url', url: new URL('https://example.com/a.png') },
      },
      { type: 'file', mediaType: 'application/pdf', filename: 'spec.pdf', data: { type: 'data', data: PDF } },
      { type: 'file', mediaType: 'application/pdf', data: { type: 'data', data: PDF } },
      { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: 'UklGRg==' } },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading ', providerOptions: mastra },
      { type: 'text', text: 'them.' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: { path: 'a.ts' } },
      { type: 'tool-call', toolCallId: 'call_2', toolName: 'lookup', input: '{"q": "x"}' },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_1',
        toolName: 'read_file',
        output: { type: 'text', value: 'export {}' },
      },
      {
        type: 'tool-result',
        toolCallId: 'call_2',
        toolName: 'lookup',
        output: { type: 'json', value: { hits: [1, 2] } },
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'tool-call', toolCallId: 'call_3', toolName: 'run', input: {} },
      { type: 'tool-call', toolCallId: 'call_4', toolName: 'run', input: { cmd: 'ls' } },
      { type: 'tool-call', toolCallId: 'call_5', toolName: 'run', input: { cmd: 'rm' } },
      { type: 'tool-call', toolCallId: 'call_6', toolName: 'run', input: { cmd: 'cat' } },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_3',
        toolName: 'run',
        output: { type: 'error-text', value: 'no such file' },
      },
      {
        type: 'tool-result',
        toolCallId: 'call_4',
        toolName: 'run',
        output: { type: 'error-json', value: { code: 2 } },
      },
      { type: 'tool-result', toolCallId: 'call_5', toolName: 'run', output: { type: 'execution-denied' } },
      {
        type: 'tool-result',
        toolCallId: 'call_6',
        toolName: 'run',
        output: { type: 'content', value: [{ type: 'text', text: 'a\nb' }] },
      },
    ],
  },
  { role: 'system', content: 'Be brief from here on.' },
  { role: 'assistant', content: [{ type: 'text', text: '' }] },
];

const stored = openaiChatCodec.encode(conversation, 'conversation[0]') as Array<Record<string, unknown>>;
const context = (messages: unknown[]): LoadedChatContext =>
  ({
    format: 'openai-chat',
    messages,
    tokens: 0,
    sessionId: 's',
    notices: [],
    version: 0,
  }) as LoadedChatContext;

const fake = new FakeOpenAIChatServer();
let baseURL = '';
beforeAll(async () => {
  baseURL = await fake.start();
});
afterAll(() => fake.close());

describe("the Mastra adapter's openai-chat codec", () => {
  it('stores every part as the Chat Completions message that carries it, each one compactor accepts', () => {
    expect(stored.map((m, i) => chatMessageProblem(m, `messages[${i}]`))).toEqual(stored.map(() => null));
    expect(stored[0]).toEqual({ role: 'user', content: 'Look at this.' });
    expect(stored[1]?.content).toEqual([
      { type: 'text', text: 'The screen, the spec and a note:' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      { type: 'file', file: { filename: 'spec.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
      { type: 'file', file: { filename: 'part-5.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
      { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
    ]);
    expect(stored.slice(2, 5)).toEqual([
      {
        role: 'assistant',
        content: 'Reading them.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
          { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'export {}' },
      { role: 'tool', tool_call_id: 'call_2', content: '{"hits":[1,2]}' },
    ]);
    expect(stored.slice(5)).toEqual([
      { role: 'assistant', content: null, tool_calls: expect.any(Array) },
      { role: 'tool', tool_call_id: 'call_3', content: '{"error":"no such file"}' },
      { role: 'tool', tool_call_id: 'call_4', content: '{"error":{"code":2}}' },
      { role: 'tool', tool_call_id: 'call_5', content: 'Tool call execution denied.' },
      { role: 'tool', tool_call_id: 'call_6', content: '[{"type":"text","text":"a\\nb"}]' },
      { role: 'system', content: 'Be brief from here on.' },
      { role: 'assistant', content: '' },
    ]);
  });

  it('reads them back into prompt messages that @ai-sdk/openai sends exactly as they were stored', async () => {
    const prompt = openaiChatCodec.decode(context(stored), 'v4');
    // A model that takes system messages as such (a reasoning model gets them as developer ones).
    const model = createOpenAI({ apiKey: 'sk-test', baseURL }).chat('gpt-4.1-mini');
    await model.doGenerate({
      prompt: [{ role: 'system', content: 'You are careful.' }, ...prompt] as never,
      tools: ['read_file', 'lookup', 'run'].map((name) => ({
        type: 'function' as const,
        name,
        inputSchema: { type: 'object' as const },
      })),
    });
    const sent = (fake.requests.at(-1) as { messages: unknown[] }).messages;
    expect(sent.slice(1)).toEqual(stored);
  });

  it('stores what it read back as it stored it the first time, in every prompt version', () => {
    for (const version of ['v2', 'v3', 'v4'] as PromptVersion[]) {
      const again = openaiChatCodec.encode(
        openaiChatCodec.decode(context(stored), version),
        'conversation[0]',
      );
      expect(again, version).toEqual(stored);
    }
    // Read back: text outputs, the texts of an assistant message as one, files in the version's shape.
    const v2 = openaiChatCodec.decode(context(stored), 'v2');
    expect(v2[1]?.content).toContainEqual({ type: 'file', mediaType: 'image/png', data: PNG });
    expect(v2[1]?.content).toContainEqual({
      type: 'file',
      mediaType: 'image/*',
      data: new URL('https://example.com/a.png'),
    });
    expect(v2[3]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'read_file',
          output: { type: 'text', value: 'export {}' },
        },
        {
          type: 'tool-result',
          toolCallId: 'call_2',
          toolName: 'lookup',
          output: { type: 'text', value: '{"hits":[1,2]}' },
        },
      ],
    });
    expect(v2[2]?.content).toContainEqual({
      type: 'tool-call',
      toolCallId: 'call_1',
      toolName: 'read_file',
      input: { path: 'a.ts' },
    });
    // A model's raw arguments (a string input) come back as the object they hold.
    expect(v2[2]?.content).toContainEqual({
      type: 'tool-call',
      toolCallId: 'call_2',
      toolName: 'lookup',
      input: { q: 'x' },
    });
  });

  it("reads compactor's own messages: the summary, an answer for a call that got none", () => {
    const prompt = openaiChatCodec.decode(
      context([
        { role: 'system', content: 'Restated.' },
        { role: 'user', content: '[compactor summary]' },
        stored[2],
        { role: 'tool', tool_call_id: 'call_1', content: 'no result was recorded' },
        { role: 'tool', tool_call_id: 'call_2', content: 'no result was recorded' },
      ]),
      'v4',
    );
    expect(prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(prompt[3]?.content).toHaveLength(2);
    expect(() =>
      openaiChatCodec.decode(context([{ role: 'tool', tool_call_id: 'x', content: '' }]), 'v4'),
    ).toThrow(/answering no call/);
  });

  it('refuses what a Chat Completions message cannot carry, naming the part', () => {
    const refused = (message: PromptMessage) => {
      try {
        openaiChatCodec.encode([message], 'conversation[7]');
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(
      refused({
        role: 'assistant',
        content: [
          { type: 'text', text: 'x' },
          { type: 'reasoning', text: 'thinking...', providerOptions: { anthropic: { signature: 'sig' } } },
        ],
      }),
    ).toMatch(/^conversation\[7\]\.content\[1\]: an openai-chat session cannot hold reasoning/);
    expect(
      refused({
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'file', mediaType: 'image/png', filename: 'shot.png', data: PNG },
        ],
      }),
    ).toMatch(/^conversation\[7\]\.content\[1\]\.filename: /);
    expect(
      refused({
        role: 'user',
        content: [
          {
            type: 'text',
            text: 'x',
            providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
          },
        ],
      }),
    ).toMatch(/^conversation\[7\]\.content\[0\]\.providerOptions\.anthropic\.cacheControl: /);
    expect(
      refused({
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: 'a', approved: true }],
      }),
    ).toMatch(/^conversation\[7\]\.content\[0\]\.type: a tool approval response/);
    // A V4 file reference points at a provider's storage: no base64 and no URL to store.
    expect(
      refused({
        role: 'user',
        content: [
          {
            type: 'file',
            mediaType: 'image/png',
            data: { type: 'reference', reference: { openai: 'file-1' } },
          },
        ],
      }),
    ).toBe(
      'conversation[7].content[0].data: an openai-chat session holds a file\'s base64 data or its URL, not a "reference" file',
    );
    expect(
      refused({
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'web', input: {}, providerExecuted: true }],
      }),
    ).toMatch(/providerExecuted/);
    expect(
      refused({
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: [1] }],
      }),
    ).toMatch(/^conversation\[7\]\.content\[0\]\.input: .*not an array/);
    expect(
      refused({
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'file', mediaType: 'video/mp4', data: 'AA==' },
        ],
      }),
    ).toMatch(/video\/mp4/);
    expect(
      refused({
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'file', mediaType: 'application/pdf', data: new URL('https://x/a.pdf') },
        ],
      }),
    ).toMatch(/not by URL/);
    // An empty, unsigned reasoning part holds nothing: stored as if it were not there.
    expect(
      openaiChatCodec.encode(
        [
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: '' },
              { type: 'text', text: 'hi' },
            ],
          },
        ],
        'c[0]',
      ),
    ).toEqual([{ role: 'assistant', content: 'hi' }]);
  });
});
