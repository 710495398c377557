/**
 * The OpenAI Agents SDK for TypeScript (`@openai/agents` 0.20.0, the real package) keeps its session
 * in compactor through `CompactorSession` (producer/frameworks/openai-agents/): a real `Agent` with a
 * function tool and compactor's `/v1/mcp` as an MCP server (`connectRecall`: the SDK's
 * `MCPServerStreamableHttp`, the tenant's key in its Authorization header, the session id filled in
 * for the model), run by the SDK's `Runner` over its Responses model,
 * whose OpenAI client talks to the strict fake Responses API (test/support/fake-openai-responses.ts)
 * over HTTP. Each run's end enqueues `session.run.completed` through the SDK's `runCompaction` hook,
 * and a real worker compacts in between: through at least three compactions every request is
 * accepted (the fake refuses a call without its output, reasoning without its item or with a blob it
 * did not sign…), ledger rows are written, and nothing is lost (live + archived = every item the SDK
 * handed over). Then the model, scripted, calls `recall_search` and `recall_read` over MCP and gets
 * back what left the context, byte for byte. Also: `runCompaction({ force: true })`, what `popItem`,
 * `getItems(limit)` and `clearSession` mean on a compacted history, and the example agent
 * (examples/openai-agents-agent.ts) started as a user starts it.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  Agent,
  type AgentInputItem,
  MCPServerStreamableHttp,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
  tool,
} from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type CompactorRecallServer,
  CompactorSession,
  connectRecall,
} from '../../producer/frameworks/openai-agents/index.ts';
import { loadContext } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { ResponsesItem } from '../../shared/formats/openai-responses/item.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { FakeOpenAIResponsesServer, responsesInputError } from '../support/fake-openai-responses.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration();
const tenantId = 'agents-sdk';
/** A tenant without a policy of its own (the default's triggers leave small sessions alone). */
const ownTenant = 'agents-sdk-own';
const MODEL = 'gpt-5.4-mini';
/** Files the scripted model reads: a few kB of source each, so the session outgrows its trigger. */
const FILES = [
  'shared/planning/window.ts',
  'shared/contract/blocks.ts',
  'shared/policy/payback.ts',
  'shared/policy/policy.ts',
  'shared/extractive/files.ts',
  'shared/summary/checkpoint.ts',
  'shared/summary/guard.ts',
  'shared/extractive/index.ts',
];
const RUNS = FILES.length;

const execFileAsync = promisify(execFile);
const fake = new FakeOpenAIResponsesServer();
let runner: Runner;
let baseURL = '';
let api: Listening;
let apiKey = '';
let ownKey = '';
let recall: CompactorRecallServer | undefined;

beforeAll(async () => {
  setTracingDisabled(true);
  baseURL = await fake.start();
  const client = new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 });
  runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }) });
  api = await startKeyedApi(ctx);
  apiKey = (await createKey(ctx.tdb.database.db, { tenantId, name: 'agents sdk' })).secret;
  ownKey = (await createKey(ctx.tdb.database.db, { tenantId: ownTenant, name: 'example' })).secret;
});

afterAll(async () => {
  await recall?.close();
  await fake.close();
});

/** The function tool: reads a file of the repository. */
const readFileTool = tool({
  name: 'read_file',
  description: 'Read a file of the repository.',
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => readFile(path, 'utf8'),
});

/** The session over the file's database and producer. */
function sessionFor(sessionId: string, tenant = tenantId): CompactorSession {
  return new CompactorSession({
    db: ctx.tdb.database.db,
    producer: ctx.producer,
    tenantId: tenant,
    sessionId,
  });
}

/** The agent: a function tool, and the MCP servers given. */
function agentFor(mcpServers: MCPServerStreamableHttp[] = []): Agent {
  return new Agent({
    name: 'coder',
    model: MODEL,
    instructions: 'You are a careful coding assistant.',
    tools: [readFileTool],
    mcpServers,
    modelSettings: { store: false, providerData: { include: ['reasoning.encrypted_content'] } },
  });
}

/** Waits until the worker has finished the job of the event the last run's end enqueued. */
async function settled(session: CompactorSession): Promise<void> {
  const event = session.lastRunCompleted;
  if (!event) throw new Error('the run enqueued no session.run.completed');
  const jobId = jobIdOf(tenantId, event.eventId);
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(jobId);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 30_000);
  expect(state).toBe('completed');
  // The event carried the size of the run's last request, as the fake reported it.
  const last = fake.requests.at(-1)?.body as { input: unknown };
  expect((await ctx.producer.queue.getJob(jobId))?.data).toMatchObject({
    sessionId: event.sessionId,
    inputTokens: Math.ceil(JSON.stringify(last.input).length / 4),
    cacheReadTokens: 0,
  });
}

async function appliedCompactions(sessionId: string, tenant = tenantId): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions
    where tenant_id = ${tenant} and session_id = ${sessionId} and status = 'applied'`;
  return row?.n ?? 0;
}

/** The session's ledger rows (one per event: applied or skipped). */
async function ledgerRows(sessionId: string): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenantId} and session_id = ${sessionId}`;
  return row?.n ?? 0;
}

/** A tool output's text as the SDK sent it: a string, or its text parts. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  return (output as Array<{ type: string; text?: string }>)
    .flatMap((p) => (p.type === 'input_text' ? [p.text ?? ''] : []))
    .join('');
}

/** The `input` of a request the fake received. */
function inputOf(request: { body: unknown } | undefined): Array<Record<string, unknown>> {
  const input = (request?.body as { input?: unknown } | undefined)?.input;
  if (!Array.isArray(input)) throw new Error('the fake received no request with an input list');
  return input as Array<Record<string, unknown>>;
}

describe('an OpenAI Agents SDK agent on a CompactorSession', () => {
  const sessionId = 'agents-sdk-coder';
  /** What the session held of run 0 before any compaction: seqs 0-5 as stored. */
  let firstRun: ResponsesItem[] = [];
  let session: CompactorSession;

  it('runs through at least three compactions in between runs, every request accepted, nothing lost', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 1_000 },
      triggers: { maxTokens: 6_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    session = sessionFor(sessionId);
    // The SDK's own MCP client for streamable HTTP, the tenant's key in its Authorization header.
    recall = await connectRecall({ session, apiUrl: api.url, apiKey });
    expect(recall).toBeInstanceOf(MCPServerStreamableHttp);
    // The model sees the tools without the session id, which the server fills in.
    const tools = await recall.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['recall_read', 'recall_search']);
    for (const t of tools) {
      expect(Object.keys(t.inputSchema.properties)).not.toContain('sessionId');
      expect(t.inputSchema.required).not.toContain('sessionId');
    }
    const agent = agentFor([recall]);

    let appended = 0;
    let continuedAfterCompaction = 0;
    for (let run = 0; run < RUNS; run++) {
      const file = FILES[run % FILES.length] as string;
      fake.script.push({ name: 'read_file', arguments: JSON.stringify({ path: file }) });
      const before = fake.requests.length;
      const compactedBefore = await appliedCompactions(sessionId);
      const result = await runner.run(agent, `Run ${run}: read ${file} and tell me what it does.`, {
        session,
      });
      expect(result.finalOutput).toBe('ok');
      const sent = fake.requests.slice(before);
      // Two requests a run: the call, then the answer; the SDK sends the history it read first.
      expect(sent).toHaveLength(2);
      expect(fake.script).toHaveLength(0);
      appended += 6; // prompt, reasoning, call, output, reasoning, message
      expect(inputOf(sent[1]).at(-1)).toMatchObject({
        type: 'function_call_output',
        output: await readFile(file, 'utf8'),
      });
      if (run === 0)
        firstRun = (await loadContext(db, { tenantId, sessionId, format: 'openai-responses' })).input;
      if (compactedBefore > 0) {
        // The run went on from a compacted history: compactor's summary, as a user message, first.
        const first = inputOf(sent[0]);
        expect(first[0]).toMatchObject({ role: 'user' });
        expect(String(first[0]?.content)).toMatch(/compactor/i);
        continuedAfterCompaction++;
      }
      await settled(session);
      // A ledger row for the run's event (applied or skipped), and nothing lost.
      expect(await ledgerRows(sessionId)).toBe(run + 1);
      const report = await audit(db, tenantId, sessionId);
      expect(violations(report)).toEqual([]);
      expect(report.liveOriginals + report.archivedOriginals).toBe(appended);
    }

    expect(await appliedCompactions(sessionId)).toBeGreaterThanOrEqual(3);
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);
    // Every request was answered 200 (the runner throws on a 400: no retries) and passes the
    // fake's checks again here.
    expect(fake.requests.map((r) => responsesInputError(inputOf(r), fake.state, false))).toEqual(
      fake.requests.map(() => null),
    );
    // The run's first items, as stored: exactly the Responses items the SDK sent for them.
    expect(firstRun.map((i) => i.type ?? 'message')).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
      'reasoning',
      'message',
    ]);
    // The SDK's runner hands a session its function calls without their ids (it replays calls so),
    // which is all that tells them from what its first run sent from memory.
    const { id: _id, ...call } = inputOf(fake.requests[1])[2] as Record<string, unknown>;
    expect(inputOf(fake.requests[1]).with(2, call)).toEqual(firstRun.slice(0, 4).map(withoutMessageType));
  });

  it('recalls over MCP, through the SDK, what left the context, byte for byte', async () => {
    const db = ctx.tdb.database.db;
    const file = FILES[0] as string;
    const fileText = await readFile(file, 'utf8');
    // Run 0's file left the context.
    const live = JSON.stringify(
      (await loadContext(db, { tenantId, sessionId, format: 'openai-responses' })).input,
    );
    expect(live).not.toContain(JSON.stringify(fileText).slice(1, 300));
    let hits: Array<{ seq: number; kind: string }> = [];
    fake.script.push({ name: 'recall_search', arguments: JSON.stringify({ query: file }) });
    // The scripted model reads the search's answer, then reads back the call it found and its output.
    fake.script.push((request) => {
      const answer = (request.input as Array<Record<string, unknown>>).at(-1);
      hits = JSON.parse(outputText(answer?.output)).hits;
      const seq = hits.find((h) => h.kind === 'tool_call')?.seq ?? -1;
      return { name: 'recall_read', arguments: JSON.stringify({ fromSeq: seq, toSeq: seq + 1 }) };
    });
    const before = fake.requests.length;
    const agent = agentFor(recall ? [recall] : []);
    const result = await runner.run(agent, `What did ${file} do, again?`, { session });
    expect(result.finalOutput).toBe('ok');
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(3);
    // The model was offered the recall tools without a session id: the server filled it in.
    type Offered = { tools?: Array<{ name: string; parameters: { properties: object } }> };
    const offered = (sent[0]?.body as Offered | undefined)?.tools ?? [];
    const search = offered.find((t) => t.name === 'recall_search');
    expect(search?.parameters.properties).toHaveProperty('query');
    expect(search?.parameters.properties).not.toHaveProperty('sessionId');
    expect(hits.map((h) => h.seq)).toContain(2);
    // The read's output, as the model received it: seqs 2 and 3 as stored, the file's text in it.
    const answer = inputOf(sent[2]).at(-1) as { type: string; output: unknown };
    expect(answer.type).toBe('function_call_output');
    const read = JSON.parse(outputText(answer.output)) as {
      format: string;
      messages: Array<{ seq: number; content: unknown }>;
    };
    expect(read.format).toBe('openai-responses');
    expect(read.messages.map((m) => m.seq)).toEqual([2, 3]);
    expect(JSON.stringify(read.messages.map((m) => m.content))).toBe(JSON.stringify(firstRun.slice(2, 4)));
    expect((read.messages[1]?.content as { output?: string } | undefined)?.output).toBe(fileText);
    expect(responsesInputError(inputOf(sent[2]), fake.state, false)).toBeNull();
    await settled(session);
    expect(violations(await audit(db, tenantId, sessionId))).toEqual([]);
  });
});

describe("CompactorSession's own methods on a compacted history", () => {
  it('runCompaction({ force: true }) compacts now, whatever the triggers, and waits for the worker', async () => {
    const db = ctx.tdb.database.db;
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    const sessionId = 'agents-sdk-forced';
    const session = new CompactorSession({
      db,
      producer: ctx.producer,
      tenantId: ownTenant,
      sessionId,
      compactNow: { strategy: { type: 'slidingWindow', maxMessages: 6 }, timeoutMs: 30_000 },
    });
    const agent = agentFor();
    for (const file of FILES.slice(0, 2)) {
      fake.script.push({ name: 'read_file', arguments: JSON.stringify({ path: file }) });
      await runner.run(agent, `Read ${file}.`, { session });
    }
    expect(await appliedCompactions(sessionId, ownTenant)).toBe(0);
    // The SDK's own entry point, as a user calls it (not the runner).
    expect(await session.runCompaction({ force: true })).toBeNull();
    expect(session.lastCompaction, JSON.stringify(session.lastCompaction)).toMatchObject({
      state: 'settled',
      compaction: { status: 'applied' },
    });
    expect(await appliedCompactions(sessionId, ownTenant)).toBe(1);
    const items = await session.getItems();
    expect(items).toHaveLength(6); // the window: the second run's six items
    expect(items[0]).toMatchObject({ type: 'message', role: 'user', content: `Read ${FILES[1]}.` });
    expect(violations(await audit(db, ownTenant, sessionId))).toEqual([]);
  });

  it('getItems(limit) gives the newest items of the context; popItem takes the newest live item, never the summary', async () => {
    const db = ctx.tdb.database.db;
    const sessionId = 'agents-sdk-pop';
    const session = sessionFor(sessionId, ownTenant);
    const agent = agentFor();
    for (const file of FILES.slice(0, 2)) {
      fake.script.push({ name: 'read_file', arguments: JSON.stringify({ path: file }) });
      await runner.run(agent, `Read ${file}.`, { session });
    }
    const all = await session.getItems();
    expect(all).toHaveLength(12);
    expect(await session.getItems(3)).toEqual(all.slice(-3));
    expect(await session.getItems(0)).toEqual([]);
    await expect(session.getItems(1.5)).rejects.toThrow(/limit: expected a whole number/);

    // popItem: the newest item, as the SDK holds it, gone from the context and the counters.
    expect(await session.popItem()).toEqual(all.at(-1));
    // The reasoning that produced it is left without its item: the context leaves it out (the API
    // refuses a reasoning item so), and it is the next item popped.
    expect(await session.getItems()).toEqual(all.slice(0, -2));
    expect(await session.popItem()).toEqual(all.at(-2));
    // A tool result comes back with its call's name, and goes back in as it came out.
    const result = await session.popItem();
    expect(result).toEqual(all.at(-3));
    expect(result).toMatchObject({ type: 'function_call_result', name: 'read_file' });
    await session.addItems([result as AgentInputItem]);
    expect(await session.getItems()).toEqual(all.slice(0, -2));
    expect(violations(await audit(db, ownTenant, sessionId))).toEqual([]);

    // Compacted down to a summary alone, the newest live item is compactor's: popItem leaves it.
    const outcome = await ctx.compactInProcess({
      tenantId: ownTenant,
      sessionId,
      strategy: { type: 'summarize', keepRecent: 0, maxSummaryTokens: 500 },
    });
    expect(outcome.row?.status).toBe('applied');
    const compacted = await session.getItems();
    expect(compacted).toHaveLength(1);
    expect(compacted[0]).toMatchObject({ type: 'message', role: 'user' });
    expect(await session.getItems(5)).toEqual(compacted);
    expect(await session.popItem()).toBeUndefined();
    expect(await session.getItems()).toEqual(compacted);
    const report = await audit(db, ownTenant, sessionId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(12 - 2);
  });

  it("takes OpenAI's own compaction item (replaceHistoryWithCompaction) and sends what follows it", async () => {
    const sessionId = 'agents-sdk-server-compaction';
    const session = sessionFor(sessionId, ownTenant);
    const agent = agentFor();
    fake.script.push({ name: 'read_file', arguments: JSON.stringify({ path: FILES[0] }) });
    await runner.run(agent, 'Read the window planner.', { session });
    // What the runner does when a model's output starts with a compaction item (server-side
    // compaction): the item, then what came after it. The blob is the fake's own, as the API's is.
    const compaction = {
      type: 'compaction',
      id: 'cmp_server_1',
      encrypted_content: fake.state.sign('compaction', 'cmp_server_1'),
    } as AgentInputItem;
    await session.replaceHistoryWithCompaction([compaction]);
    const items = await session.getItems();
    // Nothing before the newest compaction item is sent but the user messages directly before it.
    expect(items.at(-1)).toMatchObject({ type: 'compaction', id: 'cmp_server_1' });
    const before = fake.requests.length;
    await runner.run(agent, 'Go on.', { session });
    const first = inputOf(fake.requests[before]);
    expect(first.at(-2)).toEqual({
      type: 'compaction',
      id: 'cmp_server_1',
      encrypted_content: fake.state.sign('compaction', 'cmp_server_1'),
    });
    expect(first.at(-1)).toEqual({ role: 'user', content: 'Go on.' });
    // Stored whole, with everything before it: nothing lost.
    const report = await audit(ctx.tdb.database.db, ownTenant, sessionId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals).toBe(6 + 1 + 3); // run 1, the compaction item, run 2 (prompt, reasoning, answer)
  });

  it('clearSession starts over in a new compactor session and keeps the old one whole', async () => {
    const db = ctx.tdb.database.db;
    const session = sessionFor('agents-sdk-clear');
    await session.addItems([{ type: 'message', role: 'user', content: 'Remember the number 7.' }]);
    await session.clearSession();
    const cleared = await session.getSessionId();
    expect(cleared).toMatch(/^agents-sdk-clear~[0-9a-f-]{36}$/);
    expect(await session.getItems()).toEqual([]);
    const old = await loadContext(db, {
      tenantId,
      sessionId: 'agents-sdk-clear',
      format: 'openai-responses',
    });
    expect(old.input).toEqual([{ type: 'message', role: 'user', content: 'Remember the number 7.' }]);
  });

  it('refuses an item it cannot store whole, writing nothing', async () => {
    const session = sessionFor('agents-sdk-refused');
    await expect(
      session.addItems([
        { type: 'message', role: 'user', content: 'Search the web.' },
        { type: 'hosted_tool_call', name: 'web_search_call', id: 'ws_1', status: 'completed' },
      ]),
    ).rejects.toThrow(/^items\[1\]\.type: the compactor session stores/);
    expect(await session.getItems()).toEqual([]);
  });
});

describe('the strict fake Responses API', () => {
  it('answers a scripted turn made from the request it answers, still refusing an invalid one', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 });
    let seen: unknown;
    fake.script.push((request) => {
      seen = request.input;
      return { name: 'echo', arguments: JSON.stringify({ n: (request.input as unknown[]).length }) };
    });
    const response = await client.responses.create({
      model: MODEL,
      input: [{ role: 'user', content: 'hi' }],
      store: false,
    });
    expect(seen).toEqual([{ role: 'user', content: 'hi' }]);
    expect(response.output.at(-1)).toMatchObject({
      type: 'function_call',
      name: 'echo',
      arguments: '{"n":1}',
    });
    fake.script.push(() => ({ name: 'never', arguments: '{}' }));
    await expect(
      client.responses.create({
        model: MODEL,
        input: [{ type: 'function_call_output', call_id: 'call_x', output: 'orphan' }],
        store: false,
      }),
    ).rejects.toThrow(/No tool call found for function call output with call_id call_x/);
    expect(fake.script).toHaveLength(1); // a refused request takes no scripted turn
    fake.script.length = 0;
  });
});

/** A stored item as the SDK sends it: a user message without the `type` the session keeps. */
function withoutMessageType(item: ResponsesItem): ResponsesItem {
  if (item.type !== 'message' || item.role !== 'user') return item;
  const { type: _type, ...rest } = item;
  return rest;
}

describe('the example agent (examples/openai-agents-agent.ts)', () => {
  it('runs as a user starts it: a run on its CompactorSession, recall over MCP, an event enqueued', async () => {
    fake.script.push({ name: 'read_file', arguments: JSON.stringify({ path: 'README.md' }) });
    const sessionId = 'agents-sdk-example';
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    const { stdout } = await execFileAsync(
      path.join(process.cwd(), 'node_modules/.bin/tsx'),
      ['examples/openai-agents-agent.ts', 'Read README.md and say what this project does.'],
      {
        env: {
          ...process.env,
          ...ctx.cliEnv,
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: baseURL,
          COMPACTOR_API_URL: api.url,
          COMPACTOR_API_KEY: ownKey,
          COMPACTOR_TENANT: ownTenant,
          COMPACTOR_SESSION: sessionId,
          // No trace leaves this machine (the SDK would send them to OpenAI at exit).
          OPENAI_AGENTS_DISABLE_TRACING: '1',
        },
        timeout: 120_000,
      },
    );
    const printed = JSON.parse(stdout) as { sessionId: string; output: string; eventId: string };
    expect(printed).toMatchObject({ sessionId, output: 'ok', eventId: expect.any(String) });
    const state = await waitFor(async () => {
      const s = await ctx.producer.queue.getJobState(jobIdOf(ownTenant, printed.eventId));
      return s === 'completed' || s === 'failed' ? s : undefined;
    }, 30_000);
    expect(state).toBe('completed');
    const items = await sessionFor(sessionId, ownTenant).getItems();
    expect(items.map((i) => i.type)).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_result',
      'reasoning',
      'message',
    ]);
    expect(items[3]).toMatchObject({ output: { type: 'text', text: await readFile('README.md', 'utf8') } });
    // The recall tools were offered to the model.
    const offered = JSON.stringify((fake.requests.at(-1)?.body as { tools?: unknown } | undefined)?.tools);
    expect(offered).toContain('recall_search');
  });
});
