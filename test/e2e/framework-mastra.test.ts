/**
 * A real Mastra agent (`@mastra/core`'s `Agent`, its model `@ai-sdk/openai`'s Chat Completions
 * model, a file-reading tool, Mastra's own memory on an in-memory store) with compactor's
 * `CompactorProcessor` (producer/frameworks/mastra/) runs run after run on one thread, some with
 * `generate` and some with `stream`, against the strict fake Chat Completions server over real
 * HTTP, with a real worker compacting the session in between. Every request is accepted by the
 * fake (it answers 400 to a call without its answers, an answer without its call, ...), the ledger
 * records at least three applied compactions, the model reads the summary after each, the session
 * stores what the model received byte for byte (live + archived = every message), and Mastra's
 * memory still holds the whole thread. Then the agent, through the recall tools
 * `createMastraCompactor` made (`@mastra/mcp`'s `MCPClient` on the API's `/v1/mcp` with the
 * tenant's key), calls `recall_search` and `recall_read` and reads back exactly what left its context.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMastraCompactor,
  type MastraCompactor,
  type RunCompletedInfo,
} from '../../producer/frameworks/mastra/index.ts';
import { loadContext, searchRecall } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { chatRequestError, FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'mastra-agents';
const thread = 'mastra-thread';
const RUNS = 12;
const INSTRUCTIONS = 'You are a careful coding assistant.';
/** The user's message of run `n`. */
const PROMPT = (n: number) => `Run ${n}: read two files and tell me what they do.`;
/** Words of every summary compactor writes (it names the recall tools). */
const SUMMARY_MARK = 'recall_search and recall_read find and read them';
/** Files the scripted model reads: a few kB of source each, so the session outgrows its trigger. */
const FILES = [
  'shared/contract/blocks.ts',
  'shared/planning/window.ts',
  'shared/context/render.ts',
  'producer/sessions.ts',
  'worker/postgres/effects.ts',
  'shared/policy/policy.ts',
  'worker/postgres/restore.ts',
];
const fake = new FakeOpenAIChatServer();
let api: Listening;
let compactor: MastraCompactor;
let agent: Agent;
let memory: Memory;
const events: RunCompletedInfo[] = [];

/** Reads a text file under the repository (paths outside it are refused). */
const readFileTool = createTool({
  id: 'read_file',
  description: 'Read a text file of the project, by its path relative to the project root.',
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path: file }) => {
    const root = process.cwd();
    const resolved = path.resolve(root, file);
    if (!resolved.startsWith(root + path.sep)) throw new Error(`${file}: outside the project`);
    return readFile(resolved, 'utf8');
  },
});

type SentMessage = { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string };
const sentMessages = (request: unknown) => (request as { messages: SentMessage[] }).messages;

beforeAll(async () => {
  const db = ctx.tdb.database.db;
  const baseURL = await fake.start();
  ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() }, concurrency: 2 });
  api = await startKeyedApi(ctx);
  const key = (await createKey(db, { tenantId, name: 'mastra agents' })).secret;
  compactor = await createMastraCompactor({
    db,
    producer: ctx.producer,
    tenantId,
    recall: { apiUrl: api.url, apiKey: key },
    onRunCompleted: (event) => {
      events.push(event);
    },
  });
  memory = new Memory({ storage: new InMemoryStore(), options: { lastMessages: 20 } });
  agent = new Agent({
    id: 'coder',
    name: 'coder',
    instructions: INSTRUCTIONS,
    model: createOpenAI({ apiKey: 'sk-test', baseURL }).chat('gpt-5.4-mini'),
    tools: { read_file: readFileTool, ...compactor.tools },
    memory,
    inputProcessors: [compactor.processor],
    outputProcessors: [compactor.processor],
  });
});

afterAll(async () => {
  await compactor?.close();
  await fake.close();
});

/** Runs the agent once on the thread (`stream` or `generate`) and waits for the worker's job. */
async function run(
  prompt: string,
  mode: 'generate' | 'stream',
): Promise<{ text: string; event: RunCompletedInfo }> {
  const before = events.length;
  const options = { maxSteps: 10, memory: { thread, resource: 'developer' } };
  let text: string;
  if (mode === 'stream') {
    const output = await agent.stream(prompt, options);
    text = await output.text;
  } else {
    text = (await agent.generate(prompt, options)).text;
  }
  const event = await waitFor(async () => events[before]);
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(jobIdOf(tenantId, event.eventId));
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 30_000);
  expect(state).toBe('completed');
  return { text, event };
}

/** Every message the session lineage stored, by seq, as stored (the original of a rewritten one). */
async function storedMessages(tenant = tenantId): Promise<unknown[]> {
  const rows = await ctx.tdb.database.sql<{ seq: number; content: unknown }[]>`
    select distinct on (seq) seq, content_blocks as content from (
      select seq, content_blocks, 0 as rank from archived_messages
        where tenant_id = ${tenant} and kind <> 'summary' and rewritten
      union all
      select seq, content_blocks, 1 from archived_messages
        where tenant_id = ${tenant} and kind <> 'summary' and not rewritten
      union all
      select seq, content_blocks, 2 from messages where tenant_id = ${tenant} and kind <> 'summary'
    ) originals order by seq, rank`;
  return rows.map((r) => r.content);
}

async function appliedCompactions(): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenantId} and status = 'applied'`;
  return row?.n ?? 0;
}

describe('a Mastra agent with the compactor processor', () => {
  it('runs through several compactions, every request accepted, the session exact and Mastra memory whole', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 1_000 },
      triggers: { maxTokens: 9_000 },
    });
    let continuedAfterCompaction = 0;
    for (let n = 0; n < RUNS; n++) {
      const [a, b] = [FILES[n % FILES.length] as string, FILES[(n + 3) % FILES.length] as string];
      const final = `Run ${n} done: ${a} and ${b} read.`;
      fake.script(
        { content: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: a } }] },
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: b } },
            { name: 'read_file', arguments: { path: '../outside.txt' } },
          ],
        },
        { content: final },
      );
      const before = fake.requests.length;
      const compactedBefore = await appliedCompactions();
      const { text, event } = await run(PROMPT(n), n % 2 ? 'stream' : 'generate');
      expect(text).toContain(final);
      expect(fake.pending).toBe(0);
      const sent = fake.requests.slice(before);
      expect(sent).toHaveLength(3);
      // Every step's request: the instructions (Mastra's), then compactor's context.
      for (const request of sent)
        expect(sentMessages(request)[0]).toEqual({ role: 'developer', content: INSTRUCTIONS });
      if (compactedBefore > 0) {
        // After a compaction the model reads compactor's summary, not the whole thread.
        const first = sentMessages(sent[0]);
        expect(first[1]?.role).toBe('user');
        expect(String(first[1]?.content)).toContain(SUMMARY_MARK);
        expect(first.length).toBeLessThan(2 + 7 * n);
        continuedAfterCompaction++;
      }
      // The session stored this run's messages exactly as the model received them, and the reply.
      const stored = await storedMessages();
      expect(stored).toHaveLength(7 * (n + 1));
      const last = sentMessages(sent.at(-1));
      expect(stored.slice(7 * n, 7 * n + 6)).toEqual(last.slice(-6));
      expect(stored[7 * n]).toEqual({ role: 'user', content: PROMPT(n) });
      expect(stored[7 * n + 6]).toEqual({ role: 'assistant', content: final });
      expect(last.at(-1)).toMatchObject({
        role: 'tool',
        content: expect.stringMatching(/outside the project/),
      });
      // The run's event carried its last request's prompt tokens.
      expect(event.inputTokens).toBeGreaterThan(0);
    }

    expect(await appliedCompactions()).toBeGreaterThanOrEqual(3);
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);
    // Every request the agent sent was valid and answered 200 (a 400 fails the run), and each body
    // passes the fake's checks again here.
    expect(fake.requests).toHaveLength(3 * RUNS);
    expect(fake.requests.map((r) => chatRequestError(sentMessages(r)))).toEqual(
      fake.requests.map(() => null),
    );
    // Nothing lost: every message is live or archived, once.
    const report = await audit(db, tenantId, thread);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(7 * RUNS);
    // Mastra's memory keeps the whole thread: every prompt, every reply, every tool call.
    const remembered = (await memory.recall({ threadId: thread, perPage: false })).messages;
    // The users' messages are the prompts, and only those: no summary was saved as one.
    expect(remembered.filter((m) => m.role === 'user').map((m) => m.content.content)).toEqual(
      Array.from({ length: RUNS }, (_, n) => PROMPT(n)),
    );
    const replies = remembered.filter((m) => m.role === 'assistant');
    const texts = JSON.stringify(replies.map((m) => m.content));
    for (let n = 0; n < RUNS; n++) expect(texts).toContain(`Run ${n} done`);
    const calls = replies.flatMap((m) => m.content.parts.filter((p) => p.type === 'tool-invocation'));
    expect(calls).toHaveLength(3 * RUNS);
  });

  it('recalls over MCP what left its context, and reads it back exactly as the model first received it', async () => {
    const db = ctx.tdb.database.db;
    const file = FILES[0] as string;
    const fileText = await readFile(file, 'utf8');
    // What the model will find: the newest archived call that read the file (the server searches
    // as the library does), which left the context with its answer.
    const { hits } = await searchRecall(db, { tenantId, sessionId: thread, query: file });
    const seq = hits.find((h) => h.kind === 'tool_call')?.seq ?? -1;
    const stored = await storedMessages();
    const call = stored[seq] as { tool_calls: Array<{ id: string; function: { arguments: string } }> };
    expect(call.tool_calls[0]?.function.arguments).toBe(JSON.stringify({ path: file }));
    const context = await loadContext(db, { tenantId, sessionId: thread, format: 'openai-chat' });
    expect(JSON.stringify(context.messages)).not.toContain(`"${call.tool_calls[0]?.id}"`);

    fake.script(
      { toolCalls: [{ name: 'recall_search', arguments: { query: file } }] },
      { toolCalls: [{ name: 'recall_read', arguments: { fromSeq: seq, toSeq: seq + 1 } }] },
      { content: `${file} holds the content blocks.` },
    );
    const before = fake.requests.length;
    const { text } = await run('What did the first file you read hold, again?', 'generate');
    expect(text).toBe(`${file} holds the content blocks.`);
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(3);
    // The model was told of both tools without a session id: the agent fills in its own.
    const tools = (sent[0] as { tools: Array<{ function: { name: string; parameters: unknown } }> }).tools;
    const declared = Object.fromEntries(tools.map((t) => [t.function.name, t.function.parameters]));
    expect(Object.keys(declared).sort()).toEqual(['read_file', 'recall_read', 'recall_search']);
    expect(JSON.stringify([declared.recall_search, declared.recall_read])).not.toContain('sessionId');

    // The search's answer named the call that read the file.
    const searched = sentMessages(sent[1]).at(-1) as SentMessage;
    expect(searched.role).toBe('tool');
    expect(String(searched.content)).toContain(`«${file}»`);
    // The read's answer: the call and its answer as stored, which is as the model received them.
    const read = sentMessages(sent[2]).at(-1) as SentMessage;
    expect(read.role).toBe('tool');
    const body = JSON.parse(String(read.content)) as {
      format?: string;
      messages?: Array<{ seq: number; content: unknown }>;
    };
    expect(body.format).toBe('openai-chat');
    expect(body.messages?.map((m) => m.seq)).toEqual([seq, seq + 1]);
    expect(body.messages?.map((m) => m.content)).toEqual(stored.slice(seq, seq + 2));
    expect(body.messages?.[1]?.content).toMatchObject({ role: 'tool', content: fileText });
    expect(chatRequestError(sentMessages(sent[2]))).toBeNull();
  });
});

describe('a Claude agent with thinking (the anthropic format)', () => {
  it('sends its signed thinking back through compactions, every request accepted by the strict fake Messages API', async () => {
    const db = ctx.tdb.database.db;
    const claudeTenant = 'mastra-claude';
    const claudeThread = 'claude-thread';
    ctx.fake.strict = true;
    await setPolicy(db, claudeTenant, null, {
      strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 1_000 },
      triggers: { maxTokens: 9_000 },
    });
    const done: RunCompletedInfo[] = [];
    const claude = await createMastraCompactor({
      db,
      producer: ctx.producer,
      tenantId: claudeTenant,
      // No Mastra memory here: the session is named, and compactor alone holds the conversation.
      sessionId: claudeThread,
      onRunCompleted: (event) => {
        done.push(event);
      },
    });
    const claudeAgent = new Agent({
      id: 'claude-coder',
      name: 'claude-coder',
      instructions: INSTRUCTIONS,
      model: createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${ctx.llm.url}/v1` })('claude-sonnet-5'),
      tools: { read_file: readFileTool },
      inputProcessors: [claude.processor],
      outputProcessors: [claude.processor],
    });
    const options = {
      maxSteps: 10,
      providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1_024 } } },
    } as const;
    const applied = async () => {
      const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
        select count(*)::int as n from compactions where tenant_id = ${claudeTenant} and status = 'applied'`;
      return row?.n ?? 0;
    };
    const RUNS_CLAUDE = 8;
    let continued = 0;
    for (let n = 0; n < RUNS_CLAUDE; n++) {
      const [a, b] = [FILES[n % FILES.length] as string, FILES[(n + 2) % FILES.length] as string];
      ctx.fake.enqueue(
        {
          reply: {
            thinking: `I should read ${a}.`,
            text: 'Reading.',
            toolUse: [{ name: 'read_file', input: { path: a } }],
          },
        },
        { reply: { thinking: `Now ${b}.`, toolUse: [{ name: 'read_file', input: { path: b } }] } },
        { reply: { thinking: 'Both read.', text: `Run ${n}: ${a} and ${b} read.` } },
      );
      const before = ctx.fake.requests.length;
      const compactedBefore = await applied();
      const result = await claudeAgent.generate(PROMPT(n), options);
      expect(result.text).toContain(`Run ${n}: ${a} and ${b} read.`);
      const event = await waitFor(async () => done[n]);
      const state = await waitFor(async () => {
        const s = await ctx.producer.queue.getJobState(jobIdOf(claudeTenant, event.eventId));
        return s === 'completed' || s === 'failed' ? s : undefined;
      }, 30_000);
      expect(state).toBe('completed');
      const sent = ctx.fake.requests
        .slice(before)
        .map(
          (r) =>
            r.body as { thinking?: { type: string }; messages: Array<{ role: string; content: unknown }> },
        );
      expect(sent).toHaveLength(3);
      for (const request of sent) expect(request.thinking?.type).toBe('enabled');
      if (compactedBefore > 0) {
        expect(JSON.stringify(sent[0]?.messages[0])).toContain(SUMMARY_MARK);
        continued++;
      }
      // The tool loop's last request carries the run's turns as stored, signed thinking included:
      // the prompt, the first call (thinking, text, call), its result, the second call, its result.
      const stored = await storedMessages(claudeTenant);
      expect(stored).toHaveLength(6 * (n + 1));
      const last = sent.at(-1)?.messages ?? [];
      expect(last.slice(-5).map((m) => m.content)).toEqual(stored.slice(6 * n, 6 * n + 5));
      expect(stored[6 * n + 1]).toEqual([
        { type: 'thinking', thinking: `I should read ${a}.`, signature: expect.any(String) },
        { type: 'text', text: 'Reading.' },
        {
          type: 'tool_use',
          id: expect.stringMatching(/^toolu_fake_/),
          name: 'read_file',
          input: { path: a },
        },
      ]);
      expect(stored[6 * n + 5]).toEqual([
        { type: 'thinking', thinking: 'Both read.', signature: expect.any(String) },
        { type: 'text', text: `Run ${n}: ${a} and ${b} read.` },
      ]);
    }
    expect(await applied()).toBeGreaterThanOrEqual(3);
    expect(continued).toBeGreaterThanOrEqual(3);
    // Every request was answered 200 by the strict fake (signatures, tool pairing, turn order).
    expect(ctx.fake.requests.slice(-3 * RUNS_CLAUDE).every((r) => r.path === '/v1/messages')).toBe(true);
    const report = await audit(db, claudeTenant, claudeThread);
    expect(violations(report)).toEqual([]);
    // user, assistant (thinking, text, call), results, assistant (thinking, call), result, reply
    expect(report.liveOriginals + report.archivedOriginals).toBe(6 * RUNS_CLAUDE);
    await claude.close();
  });
});
