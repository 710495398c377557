/**
 * An agent on the OpenAI Responses API, end to end: an `openai-responses` session is imported, then
 * an agent loop appends what the real `openai` SDK got from a strict fake Responses server
 * (test/support/fake-openai-responses.ts): reasoning items with encrypted content the server signed,
 * function calls and their outputs. It is compacted by slidingWindow, clearToolResults,
 * clearThinking and summarize (the extractive summarizer), and after each its context goes back
 * through `client.responses.create({ store: false })` to the fake, which refuses what the API
 * refuses (an altered blob included); every compaction is then restored byte-exact. Also: a
 * compaction item from `/responses/compact`, the format's refusals at append, the HTTP API, the CLI,
 * and the summarizers that can and cannot read the format.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import {
  appendMessages,
  createSession,
  type LoadedResponsesContext,
  loadContext,
  type ResponsesInputItem,
} from '../../producer/index.ts';
import type { PaybackInputs } from '../../shared/policy/payback.ts';
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { createAnthropicSummarizer } from '../../worker/summarizers/anthropic.ts';
import { createAnthropicCompactionSummarizer } from '../../worker/summarizers/anthropic-compaction.ts';
import { createOpenAICompactionSummarizer } from '../../worker/summarizers/openai-compaction.ts';
import { serveApi } from '../support/api-server.ts';
import { runCli } from '../support/cli.ts';
import { FakeOpenAIResponsesServer } from '../support/fake-openai-responses.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'responses';
const fake = new FakeOpenAIResponsesServer();
const TOKEN = 'responses-api-token-8f3a61c0d2';
const MODEL = 'gpt-5.4-mini';
let client: OpenAI;
let fakeUrl: string;
let api: Listening;
let dir: string;

beforeAll(async () => {
  fakeUrl = await fake.start();
  client = new OpenAI({ apiKey: 'test', baseURL: fakeUrl, maxRetries: 0 });
  api = await serveApi(ctx, { [tenantId]: TOKEN }, { maxBodyBytes: 1024 * 1024 });
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-openai-responses-'));
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
const items = (output: unknown) => output as ResponsesInputItem[];
const INSTRUCTIONS: ResponsesInputItem = { role: 'developer', content: 'You are a careful coding agent.' };

async function context(sessionId: string): Promise<LoadedResponsesContext> {
  return loadContext(db(), { tenantId, sessionId, format: 'openai-responses' });
}

/** The agent's next request, sent with the real SDK, stateless: its loaded context and `more`. */
async function send(
  sessionId: string,
  more: ResponsesInputItem[] = [{ role: 'user', content: 'Continue.' }],
) {
  const loaded = await context(sessionId);
  const input = [...loaded.input, ...more] as OpenAI.Responses.ResponseInput;
  const response = await client.responses.create({ model: MODEL, input, store: false });
  return { context: loaded, response };
}

/**
 * One turn of a coding agent: it asks, the model reasons and calls `bash`, the agent runs it and
 * sends the output, the model reasons and answers. Six items appended: user, reasoning,
 * function_call, function_call_output, reasoning, message.
 */
async function agentTurn(sessionId: string, t: number): Promise<void> {
  const ask: ResponsesInputItem = { role: 'user', content: `Step ${t}: run the tests of src/parse.ts.` };
  fake.script.push({ name: 'bash', arguments: JSON.stringify({ cmd: `npm test -- ${t}` }) });
  const first = await send(sessionId, [ask]);
  const fc = first.response.output.find((o) => o.type === 'function_call');
  if (fc?.type !== 'function_call') throw new Error('the fake answers a scripted turn with a call');
  const result: ResponsesInputItem = {
    type: 'function_call_output',
    call_id: fc.call_id,
    output: bigOutput(t),
  };
  await appendMessages(db(), tenantId, sessionId, [ask, ...items(first.response.output), result], {
    contextVersion: first.context.version,
  });
  const second = await send(sessionId, []);
  await appendMessages(db(), tenantId, sessionId, items(second.response.output), {
    contextVersion: second.context.version,
  });
}

async function agentSession(sessionId: string, turns: number): Promise<void> {
  await createSession(db(), { tenantId, sessionId, format: 'openai-responses', messages: [] });
  await appendMessages(db(), tenantId, sessionId, [INSTRUCTIONS]);
  for (let t = 0; t < turns; t++) await agentTurn(sessionId, t);
}

describe('an openai-responses session', () => {
  it('stores what the SDK returned byte-exact, one item per row, and sends it back as the next input', async () => {
    await agentSession('loop', 2);
    const rows = await liveRows('loop');
    expect(rows).toHaveLength(13);
    expect(rows.map((r) => r.kind)).toEqual([
      'message',
      ...Array(2).fill(['message', 'message', 'tool_call', 'tool_result', 'message', 'message']).flat(),
    ]);
    expect(rows[2]).toMatchObject({ role: 'assistant', has_thinking: true });
    expect(rows[3]).toMatchObject({ role: 'assistant', kind: 'tool_call', tool_name: 'bash' });
    expect(rows[4]).toMatchObject({ role: 'tool', tool_result_ids: [rows[3]?.tool_use_ids[0]] });
    // The reasoning item as the SDK parsed it from the server, encrypted_content and all.
    const sent = fake.requests.filter((r) => r.path === '/v1/responses');
    const answered = sent.at(-1)?.body as { input: unknown[] };
    expect(answered.input).toHaveLength(11);
    expect(rows.map((r) => JSON.parse(r.content_blocks as string)).slice(0, 11)).toEqual(answered.input);

    const { context: loaded, response } = await send('loop');
    expect(loaded).toMatchObject({ format: 'openai-responses', sessionId: 'loop', notices: [] });
    expect(loaded.input).toHaveLength(13);
    expect(response.output_text).toBe('ok');
  });

  it('refuses what the API would, and messages of another format, naming the field and writing nothing', async () => {
    await createSession(db(), { tenantId, sessionId: 'refusals', format: 'openai-responses', messages: [] });
    await appendMessages(db(), tenantId, 'refusals', [
      { role: 'user', content: 'hi' },
      { type: 'function_call', call_id: 'call_1', name: 'bash', arguments: '{}' },
    ]);
    const before = await counts('refusals');
    const bad: Array<[unknown, RegExp]> = [
      [
        { type: 'function_call', call_id: 'call_2', name: 'bash', arguments: { cmd: 'ls' } },
        /messages\[0\]\.arguments: expected a string/,
      ],
      [
        { type: 'function_call', call_id: 'call_1', name: 'bash', arguments: '{}' },
        /messages\[0\]\.call_id: tool_use id "call_1" is already used in session "refusals"/,
      ],
      [{ type: 'reasoning', id: 'rs_1' }, /messages\[0\]\.summary: expected a list of summary_text parts/],
      [{ type: 'item_reference', id: 'msg_1' }, /messages\[0\]\.type: "item_reference" points at an item/],
      [
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
        /messages\[0\]\.role: "tool" is a Chat Completions role, but session "refusals" has format "openai-responses"/,
      ],
      [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
        /messages\[0\]\.content\[0\]\.type: "tool_result" is an Anthropic Messages API content block, but session "refusals" has format "openai-responses"/,
      ],
    ];
    for (const [item, error] of bad) {
      await expect(appendMessages(db(), tenantId, 'refusals', [item as ResponsesInputItem])).rejects.toThrow(
        error,
      );
    }
    expect(await counts('refusals')).toEqual(before);

    for (const format of ['anthropic', 'openai-chat'] as const) {
      await createSession(db(), { tenantId, sessionId: `other-${format}`, format, messages: [] });
      await expect(
        appendMessages(db(), tenantId, `other-${format}`, [
          { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
        ]),
      ).rejects.toThrow(
        new RegExp(
          `messages\\[0\\]\\.type: "function_call_output" is an OpenAI Responses input item, but session "other-${format}" has format "${format}"`,
        ),
      );
      expect((await counts(`other-${format}`))?.message_count).toBe(0);
    }
    // An Anthropic Message as the Messages API returns it is `type: "message"` too: still Anthropic.
    await appendMessages(db(), tenantId, 'other-anthropic', [
      { role: 'user', content: 'hi' },
      {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'hello' }],
        model: 'claude-haiku-4-5',
      } as never,
    ]);
    expect((await counts('other-anthropic'))?.message_count).toBe(2);
    await expect(loadContext(db(), { tenantId, sessionId: 'refusals' })).rejects.toThrow(
      /format: session "refusals" has format "openai-responses", not "anthropic"/,
    );
  });

  it('is compacted by every strategy, each context accepted by the strict fake, each restored byte-exact', async () => {
    await agentSession('compacted', 5);
    const before = await liveRows('compacted');
    const strategies: Array<[string, Strategy]> = [
      ['slidingWindow:8', parseStrategy('slidingWindow:8')],
      [
        'clearToolResults',
        { type: 'clearToolResults', keep: 1, clearAtLeast: 0, clearToolInputs: true, excludeTools: [] },
      ],
      ['clearThinking:1', parseStrategy('clearThinking:1')],
      ['summarize:8', parseStrategy('summarize:8')],
    ];
    for (const [name, strategy] of strategies) {
      const row = await compact('compacted', strategy);
      expect(row.status, name).toBe('applied');
      const { context: loaded, response } = await send('compacted');
      expect(response.output_text, name).toBe('ok');
      expect(loaded.input[0], name).toEqual(INSTRUCTIONS);
      const input = loaded.input;
      if (name === 'clearToolResults') {
        const outputs = input.filter((i) => i.type === 'function_call_output');
        expect(outputs).toHaveLength(5);
        expect(
          outputs.slice(0, 4).every((o) => String(o.output).startsWith('[tool result cleared: bash, ')),
        ).toBe(true);
        expect(outputs[4]?.output).toBe(bigOutput(4));
        const calls = input.filter((i) => i.type === 'function_call');
        expect(calls.slice(0, 4).map((c) => c.arguments)).toEqual(['{}', '{}', '{}', '{}']);
      }
      if (name === 'clearThinking:1') {
        // Only the newest turn's reasoning is sent; the items it produced before go without their ids.
        const reasoning = input.filter((i) => i.type === 'reasoning');
        expect(reasoning).toHaveLength(1);
        expect(input.filter((i) => i.type === 'function_call' && 'id' in i)).toHaveLength(0);
        const rows = await liveRows('compacted');
        expect(rows.filter((r) => r.has_thinking)).toHaveLength(1);
      }
      if (name === 'summarize:8') {
        expect(input[1]).toMatchObject({
          role: 'user',
          content: expect.stringContaining('<session-record>'),
        });
        expect(String(input[1]?.content)).toContain('npm test -- 0');
      }
      if (name === 'slidingWindow:8') {
        expect(input.length).toBeLessThan(before.length);
        expect(input[1]?.type).not.toBe('function_call_output');
      }
      await restoreCompaction(db(), { tenantId, sessionId: 'compacted', compactionId: row.id });
      expect(await liveRows('compacted'), name).toEqual(before);
    }
    expect(violations(await audit(db(), tenantId, 'compacted'))).toEqual([]);

    // A blob altered by one byte is refused, as the API refuses a blob it cannot verify.
    const loaded = await context('compacted');
    const altered = loaded.input.map((i) =>
      i.type === 'reasoning' ? { ...i, encrypted_content: `${String(i.encrypted_content)}x` } : i,
    ) as OpenAI.Responses.ResponseInput;
    await expect(client.responses.create({ model: MODEL, input: altered, store: false })).rejects.toThrow(
      /could not be verified/,
    );
  });

  it('sends a /responses/compact output on as-is, and nothing the compaction item replaced', async () => {
    await agentSession('server-compacted', 2);
    const loaded = await context('server-compacted');
    const compacted = await client.responses.compact({
      model: MODEL,
      input: loaded.input as OpenAI.Responses.ResponseInput,
    });
    expect(compacted.output.at(-1)?.type).toBe('compaction');
    await appendMessages(db(), tenantId, 'server-compacted', items(compacted.output));
    const { context: after, response } = await send('server-compacted');
    expect(response.output_text).toBe('ok');
    expect(after.input).toEqual(
      [INSTRUCTIONS, ...compacted.output, { role: 'user', content: 'Continue.' }].slice(0, -1),
    );
    expect(after.input.some((i) => i.type === 'function_call')).toBe(false);
  });

  it('is created, appended to and read over the HTTP API, refusing another format with a 400', async () => {
    const created = await call('POST', '/v1/sessions', {
      id: 'http',
      format: 'openai-responses',
      messages: [
        INSTRUCTIONS,
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      ],
    });
    expect(created).toMatchObject({ status: 201, body: { sessionId: 'http', messageCount: 2 } });
    const appended = await call('POST', '/v1/sessions/http/messages', {
      messages: [
        { type: 'function_call', id: 'fc_1', call_id: 'call_h', name: 'bash', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'call_h', output: 'README.md' },
      ],
    });
    expect(appended).toMatchObject({ status: 200, body: { seqs: [2, 3] } });
    const mixed = await call('POST', '/v1/sessions/http/messages', {
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: {} }] },
      ],
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatchObject({
      field: 'messages[0].tool_calls',
      message: expect.stringContaining('has format "openai-responses"'),
    });

    const read = await call('GET', '/v1/sessions/http/context');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ format: 'openai-responses', sessionId: 'http', version: 0 });
    const input = read.body.input as OpenAI.Responses.ResponseInput;
    expect(input).toHaveLength(4);
    const response = await client.responses.create({ model: MODEL, input, store: false });
    expect(response.output_text).toBe('ok');
  });

  it('is imported from a log of stateless Responses requests and from Agents SDK session items', async () => {
    await agentSession('source', 1);
    const stored = (await liveRows('source')).map((r) => JSON.parse(r.content_blocks as string));
    const log = path.join(dir, 'codex-run.jsonl');
    await writeFile(
      log,
      [
        { model: MODEL, input: 'Step 0', store: false },
        { model: MODEL, input: stored.slice(0, 4), store: false },
        { model: MODEL, input: stored, store: false },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const imported = await importTranscript(db(), log, { tenantId });
    expect(imported).toMatchObject({
      sessionId: 'codex-run',
      format: 'openai-responses',
      detected: true,
      messageCount: stored.length,
    });
    expect((await liveRows('codex-run')).map((r) => r.content_blocks)).toEqual(
      (await liveRows('source')).map((r) => r.content_blocks),
    );
    const { context: loaded, response } = await send('codex-run');
    expect(response.output_text).toBe('ok');
    // `compactor context` prints the same body, in the session's format.
    const printed = await runCli(['context', '--tenant', tenantId, '--session', 'codex-run'], ctx.cliEnv);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual({ ...loaded });

    const agentItems = path.join(dir, 'agents-items.json');
    await writeFile(agentItems, JSON.stringify(stored, null, 2));
    const fromSdk = await runCli(
      ['import', agentItems, '--tenant', tenantId, '--format', 'openai-responses', '--session', 'agents'],
      ctx.cliEnv,
    );
    expect(fromSdk.code).toBe(0);
    expect((await counts('agents'))?.message_count).toBe(stored.length);

    const chained = path.join(dir, 'chained.jsonl');
    await writeFile(
      chained,
      [
        { model: MODEL, input: stored.slice(0, 2) },
        { model: MODEL, previous_response_id: 'resp_fake_1', input: stored.slice(2) },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    await expect(importTranscript(db(), chained, { tenantId })).rejects.toThrow(
      /chained\.jsonl:2: previous_response_id: this request sends only the items after response "resp_fake_1"/,
    );
    expect(await counts('chained')).toBeUndefined();
  });

  it('is summarized by the Anthropic summarizer from its plain-text view, and refused by anthropic-compaction', async () => {
    await agentSession('by-claude', 3);
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
    const prompt = JSON.stringify(ctx.fake.requests.at(-1)?.body);
    expect(prompt).toContain('{\\"name\\":\\"bash\\",\\"arguments\\":{\\"cmd\\":\\"npm test -- 0\\"}}');
    expect(prompt).toContain('[reasoning] thought');
    expect(prompt).not.toContain('encrypted_content');
    const { response } = await send('by-claude');
    expect(response.output_text).toBe('ok');

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
    ).rejects.toThrow(/anthropic-compaction summarizer .* session "by-claude" has format "openai-responses"/);
    expect(await liveRows('by-claude')).toEqual(before);
  });
  it('is summarized by openai-compaction: the compaction item of /responses/compact is sent first, and restored away', async () => {
    await agentSession('by-openai', 4);
    const before = await liveRows('by-openai');
    const compaction = createOpenAICompactionSummarizer({ apiKey: 'test', baseURL: fakeUrl, model: MODEL });
    const strategy = {
      ...parseStrategy('summarize:6'),
      summarizer: 'openai-compaction',
      fallback: 'none',
    } as Strategy;
    const outcome = await ctx.compactInProcess(
      { tenantId, sessionId: 'by-openai', strategy },
      { summarizers: { named: { 'openai-compaction': compaction } } },
    );
    expect(outcome.row).toMatchObject({ status: 'applied', summarizer: 'openai-compaction' });
    // Its payback priced the compact call from the items it sends: above what the call then cost.
    const predicted = outcome.row?.paybackInputs as PaybackInputs;
    const sentTokens = (outcome.row?.inputTokens ?? 0) + (outcome.row?.cacheReadTokens ?? 0);
    expect(predicted).toMatchObject({ summaryModel: MODEL, summaryMaxOutputTokens: 4_096 });
    expect(predicted.summaryInputTokens).toBeGreaterThanOrEqual(sentTokens);
    expect(predicted.summaryInputTokens).toBeLessThan(sentTokens + 1_500);
    expect(outcome.row?.costUsd).toBeGreaterThan(0);
    expect(predicted.summaryUsd).toBeGreaterThanOrEqual(outcome.row?.costUsd ?? Infinity);
    // The endpoint got the leaving items as the context renders them: the fake checked its rules.
    const compactRequest = fake.requests.filter((r) => r.path === '/v1/responses/compact').at(-1);
    expect(compactRequest?.body).toMatchObject({
      model: MODEL,
      input: expect.arrayContaining([INSTRUCTIONS]),
    });

    const { context: loaded, response } = await send('by-openai');
    expect(response.output_text).toBe('ok');
    expect(loaded.input[0]).toEqual(INSTRUCTIONS);
    expect(loaded.input[1]).toMatchObject({ type: 'compaction', id: expect.stringMatching(/^cmp_fake_/) });
    expect(
      loaded.input.some(
        (i) => i.type === 'message' && i.role === 'user' && String(i.content).includes('Step 0'),
      ),
    ).toBe(false);
    await restoreCompaction(db(), {
      tenantId,
      sessionId: 'by-openai',
      compactionId: outcome.row?.id as string,
    });
    expect(await liveRows('by-openai')).toEqual(before);

    // Another format's session is refused before anything is sent or written.
    await createSession(db(), {
      tenantId,
      sessionId: 'not-responses',
      messages: Array.from({ length: 12 }, (_, seq) => ({
        seq,
        message: { role: seq % 2 === 0 ? 'user' : 'assistant', content: `message ${seq}` },
      })) as never,
    });
    const sent = fake.requests.length;
    await expect(
      ctx.compactInProcess(
        { tenantId, sessionId: 'not-responses', strategy },
        { summarizers: { named: { 'openai-compaction': compaction } } },
      ),
    ).rejects.toThrow(/openai-compaction summarizer .* session "not-responses" has format "anthropic"/);
    expect(fake.requests.length).toBe(sent);
  });
});
