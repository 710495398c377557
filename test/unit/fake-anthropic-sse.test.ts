/**
 * What the fake Messages API does for Claude Code (the Claude Agent SDK's CLI), which streams and
 * counts tokens. It streams as the API does when a request says `"stream": true`: the real
 * SDK's stream helper joins the events into the same message the fake answers without streaming
 * (thinking with its signature, text, a tool call's input in pieces), a streamed reply's thinking is
 * accepted back by the strict fake, and a refused request gets its JSON error, not a stream. It
 * counts tokens (`/v1/messages/count_tokens`) by the same checks, consuming no scripted answer.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { joinEvents, messageEvents, parseSse, sseText } from '../support/fake-anthropic-sse.ts';
import { ADAPTIVE_THINKING } from '../support/models.ts';

const fake = new FakeAnthropicServer({ strict: true });
let client: Anthropic;
let url = '';
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  const started = await fake.start();
  url = started.url;
  close = started.close;
  client = new Anthropic({ apiKey: 'test', baseURL: url, maxRetries: 0 });
});

afterAll(() => close());

const tools = [
  {
    name: 'read_file',
    description: 'Read a file.',
    input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
  },
];
const reply = {
  thinking: 'I should read the parser first, then the tests that cover it.',
  text: 'Reading the parser and its tests now, one after the other.',
  toolUse: [{ name: 'read_file', input: { path: 'src/parser/tokens.ts', note: 'x'.repeat(100) } }],
};
const params = {
  model: 'claude-sonnet-5',
  max_tokens: 1_024,
  thinking: ADAPTIVE_THINKING,
  tools,
  messages: [{ role: 'user' as const, content: 'Fix the parser.' }],
};

describe('the fake Messages API, streaming', () => {
  it('streams the message it answers without streaming, and the SDK joins it back', async () => {
    fake.enqueue({ reply });
    const plain = await client.messages.create(params);
    fake.enqueue({ reply });
    const streamed = await client.messages.stream(params).finalMessage();
    const request = fake.requests.at(-1);
    expect((request?.body as { stream?: unknown } | undefined)?.stream).toBe(true);
    const { id: _a, ...plainRest } = plain;
    const { id: _b, ...streamedRest } = streamed;
    // Tool call ids are the fake's counter, and the SDK's stream helper adds `parsed_output`.
    const strip = (m: object) =>
      JSON.parse(
        JSON.stringify(m, (k, v) => (k === 'id' || k === 'parsed_output' ? undefined : v)),
      ) as unknown;
    expect(strip(streamedRest)).toEqual(strip(plainRest));
    expect(streamed.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(streamed.stop_reason).toBe('tool_use');
  });

  it('takes a streamed reply back, thinking signature included, under the strict checks', async () => {
    fake.enqueue({ reply });
    const first = await client.messages.stream(params).finalMessage();
    const call = first.content.find((b) => b.type === 'tool_use');
    if (call?.type !== 'tool_use') throw new Error('no tool call');
    fake.enqueue({ reply: { text: 'Done.' } });
    const second = await client.messages
      .stream({
        ...params,
        messages: [
          ...params.messages,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'export {}' }] },
        ],
      })
      .finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
  });

  it('answers a refused request with its JSON error, not a stream', async () => {
    const response = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, messages: [], stream: true }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('refuses a `stream` that is not a boolean, as the API does', async () => {
    const response = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ ...params, stream: 'yes' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/^stream:/);
  });

  it('writes events in the API order and reads them back whole (pure)', () => {
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [
        { type: 'thinking', thinking: 'a'.repeat(90), signature: 'sig' },
        { type: 'text', text: 'b'.repeat(45), citations: null },
        { type: 'tool_use', id: 't1', name: 'x', input: { deep: { list: [1, 2, 3] } } },
        { type: 'compaction', content: 'summary', signature: 's' },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 20 },
    };
    const events = messageEvents(message);
    expect(events[0]?.event).toBe('message_start');
    expect(events.at(-2)?.event).toBe('message_delta');
    expect(events.at(-1)?.event).toBe('message_stop');
    // Long texts arrive in several deltas.
    expect(events.filter((e) => e.event === 'content_block_delta').length).toBeGreaterThan(6);
    expect(joinEvents(parseSse(sseText(events)))).toEqual(message);
    expect(() => joinEvents(events.slice(0, -1))).toThrow(/without message_stop/);
    expect(() => joinEvents(events.slice(1))).toThrow(/before message_start/);
  });
});

describe('the fake Messages API, counting tokens', () => {
  const count = (body: Record<string, unknown>) =>
    fetch(`${url}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      headers: { 'x-api-key': 'test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('counts a request as it would be sent, without consuming a scripted answer', async () => {
    const { max_tokens: _m, ...request } = params;
    fake.enqueue('text-only');
    const response = await count(request);
    expect(response.status).toBe(200);
    const { input_tokens } = (await response.json()) as { input_tokens: number };
    expect(input_tokens).toBeGreaterThan(10);
    expect(fake.pending).toBe(1);
    await client.messages.create(params);
    expect(fake.pending).toBe(0);
  });

  it('refuses max_tokens and stream, and a conversation the strict rules refuse', async () => {
    const { max_tokens: _m, ...request } = params;
    expect((await count({ ...request, max_tokens: 5 })).status).toBe(400);
    expect((await count({ ...request, stream: true })).status).toBe(400);
    const bad = await count({ ...request, messages: [{ role: 'assistant', content: 'hi' }] });
    expect(bad.status).toBe(400);
  });
});
