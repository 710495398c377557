/**
 * The strict fake Chat Completions server streams as the API does, over real HTTP through the real
 * `openai` SDK: `stream: true` gets server-sent `chat.completion.chunk`s that the SDK's stream
 * helper puts together into the same message the fake answers without streaming (text, tool calls
 * and their arguments, the finish reason), the usage in a last chunk when `include_usage` asks for
 * it; and a streamed request is refused by the same rules, with a JSON 400, as one that does not
 * stream, plus `stream_options` without `stream`.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAIChatServer, streamParameterError } from '../support/fake-openai-chat.ts';

const fake = new FakeOpenAIChatServer();
let client: OpenAI;
const tools = [
  {
    type: 'function' as const,
    function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
];

beforeAll(async () => {
  client = new OpenAI({ apiKey: 'sk-test', baseURL: await fake.start(), maxRetries: 0 });
});

afterAll(() => fake.close());

describe('the fake Chat Completions server, streaming', () => {
  it('streams a scripted reply that the SDK puts back together as the fake answers it unstreamed', async () => {
    const reply = {
      content: 'Reading both.',
      toolCalls: [
        { name: 'read_file', arguments: { path: 'a.ts' } },
        { name: 'read_file', arguments: { path: 'b.ts' } },
      ],
    };
    const messages = [{ role: 'user' as const, content: 'Read a.ts and b.ts.' }];
    fake.script(reply, reply);
    const plain = await client.chat.completions.create({ model: 'm', messages, tools });
    const stream = client.chat.completions.stream({
      model: 'm',
      messages,
      tools,
      stream_options: { include_usage: true },
    });
    const chunks: unknown[] = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const streamed = await stream.finalChatCompletion();
    const { tool_calls: plainCalls, ...plainMessage } = plain.choices[0]?.message ?? {};
    const { tool_calls: streamedCalls, ...streamedMessage } = streamed.choices[0]?.message ?? {};
    expect(streamedMessage).toMatchObject({ ...plainMessage, refusal: null });
    // The same calls, but for their ids (the fake numbers every call it makes).
    const shape = (calls: typeof plainCalls) =>
      (calls ?? []).map((c) => ({ ...c, id: c.id.replace(/\d+$/, 'N') }));
    expect(shape(streamedCalls)).toEqual(shape(plainCalls));
    expect(streamed.choices[0]?.finish_reason).toBe('tool_calls');
    expect(streamed.usage).toEqual(plain.usage);
    // Pieces, as the API streams them: the text in two deltas, each call's arguments in two.
    expect(chunks.length).toBe(1 + 2 + 2 * 3 + 1 + 1);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: plain.usage });
    expect(fake.requests.at(-1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('leaves the usage out unless include_usage asks for it', async () => {
    const stream = client.chat.completions.stream({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const chunks: Array<{ usage?: unknown }> = [];
    stream.on('chunk', (chunk) => chunks.push(chunk));
    const done = await stream.finalChatCompletion();
    expect(done.choices[0]?.message.content).toBe('ok');
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
  });

  it('refuses a streamed request by the rules of any request, with a JSON 400', async () => {
    const unanswered = [
      { role: 'user' as const, content: 'hi' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'user' as const, content: 'next' },
    ];
    await expect(
      client.chat.completions.create({ model: 'm', messages: unanswered, stream: true }),
    ).rejects.toThrow(/must be followed by tool messages responding to each 'tool_call_id'/);
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream_options: { include_usage: true },
      }),
    ).rejects.toThrow("The 'stream_options' parameter is only allowed when 'stream' is enabled.");
    expect(streamParameterError({ stream: 'yes' })?.param).toBe('stream');
    expect(streamParameterError({ stream: false })).toBeNull();
  });
});
