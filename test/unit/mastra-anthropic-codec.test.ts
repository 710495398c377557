/**
 * The `anthropic` codec of the Mastra adapter (producer/frameworks/mastra/anthropic.ts): the AI SDK
 * prompt messages of a Claude agent become `MessageParam`s compactor accepts, signed thinking and
 * cache breakpoints included; read back and sent through the real `@ai-sdk/anthropic` provider (to
 * the fake Messages API over HTTP), they make a request whose messages are exactly the stored ones;
 * storing what was read back stores the same again; what a block cannot carry is refused.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedContext } from '../../producer/context.ts';
import { anthropicCodec } from '../../producer/frameworks/mastra/anthropic.ts';
import type { PromptMessage, PromptVersion } from '../../producer/frameworks/mastra/prompt.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n').toString('base64');
const ephemeral = { anthropic: { cacheControl: { type: 'ephemeral' } } };

const conversation: PromptMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'The screen and the spec:', providerOptions: { mastra: { createdAt: 1 } } },
      { type: 'file', mediaType: 'image/png', data: { type: 'data', data: Buffer.from(PNG, 'base64') } },
      { type: 'file', mediaType: 'application/pdf', filename: 'spec.pdf', data: { type: 'data', data: PDF } },
    ],
    providerOptions: ephemeral,
  },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'Read it first.', providerOptions: { anthropic: { signature: 'sig-1' } } },
      { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'read_file', input: { path: 'a.ts' } },
      { type: 'tool-call', toolCallId: 'toolu_2', toolName: 'run', input: '{"cmd":"ls"}' },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'toolu_1',
        toolName: 'read_file',
        output: { type: 'json', value: { lines: 3 } },
      },
      {
        type: 'tool-result',
        toolCallId: 'toolu_2',
        toolName: 'run',
        output: { type: 'error-text', value: 'no such file' },
        providerOptions: ephemeral,
      },
    ],
  },
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'toolu_3', toolName: 'shot', input: {} }],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'toolu_3',
        toolName: 'shot',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'The page:' },
            { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } },
          ],
        },
      },
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
];

const stored = anthropicCodec.encode(conversation, 'conversation[0]') as Array<{
  role: string;
  content: unknown;
}>;
const context = (messages: unknown[]): LoadedContext =>
  ({
    system: undefined,
    messages,
    tokens: 0,
    sessionId: 's',
    notices: [],
    betas: [],
    version: 0,
  }) as LoadedContext;

const fake = new FakeAnthropicServer();
// The signatures here are made up, not the fake's: it cannot check them (the e2e test sends the
// fake's own back through compactions).
fake.acceptForeignSignatures = true;
let url = '';
beforeAll(async () => {
  url = (await fake.start()).url;
});
afterAll(() => fake.close());

describe("the Mastra adapter's anthropic codec", () => {
  it('stores thinking with its signature, tool results with is_error, cache breakpoints where the SDK puts them', () => {
    expect(stored[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'The screen and the spec:' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: PDF },
          title: 'spec.pdf',
          cache_control: { type: 'ephemeral' },
        },
      ],
    });
    expect(stored[1]?.content).toEqual([
      { type: 'thinking', thinking: 'Read it first.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
      { type: 'tool_use', id: 'toolu_2', name: 'run', input: { cmd: 'ls' } },
    ]);
    expect(stored[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"lines":3}' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          content: 'no such file',
          is_error: true,
          cache_control: { type: 'ephemeral' },
        },
      ],
    });
  });

  it('reads them back into prompt messages that @ai-sdk/anthropic sends exactly as they were stored', async () => {
    const prompt = anthropicCodec.decode(context(stored), 'v4');
    const model = createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${url}/v1` })('claude-sonnet-5');
    await model.doGenerate({
      prompt: [
        { role: 'system', content: 'You are careful.' },
        ...prompt,
        { role: 'user', content: [{ type: 'text', text: 'Next?' }] },
      ] as never,
      tools: ['read_file', 'run', 'shot'].map((name) => ({
        type: 'function' as const,
        name,
        inputSchema: { type: 'object' as const },
      })),
    });
    const sent = (fake.requests.at(-1)?.body as { messages: unknown[] } | undefined)?.messages ?? [];
    expect(sent.slice(0, -1)).toEqual(stored);
  });

  it('stores what it read back as it stored it the first time, in every prompt version', () => {
    for (const version of ['v2', 'v3', 'v4'] as PromptVersion[]) {
      const again = anthropicCodec.encode(anthropicCodec.decode(context(stored), version), 'conversation[0]');
      expect(again, version).toEqual(stored);
    }
    // A user turn compactor merged (results first, then text) comes back as a tool and a user message.
    const merged = anthropicCodec.decode(
      context([
        stored[1],
        {
          role: 'user',
          content: [...((stored[2]?.content ?? []) as unknown[]), { type: 'text', text: 'Go on.' }],
        },
      ]),
      'v4',
    );
    expect(merged.map((m) => m.role)).toEqual(['assistant', 'tool', 'user']);
  });

  it('refuses what a Messages API block cannot carry, naming the part', () => {
    const refused = (message: PromptMessage) => {
      try {
        anthropicCodec.encode([message], 'conversation[3]');
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        return (error as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refused({ role: 'assistant', content: [{ type: 'reasoning', text: 'unsigned' }] })).toMatch(
      /^conversation\[3\]\.content\[0\]: reasoning without an Anthropic signature/,
    );
    expect(
      refused({
        role: 'assistant',
        content: [{ type: 'text', text: 'x', providerOptions: { anthropic: { citations: [] } } }],
      }),
    ).toMatch(/^conversation\[3\]\.content\[0\]\.providerOptions\.anthropic\.citations: /);
    expect(
      refused({
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 's', toolName: 'web_search', input: {}, providerExecuted: true },
        ],
      }),
    ).toMatch(/providerExecuted/);
    expect(
      refused({ role: 'user', content: [{ type: 'file', mediaType: 'audio/wav', data: 'AA==' }] }),
    ).toMatch(/audio\/wav/);
    // A V4 file reference points at a provider's storage: no base64 and no URL to store.
    expect(
      refused({
        role: 'user',
        content: [
          {
            type: 'file',
            mediaType: 'image/png',
            data: { type: 'reference', reference: { anthropic: 'file_1' } },
          },
        ],
      }),
    ).toBe(
      'conversation[3].content[0].data: an anthropic session holds a file\'s base64 data or its URL, not a "reference" file',
    );
  });
});
