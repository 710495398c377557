/**
 * The AI SDK middleware on each specification version (v2: AI SDK 5, v3: AI SDK 6, v4: AI SDK 7),
 * driven as each version's `wrapLanguageModel` drives a middleware (`transformParams`, then
 * `wrapGenerate` or `wrapStream` with the transformed parameters), on a real database: prompts of
 * the version's own types, with file data as bytes and as a URL, go into an `ai-sdk` session and
 * come back as the next prompt exactly (the format's encoding is undone); a retried call stores
 * nothing twice; a stream is passed through and its answer stored at its end with the context
 * version; the run's end is enqueued once, with the answer's input usage. Then the real `ai` 5,
 * 6 and 7 packages (npm aliases `ai-v5`, `ai-v6`), each's own `wrapLanguageModel` and
 * `generateText` (and ai 5's `streamText`) on a local model of its version.
 */
import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2Message,
  LanguageModelV2StreamPart,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Message,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Message,
} from '@ai-sdk/provider';
import { generateText, wrapLanguageModel } from 'ai';
import { generateText as generateText5, streamText as streamText5, wrapLanguageModel as wrap5 } from 'ai-v5';
import { generateText as generateText6, wrapLanguageModel as wrap6 } from 'ai-v6';
import { describe, expect, it } from 'vitest';
import { type CompletedRun, compactorMiddleware } from '../../producer/frameworks/ai-sdk/index.ts';
import { loadContext } from '../../producer/index.ts';
import type { RunCompletedInput } from '../../shared/protocol/events.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'ai-sdk-versions';
const PNG = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 1, 2, 255]);

/** A producer that records the events it is given. */
function recordingProducer() {
  const events: RunCompletedInput[] = [];
  return { events, runCompleted: async (e: RunCompletedInput) => void events.push(e) };
}

async function storedRows(sessionId: string) {
  return ctx.tdb.database.sql<{ seq: number; role: string; pinned: boolean; content: unknown }[]>`
    select seq::int as seq, role, pinned, content_blocks as content from messages
    where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

describe('specification v2 (AI SDK 5)', () => {
  it('stores a v2 prompt with bytes and a URL, sends it back exactly, and stores a streamed answer', async () => {
    const producer = recordingProducer();
    const runs: CompletedRun[] = [];
    const sessionId = 'v2';
    const middleware = compactorMiddleware({
      db: ctx.tdb.database.db,
      producer,
      tenantId,
      sessionId,
      specificationVersion: 'v2',
      onRunCompleted: (r) => runs.push(r),
    });
    expect(middleware.middlewareVersion).toBe('v2');
    const prompt: LanguageModelV2Message[] = [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'file', mediaType: 'image/png', data: PNG },
          { type: 'file', mediaType: 'application/pdf', data: new URL('https://example.com/a.pdf') },
        ],
      },
    ];
    const params: LanguageModelV2CallOptions = { prompt };
    const sent = (await middleware.transformParams?.({
      type: 'stream',
      params,
      model: undefined as never,
    })) as LanguageModelV2CallOptions;
    expect(sent.prompt).toEqual(prompt);
    const files = (sent.prompt[1]?.content ?? []) as Array<{ data?: unknown }>;
    expect(files[1]?.data).toBeInstanceOf(Uint8Array);
    expect(Array.from(files[1]?.data as Uint8Array)).toEqual(Array.from(PNG));
    expect(files[2]?.data).toBeInstanceOf(URL);

    const parts: LanguageModelV2StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: '1' },
      { type: 'text-delta', id: '1', delta: 'A logo ' },
      { type: 'text-delta', id: '1', delta: 'and a paper.' },
      { type: 'text-end', id: '1' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 900, outputTokens: 5, totalTokens: 905, cachedInputTokens: 800 },
      },
    ];
    const result = await middleware.wrapStream?.({
      doGenerate: async () => {
        throw new Error('not called');
      },
      doStream: async () => ({
        stream: new ReadableStream({
          start(c) {
            for (const p of parts) c.enqueue(p);
            c.close();
          },
        }),
      }),
      params: sent,
      model: undefined as never,
    });
    const out: LanguageModelV2StreamPart[] = [];
    const stream = (result as { stream: unknown }).stream as AsyncIterable<LanguageModelV2StreamPart>;
    for await (const p of stream) out.push(p);
    expect(out).toEqual(parts);
    const rows = await storedRows(sessionId);
    expect(rows.map((r) => [r.seq, r.role, r.pinned])).toEqual([
      [0, 'system', true],
      [1, 'user', false],
      [2, 'assistant', false],
    ]);
    expect(rows[1]?.content).toMatchObject({
      content: [
        { type: 'text' },
        { type: 'file', data: { $bytes: Buffer.from(PNG).toString('base64') } },
        { type: 'file', data: { $url: 'https://example.com/a.pdf' } },
      ],
    });
    expect(rows[2]?.content).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'A logo and a paper.' }],
    });
    expect(producer.events).toEqual([
      { tenantId, sessionId, eventId: runs[0]?.eventId, inputTokens: 900, cacheReadTokens: 800 },
    ]);
  });
});

describe('specification v3 (AI SDK 6)', () => {
  it('stores the tool results of the next step once, even when the call is retried', async () => {
    const producer = recordingProducer();
    const sessionId = 'v3';
    const middleware = compactorMiddleware({
      db: ctx.tdb.database.db,
      producer,
      tenantId,
      sessionId,
      specificationVersion: 'v3',
    });
    expect(middleware.specificationVersion).toBe('v3');
    const user: LanguageModelV3Message = {
      role: 'user',
      content: [{ type: 'text', text: 'List the files.' }],
    };
    const call = async (prompt: LanguageModelV3Message[], answer: LanguageModelV3GenerateResult) => {
      const params = (await middleware.transformParams?.({
        type: 'generate',
        params: { prompt } as LanguageModelV3CallOptions,
        model: undefined as never,
      })) as LanguageModelV3CallOptions;
      await middleware.wrapGenerate?.({
        doGenerate: async () => answer,
        doStream: async () => {
          throw new Error('not called');
        },
        params,
        model: undefined as never,
      });
      return params.prompt;
    };
    const usage = {
      inputTokens: { total: 50, noCache: 50, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 3, text: 3, reasoning: 0 },
    };
    await call([user], {
      content: [
        { type: 'reasoning', text: 'ls it is.', providerMetadata: { anthropic: { signature: 'sig' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'ls', input: '{"dir":"."}' },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage,
      warnings: [],
    });
    expect(producer.events).toHaveLength(0); // a tool call: the run goes on
    const assistant: LanguageModelV3Message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'ls it is.', providerOptions: { anthropic: { signature: 'sig' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'ls', input: { dir: '.' } },
      ],
    };
    const tool: LanguageModelV3Message = {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'ls', output: { type: 'text', value: 'a b' } },
      ],
    };
    const done: LanguageModelV3GenerateResult = {
      content: [{ type: 'text', text: 'a and b.' }],
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage,
      warnings: [],
    };
    // The AI SDK retries a failed call through the middleware: the same prompt twice.
    await middleware.transformParams?.({
      type: 'generate',
      params: { prompt: [user, assistant, tool] } as LanguageModelV3CallOptions,
      model: undefined as never,
    });
    const sent = await call([user, assistant, tool], done);
    expect(sent).toEqual([user, assistant, tool]);
    const rows = await storedRows(sessionId);
    expect(rows.map((r) => r.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(rows[1]?.content).toEqual(assistant);
    expect(producer.events).toHaveLength(1);
  });
});

describe('specification v4 (AI SDK 7)', () => {
  const local = (text: string): LanguageModelV4 => {
    const answer: LanguageModelV4GenerateResult = {
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage: {
        inputTokens: { total: 70, noCache: 10, cacheRead: 60, cacheWrite: 0 },
        outputTokens: { total: 2, text: 2, reasoning: 0 },
      },
      warnings: [],
    };
    return {
      specificationVersion: 'v4',
      provider: 'local',
      modelId: 'local',
      supportedUrls: {},
      doGenerate: async (options: LanguageModelV4CallOptions) => {
        seen.push(options.prompt);
        return answer;
      },
      doStream: async () => {
        throw new Error('not streamed');
      },
    };
  };
  const seen: LanguageModelV4Message[][] = [];

  it("runs under ai 7's wrapLanguageModel and generateText: the model gets the session, not the app's prompt", async () => {
    const producer = recordingProducer();
    const sessionId = 'v4';
    const middleware = compactorMiddleware({ db: ctx.tdb.database.db, producer, tenantId, sessionId });
    const model = wrapLanguageModel({ model: local('Hi.'), middleware });
    const first = await generateText({
      model,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello.' },
            { type: 'file', mediaType: 'image/png', data: PNG },
          ],
        },
      ],
    });
    expect(first.text).toBe('Hi.');
    // The application sends only its newest turn: the model still gets the whole conversation.
    await generateText({ model, system: 'Be brief.', prompt: 'And again.' });
    const last = seen.at(-1) as LanguageModelV4Message[];
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    const file = (
      (last[1]?.content ?? []) as Array<{ type: string; data?: { type: string; data: unknown } }>
    )[1];
    expect(file?.data?.type).toBe('data');
    expect(Array.from(file?.data?.data as Uint8Array)).toEqual(Array.from(PNG));
    expect(producer.events.map((e) => [e.inputTokens, e.cacheReadTokens])).toEqual([
      [70, 60],
      [70, 60],
    ]);
    const context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId, format: 'ai-sdk' });
    expect(context.prompt).toHaveLength(5);
    expect(middleware.sessionId).toBe(sessionId);
  });

  it('refuses bad options by name', () => {
    const db = ctx.tdb.database.db;
    const producer = recordingProducer();
    expect(() => compactorMiddleware({ db, producer, tenantId: '', sessionId: 's' })).toThrow(/^tenantId: /);
    expect(() =>
      compactorMiddleware({ db, producer, tenantId, sessionId: 's', runCompleted: 'never' as never }),
    ).toThrow(/^runCompleted: /);
    expect(() => compactorMiddleware({ db, producer: {} as never, tenantId, sessionId: 's' })).toThrow(
      /^producer: /,
    );
  });
});

/** The prompts a local model was called with. */
const prompts: unknown[][] = [];

/** A local v2 model (AI SDK 5) that answers `text`, streamed or not. */
function localV2(text: string): LanguageModelV2 {
  const usage = { inputTokens: 40, outputTokens: 2, totalTokens: 42, cachedInputTokens: 30 };
  return {
    specificationVersion: 'v2',
    provider: 'local',
    modelId: 'local-v2',
    supportedUrls: {},
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      return { content: [{ type: 'text', text }], finishReason: 'stop', usage, warnings: [] };
    },
    doStream: async (options) => {
      prompts.push(options.prompt);
      const parts: LanguageModelV2StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: text },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: 'stop', usage },
      ];
      return {
        stream: new ReadableStream({
          start(c) {
            for (const p of parts) c.enqueue(p);
            c.close();
          },
        }),
      };
    },
  };
}

/** A local v3 model (AI SDK 6) that answers `text`. */
function localV3(text: string): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'local',
    modelId: 'local-v3',
    supportedUrls: {},
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      return {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: 'end_turn' },
        usage: {
          inputTokens: { total: 40, noCache: 10, cacheRead: 30, cacheWrite: 0 },
          outputTokens: { total: 2, text: 2, reasoning: 0 },
        },
        warnings: [],
      };
    },
    doStream: async () => {
      throw new Error('not streamed');
    },
  };
}

describe('the real ai 5 and ai 6 packages', () => {
  it("ai 5's wrapLanguageModel with the v2 middleware: generateText and streamText keep one session", async () => {
    const producer = recordingProducer();
    const sessionId = 'ai5';
    const middleware = compactorMiddleware({
      db: ctx.tdb.database.db,
      producer,
      tenantId,
      sessionId,
      specificationVersion: 'v2',
    });
    // The model typed as ai 5's own @ai-sdk/provider (2.x) types it; the middleware fits as it is.
    const model = wrap5({ model: localV2('Five.') as Parameters<typeof wrap5>[0]['model'], middleware });
    const first = await generateText5({ model, system: 'Be brief.', prompt: 'One?' });
    expect(first.text).toBe('Five.');
    const second = streamText5({ model, system: 'Be brief.', prompt: 'Two?' });
    expect(await second.text).toBe('Five.');
    expect(prompts.at(-1)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'One?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Five.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Two?' }] },
    ]);
    expect((await storedRows(sessionId)).map((r) => r.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(producer.events.map((e) => [e.inputTokens, e.cacheReadTokens])).toEqual([
      [40, 30],
      [40, 30],
    ]);
  });

  it("ai 6's wrapLanguageModel with the v3 middleware", async () => {
    const producer = recordingProducer();
    const sessionId = 'ai6';
    const middleware = compactorMiddleware({
      db: ctx.tdb.database.db,
      producer,
      tenantId,
      sessionId,
      specificationVersion: 'v3',
    });
    const model = wrap6({ model: localV3('Six.') as Parameters<typeof wrap6>[0]['model'], middleware });
    await generateText6({ model, system: 'Be brief.', prompt: 'One?' });
    const second = await generateText6({ model, system: 'Be brief.', prompt: 'Two?' });
    expect(second.text).toBe('Six.');
    expect(prompts.at(-1)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'One?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Six.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Two?' }] },
    ]);
    expect(producer.events).toHaveLength(2);
  });
});
