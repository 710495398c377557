/**
 * An agent on OpenAI Chat Completions, end to end: an `openai-chat` session with tool calls is
 * created and appended to, compacted by clearToolResults, slidingWindow and summarize, and after
 * each its context is sent through the real `openai` SDK to a strict fake Chat Completions server
 * (test/support/fake-openai-chat.ts), which refuses what the API refuses; every compaction is then
 * restored byte-exact. Also: the format's refusals at append, each leaving the session unchanged.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import {
  appendMessages,
  type ChatCompletionsMessage,
  createSession,
  type LoadedChatContext,
  loadContext,
} from '../../producer/index.ts';
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { createAnthropicCompactionSummarizer } from '../../worker/summarizers/anthropic-compaction.ts';
import { serveApi } from '../support/api-server.ts';
import { runCli } from '../support/cli.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'chat';
const fake = new FakeOpenAIChatServer();
const TOKEN = 'chat-api-token-5d1c7e29a4';
let client: OpenAI;
let api: Listening;
let dir: string;

beforeAll(async () => {
  client = new OpenAI({ apiKey: 'test', baseURL: await fake.start(), maxRetries: 0 });
  api = await serveApi(ctx, { [tenantId]: TOKEN }, { maxBodyBytes: 1024 * 1024 });
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-openai-chat-'));
});
afterAll(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

/** A request to the HTTP API as the tenant. */
async function call(method: string, route: string, body?: unknown) {
  const response = await fetch(`${api.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const db = () => ctx.tdb.database.db;

/** Every column of the live history, in seq order: what "byte-exact" means. */
async function liveRows(sessionId: string) {
  return ctx.tdb.database.sql`
    select seq::int, role, kind, content, content_blocks::text, tool_call_id, tool_name, tool_use_ids,
      tool_result_ids, has_thinking, token_count, pinned, created_at, context_version
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function counts(sessionId: string) {
  const [row] = await ctx.tdb.database.sql<{ message_count: number; last_seq: string }[]>`
    select message_count, last_seq from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

async function compact(sessionId: string, strategy: Strategy) {
  const outcome = await ctx.compactInProcess({ tenantId, sessionId, strategy });
  if (outcome.row === null) throw new Error('a manual compaction is never batched');
  return outcome.row;
}

const bigOutput = (n: number) => `line ${n}: ${'x'.repeat(60)}\n`.repeat(120);

/** A coding agent's Chat Completions history: a system prompt, then turns that call tools. */
function history(turns: number): ChatCompletionsMessage[] {
  const out: ChatCompletionsMessage[] = [
    { role: 'system', content: 'You are a careful coding agent.' },
    { role: 'user', content: 'Fix the failing test in src/parse.ts.' },
  ];
  for (let t = 0; t < turns; t++) {
    out.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: `call_${t}_a`,
            type: 'function',
            function: { name: 'bash', arguments: `{"cmd":"npm test -- ${t}"}` },
          },
          {
            id: `call_${t}_b`,
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"src/parse.ts"}' },
          },
        ],
      } as ChatCompletionsMessage,
      { role: 'tool', tool_call_id: `call_${t}_a`, content: bigOutput(t) } as ChatCompletionsMessage,
      {
        role: 'tool',
        tool_call_id: `call_${t}_b`,
        content: [{ type: 'text', text: `export const v${t} = 1;` }],
      },
      { role: 'assistant', content: `Turn ${t}: the test still fails at line ${t}.` },
      { role: 'user', content: `Go on with step ${t + 1}.` },
    );
  }
  return out;
}

/** The agent's next request: its loaded context and a new user message, sent with the real SDK. */
async function send(sessionId: string) {
  const context = await loadContext(db(), { tenantId, sessionId, format: 'openai-chat' });
  const completion = await client.chat.completions.create({
    model: 'gpt-5.4-mini',
    messages: [
      ...(context.messages as OpenAI.Chat.ChatCompletionMessageParam[]),
      { role: 'user', content: 'Continue.' },
    ],
  });
  return { context, completion };
}

describe('an openai-chat session', () => {
  it('stores Chat Completions messages as written, with their tool pair ids, and sends them back', async () => {
    const messages = history(3);
    await createSession(db(), {
      tenantId,
      sessionId: 'stored',
      format: 'openai-chat',
      messages: messages.map((message, seq) => ({ seq, message })),
    });
    const rows = await liveRows('stored');
    expect(rows.map((r) => JSON.parse(r.content_blocks as string))).toEqual(messages);
    expect(rows[2]).toMatchObject({
      role: 'assistant',
      kind: 'tool_call',
      tool_use_ids: ['call_0_a', 'call_0_b'],
      tool_name: 'bash',
    });
    expect(rows[3]).toMatchObject({ role: 'tool', kind: 'tool_result', tool_result_ids: ['call_0_a'] });
    expect(rows[2]?.content).toContain('{"name":"bash","arguments":{"cmd":"npm test -- 0"}}');

    const { context, completion } = await send('stored');
    expect(context).toMatchObject({ format: 'openai-chat', sessionId: 'stored', version: 0, notices: [] });
    expect(context.messages).toEqual(messages);
    expect(completion.choices[0]?.message.content).toBe('ok');
  });

  it('refuses what the API would, and messages of the other format, naming the field and writing nothing', async () => {
    await createSession(db(), { tenantId, sessionId: 'refusals', format: 'openai-chat', messages: [] });
    await appendMessages(db(), tenantId, 'refusals', history(1));
    const before = await counts('refusals');
    const bad: Array<[unknown, RegExp]> = [
      [
        { role: 'assistant', content: null, tool_calls: [] },
        /messages\[0\]\.tool_calls: empty array\. Expected an array with minimum length 1/,
      ],
      [{ role: 'tool', content: 'done' }, /messages\[0\]\.tool_call_id: required on a tool message/],
      [
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_0_a', type: 'function', function: { name: 'bash', arguments: '{}' } }],
        },
        /messages\[0\]\.tool_calls\[0\]\.id: tool_use id "call_0_a" is already used in session "refusals"/,
      ],
      [
        {
          role: 'assistant',
          tool_calls: [
            { id: 'call_x', type: 'function', function: { name: 'bash', arguments: { cmd: 'ls' } } },
          ],
        },
        /messages\[0\]\.tool_calls\[0\]\.function\.arguments: expected a string/,
      ],
      [{ role: 'assistant', content: null }, /messages\[0\]\.content: expected a string, got null/],
      [{ role: 'function', name: 'f', content: 'x' }, /messages\[0\]\.role: .*legacy function role/],
      [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
        /messages\[0\]\.content\[0\]\.type: "tool_result" is an Anthropic Messages API content block, but session "refusals" has format "openai-chat"/,
      ],
    ];
    for (const [message, error] of bad) {
      await expect(
        appendMessages(db(), tenantId, 'refusals', [message as ChatCompletionsMessage]),
      ).rejects.toThrow(error);
    }
    expect(await counts('refusals')).toEqual(before);

    await createSession(db(), { tenantId, sessionId: 'anthropic', messages: [] });
    await expect(
      appendMessages(db(), tenantId, 'anthropic', [{ role: 'tool', tool_call_id: 'call_1', content: 'ok' }]),
    ).rejects.toThrow(
      /messages\[0\]\.role: "tool" is a Chat Completions role, but session "anthropic" has format "anthropic"/,
    );
    await expect(
      appendMessages(db(), tenantId, 'anthropic', [
        {
          role: 'assistant',
          content: 'x',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
        } as ChatCompletionsMessage,
      ]),
    ).rejects.toThrow(/messages\[0\]\.tool_calls: tool_calls is a Chat Completions field/);
    expect((await counts('anthropic'))?.message_count).toBe(0);
    await expect(loadContext(db(), { tenantId, sessionId: 'refusals' })).rejects.toThrow(
      /format: session "refusals" has format "openai-chat", not "anthropic"/,
    );
  });

  it('clears old tool messages with their pairs whole, the API accepts the context, and a restore is byte-exact', async () => {
    await createSession(db(), { tenantId, sessionId: 'cleared', format: 'openai-chat', messages: [] });
    await appendMessages(db(), tenantId, 'cleared', history(4));
    const before = await liveRows('cleared');
    const row = await compact('cleared', {
      type: 'clearToolResults',
      keep: 2,
      clearAtLeast: 0,
      clearToolInputs: true,
      excludeTools: [],
    });
    expect(row.status).toBe('applied');
    const { context, completion } = await send('cleared');
    expect(completion.choices[0]?.message.content).toBe('ok');
    const tools = context.messages.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(8);
    expect(tools.slice(0, 6).every((m) => String(m.content).startsWith('[tool result cleared: '))).toBe(true);
    expect(tools[0]).toEqual({
      role: 'tool',
      tool_call_id: 'call_0_a',
      content: expect.stringMatching(/^\[tool result cleared: bash, /),
    });
    expect(tools[7]?.content).toEqual([{ type: 'text', text: 'export const v3 = 1;' }]);
    const firstCall = context.messages[2] as { tool_calls: Array<{ function: { arguments: string } }> };
    expect(firstCall.tool_calls.map((c) => c.function.arguments)).toEqual(['{}', '{}']);

    await restoreCompaction(db(), { tenantId, sessionId: 'cleared', compactionId: row.id });
    expect(await liveRows('cleared')).toEqual(before);
    expect(violations(await audit(db(), tenantId, 'cleared'))).toEqual([]);
  });

  it('keeps tool pairs together through a sliding window and a summary, each context accepted, each restored', async () => {
    await createSession(db(), { tenantId, sessionId: 'windowed', format: 'openai-chat', messages: [] });
    await appendMessages(db(), tenantId, 'windowed', history(5));
    const before = await liveRows('windowed');

    // 9 messages would cut between a call and its answers: the planner keeps the pair together.
    const window = await compact('windowed', parseStrategy('slidingWindow:9'));
    expect(window.status).toBe('applied');
    const windowed = await send('windowed');
    expect(windowed.completion.choices[0]?.message.content).toBe('ok');
    expect(windowed.context.messages[0]).toEqual({
      role: 'system',
      content: 'You are a careful coding agent.',
    });
    await restoreCompaction(db(), { tenantId, sessionId: 'windowed', compactionId: window.id });
    expect(await liveRows('windowed')).toEqual(before);

    const summary = await compact('windowed', parseStrategy('summarize:6'));
    expect(summary.status).toBe('applied');
    const summarized: { context: LoadedChatContext } = await send('windowed');
    const [system, record, ...kept] = summarized.context.messages;
    expect(system).toEqual({ role: 'system', content: 'You are a careful coding agent.' });
    expect(record).toMatchObject({ role: 'user', content: expect.stringContaining('<session-record>') });
    expect(String(record?.content)).toContain('src/parse.ts');
    expect(kept.length).toBeGreaterThanOrEqual(6);
    expect(kept[0]?.role).not.toBe('tool');
    await restoreCompaction(db(), { tenantId, sessionId: 'windowed', compactionId: summary.id });
    expect(await liveRows('windowed')).toEqual(before);
    expect(violations(await audit(db(), tenantId, 'windowed'))).toEqual([]);
  });

  it('the strict fake refuses what the API refuses, with its error texts', async () => {
    const call = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }],
    };
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }, call, { role: 'user', content: 'next' }],
      }),
    ).rejects.toThrow(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
    );
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_9', content: 'x' },
        ],
      }),
    ).rejects.toThrow(
      "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    );
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { ...call, tool_calls: [] },
        ],
      }),
    ).rejects.toThrow(
      "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.",
    );
    await expect(
      client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: null as unknown as string }],
      }),
    ).rejects.toThrow("Invalid value for 'content': expected a string, got null.");
  });

  it('is created, appended to and read over the HTTP API, refusing the other format with a 400', async () => {
    const messages = history(2);
    const created = await call('POST', '/v1/sessions', {
      id: 'http',
      format: 'openai-chat',
      messages: messages.slice(0, 2),
    });
    expect(created).toMatchObject({ status: 201, body: { sessionId: 'http', messageCount: 2 } });
    const appended = await call('POST', '/v1/sessions/http/messages', {
      messages: [
        ...messages.slice(2),
        { role: 'assistant', content: 'Done.', refusal: null, annotations: [] },
      ],
    });
    expect(appended).toMatchObject({
      status: 200,
      body: { seqs: Array.from({ length: messages.length - 1 }, (_, i) => i + 2) },
    });

    const mixed = await call('POST', '/v1/sessions/http/messages', {
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }] },
      ],
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatchObject({
      field: 'messages[0].content[0].type',
      message: expect.stringContaining('has format "openai-chat"'),
    });
    const badFormat = await call('POST', '/v1/sessions', { id: 'http-2', format: 'openai-realtime' });
    expect(badFormat.status).toBe(400);
    expect(badFormat.body.error).toMatchObject({ field: 'format' });

    const context = await call('GET', '/v1/sessions/http/context');
    expect(context.status).toBe(200);
    expect(context.body).toMatchObject({ format: 'openai-chat', sessionId: 'http', version: 0 });
    const sent = context.body.messages as OpenAI.Chat.ChatCompletionMessageParam[];
    expect(sent).toHaveLength(messages.length + 1);
    const completion = await client.chat.completions.create({
      model: 'gpt-5.4-mini',
      messages: [...sent, { role: 'user', content: 'Next.' }],
    });
    expect(completion.choices[0]?.message.content).toBe('ok');
  });

  it('is imported from a JSONL of Chat Completions requests: the last request is the session', async () => {
    const messages = history(2);
    const file = path.join(dir, 'gpt-run.jsonl');
    await writeFile(
      file,
      [
        { model: 'gpt-5.4-mini', messages: messages.slice(0, 2) },
        { model: 'gpt-5.4-mini', messages: messages.slice(0, 7) },
        { model: 'gpt-5.4-mini', messages },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const imported = await importTranscript(db(), file, { tenantId });
    expect(imported).toMatchObject({
      sessionId: 'gpt-run',
      format: 'openai-chat',
      detected: true,
      messageCount: messages.length,
    });
    const { context, completion } = await send('gpt-run');
    expect(context.messages).toEqual(messages);
    expect(completion.choices[0]?.message.content).toBe('ok');
    // `compactor context` prints the same body, in the session's format.
    const printed = await runCli(['context', '--tenant', tenantId, '--session', 'gpt-run'], ctx.cliEnv);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual({ ...context });

    const bad = path.join(dir, 'bad.jsonl');
    await writeFile(
      bad,
      JSON.stringify({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', content: 'x' },
        ],
      }),
    );
    await expect(importTranscript(db(), bad, { tenantId })).rejects.toThrow(
      /bad\.jsonl:1: messages\[1\]\.tool_call_id: required on a tool message/,
    );
    expect(await counts('bad')).toBeUndefined();
  });

  it('is summarized by the Anthropic summarizer from its plain-text view, and refused by anthropic-compaction', async () => {
    await createSession(db(), { tenantId, sessionId: 'by-claude', format: 'openai-chat', messages: [] });
    await appendMessages(db(), tenantId, 'by-claude', history(4));
    const primary = createAnthropicSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: ctx.llm.url,
      model: 'claude-haiku-4-5',
    });
    const outcome = await ctx.compactInProcess(
      { tenantId, sessionId: 'by-claude', strategy: parseStrategy('summarize:6') },
      { summarizers: { primary } },
    );
    expect(outcome.row).toMatchObject({ status: 'applied', summarizer: 'anthropic' });
    const sent = JSON.stringify(ctx.fake.requests.at(-1)?.body);
    expect(sent).toContain('{\\"name\\":\\"bash\\",\\"arguments\\":{\\"cmd\\":\\"npm test -- 0\\"}}');
    expect(sent).toContain('export const v0 = 1;');
    const { context, completion } = await send('by-claude');
    expect(context.messages[1]).toMatchObject({
      role: 'user',
      content: expect.stringContaining('<session-record>'),
    });
    expect(completion.choices[0]?.message.content).toBe('ok');

    const compaction = createAnthropicCompactionSummarizer({
      apiKey: 'sk-ant-test',
      baseURL: ctx.llm.url,
      model: 'claude-sonnet-4-6',
    });
    const before = await liveRows('by-claude');
    await expect(
      ctx.compactInProcess(
        {
          tenantId,
          sessionId: 'by-claude',
          strategy: {
            ...parseStrategy('summarize:2'),
            summarizer: 'anthropic-compaction',
            fallback: 'none',
          } as Strategy,
        },
        { summarizers: { primary, named: { 'anthropic-compaction': compaction } } },
      ),
    ).rejects.toThrow(/anthropic-compaction summarizer .* session "by-claude" has format "openai-chat"/);
    expect(await liveRows('by-claude')).toEqual(before);
  });
});
