/**
 * LangChain.js agents on compactor, end to end: a real `createAgent` of `langchain` v1 with
 * compactor's middleware (producer/frameworks/langchain/), a file-reading tool, a checkpointer
 * holding the graph's own state, and a real worker compacting the session between the runs of one
 * thread.
 *
 * - On `ChatOpenAI` (`openai-chat` sessions), against the strict fake Chat Completions server over
 *   HTTP: every request is accepted (a tool call without its answer, an answer without its call,
 *   `tool_calls: []` would be a 400, and `ChatOpenAI` would throw), after each compaction the model
 *   sees compactor's summary instead of the history while the graph's state still holds every
 *   message, the ledger has the compactions, nothing is lost (live + archived = every message of the
 *   state, once), and the agent finds and reads back over MCP (`@langchain/mcp-adapters`, the
 *   tenant's API key, `/v1/mcp`) a file that left its context.
 * - On `ChatAnthropic` with thinking (`anthropic` sessions), against the strict fake Messages API,
 *   which signs each thinking block over the conversation before it and refuses one sent back
 *   changed or over another history: every request is accepted through the compactions, so the
 *   blocks went back byte for byte where the API takes them.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseMessage } from '@langchain/core/messages';
import { RemoveMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, createMiddleware, HumanMessage, ToolMessage, tool } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compactorMiddleware } from '../../producer/frameworks/langchain/index.ts';
import type { Producer, RunCompletedInput } from '../../producer/index.ts';
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
const ROOT = process.cwd();
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
/** The file only the first run reads: it has left the context when the agent recalls it. */
const RECALLED = 'shared/summary/checkpoint.ts';
const chat = new FakeOpenAIChatServer();
let chatURL = '';
let api: Listening;
const mcpClients: MultiServerMCPClient[] = [];

beforeAll(async () => {
  chatURL = await chat.start();
  api = await startKeyedApi(ctx);
  ctx.fake.strict = true;
});

afterAll(async () => {
  for (const client of mcpClients) await client.close();
  await chat.close();
});

/** A tool reading a text file of this repository (a path outside it is an error the model sees). */
const readFileTool = tool(
  async ({ path: file }: { path: string }) => {
    const resolved = path.resolve(ROOT, file);
    if (!resolved.startsWith(ROOT + path.sep)) throw new Error(`${file}: outside the project`);
    return readFile(resolved, 'utf8');
  },
  {
    name: 'read_file',
    description: 'Read a text file of the project, by its path relative to the project root.',
    schema: z.object({ path: z.string() }),
  },
);

/** The producer, recording each `session.run.completed` the middleware enqueues. */
function recordingProducer(): { producer: Pick<Producer, 'runCompleted'>; events: RunCompletedInput[] } {
  const events: RunCompletedInput[] = [];
  return {
    events,
    producer: {
      runCompleted: (event) => {
        events.push(event);
        return ctx.producer.runCompleted(event);
      },
    },
  };
}

/** Waits until the worker is done with the event, and says it completed. */
async function settled(tenantId: string, event: RunCompletedInput | undefined): Promise<void> {
  if (!event) throw new Error('the run enqueued no session.run.completed');
  const id = jobIdOf(tenantId, event.eventId);
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(id);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 30_000);
  expect(state).toBe('completed');
}

/** The tenant's applied compactions, as the ledger records them. */
async function ledger(tenantId: string) {
  return ctx.tdb.database.sql<
    { event_id: string | null; messages_before: number; messages_after: number; summary_seq: number | null }[]
  >`
    select event_id, messages_before, messages_after, summary_seq from compactions
    where tenant_id = ${tenantId} and status = 'applied' order by created_at`;
}

async function appliedCompactions(tenantId: string): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenantId} and status = 'applied'`;
  return row?.n ?? 0;
}

type SentMessage = { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string };
const sentMessages = (request: unknown) =>
  ((request as { messages?: SentMessage[] }).messages ?? []) as SentMessage[];

describe('a LangChain agent on ChatOpenAI with the compactor middleware', () => {
  const tenantId = 'langchain-agents';
  const threadId = 'langchain-thread';
  const RUNS = 12;

  it('runs one thread through several compactions, every request accepted, the graph state whole, and recalls over MCP', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 1_000 },
      triggers: { maxTokens: 9_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() }, concurrency: 2 });
    const key = (await createKey(db, { tenantId, name: 'langchain agent' })).secret;

    // compactor's recall tools, through LangChain's own MCP client, with the tenant's key.
    const mcp = new MultiServerMCPClient({
      compactor: {
        transport: 'http',
        url: new URL('/v1/mcp', api.url).href,
        headers: { authorization: `Bearer ${key}` },
      },
    });
    mcpClients.push(mcp);
    const recall = await mcp.getTools();
    expect(recall.map((t) => t.name).sort()).toEqual(['recall_read', 'recall_search']);

    // The scripted model's turn after a search depends on what the search found: a test
    // middleware, on LangChain's own tool hook, scripts the read of the first call it found.
    let found: Array<{ seq: number; kind: string }> = [];
    const scriptRead = createMiddleware({
      name: 'script-recall-read',
      wrapToolCall: async (request, handler) => {
        // With a wrapToolCall hook, LangChain leaves a tool's error to it: answer the model with it,
        // as the tool node does without one.
        const answer = await Promise.resolve(handler(request)).catch(
          (error: unknown) =>
            new ToolMessage({
              content: `${error}\n Please fix your mistakes.`,
              tool_call_id: request.toolCall.id ?? '',
              status: 'error',
            }),
        );
        if (request.toolCall.name === 'recall_search' && ToolMessage.isInstance(answer)) {
          found = JSON.parse(String(answer.content)).hits;
          const seq = found.find((h) => h.kind === 'tool_call')?.seq ?? -1;
          chat.script(
            { toolCalls: [{ name: 'recall_read', arguments: { fromSeq: seq, toSeq: seq + 1 } }] },
            { content: `${RECALLED} defines the checkpoint.` },
          );
        }
        return answer;
      },
    });

    const { producer, events } = recordingProducer();
    const agent = createAgent({
      model: new ChatOpenAI({
        model: 'gpt-5.4-mini',
        apiKey: 'sk-test',
        configuration: { baseURL: chatURL },
        maxRetries: 0,
      }),
      tools: [readFileTool],
      systemPrompt: 'You are a careful coding assistant.',
      checkpointer: new MemorySaver(),
      middleware: [compactorMiddleware({ db, producer, tenantId, recall }), scriptRead],
    });
    const config = { configurable: { thread_id: threadId } };

    let held = 0; // messages of the graph's state
    let continuedAfterCompaction = 0;
    const compactionsAfter: number[] = [];
    const firstRunRequests: unknown[] = [];
    for (let run = 0; run < RUNS; run++) {
      const a = run === 0 ? RECALLED : (FILES[run % FILES.length] as string);
      const b = FILES[(run + 3) % FILES.length] as string;
      chat.script(
        { content: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: a } }] },
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: b } },
            { name: 'read_file', arguments: { path: '../outside.txt' } },
          ],
        },
        { content: `Run ${run} done: ${a} and ${b} read.` },
      );
      const before = chat.requests.length;
      const compactedBefore = await appliedCompactions(tenantId);
      const result = await agent.invoke(
        { messages: [new HumanMessage(`Run ${run}: read two files and tell me what they do.`)] },
        config,
      );
      held += 7; // prompt, call, answer, two calls, two answers, reply
      expect(chat.pending).toBe(0);
      const sent = chat.requests.slice(before);
      if (run === 0) firstRunRequests.push(...sent);
      expect(sent).toHaveLength(3);
      // Each was accepted (ChatOpenAI throws on a 400) and passes the fake's checks again here.
      expect(sent.map((r) => chatRequestError(sentMessages(r)))).toEqual([null, null, null]);
      // The graph's state holds every message of every run, the last the model's reply.
      expect(result.messages).toHaveLength(held);
      expect(result.messages.at(-1)?.content).toBe(`Run ${run} done: ${a} and ${b} read.`);
      // The run's last request ends with its own tool answers, as the agent made them.
      expect(sentMessages(sent.at(-1)).at(-1)).toMatchObject({
        role: 'tool',
        content: expect.stringMatching(/outside the project/),
      });
      if (compactedBefore > 0) {
        // The model went on from compactor's context: the system prompt, then the summary as a
        // user message, and far fewer messages than the graph holds.
        const first = sentMessages(sent[0]);
        expect(first[0]).toMatchObject({ role: 'developer' });
        expect(first[1]?.role).toBe('user');
        expect(String(first[1]?.content)).toMatch(/compactor/i);
        expect(first.length).toBeLessThan(held - 6);
        continuedAfterCompaction++;
      }
      await settled(tenantId, events.at(-1));
      compactionsAfter.push(await appliedCompactions(tenantId));
    }

    // At least three compactions, each a ledger row of a run's event that summarized messages
    // away, and the agent went on after them.
    expect(compactionsAfter.at(-1)).toBeGreaterThanOrEqual(3);
    const rows = await ledger(tenantId);
    expect(rows).toHaveLength(compactionsAfter.at(-1) as number);
    const eventIds = new Set(events.map((e) => e.eventId));
    for (const row of rows) {
      expect(eventIds.has(String(row.event_id))).toBe(true);
      expect(row.messages_after).toBeLessThan(row.messages_before);
      expect(row.summary_seq).not.toBeNull();
    }
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);
    expect(events).toHaveLength(RUNS);
    expect(events.every((e) => typeof e.inputTokens === 'number' && e.sessionId === threadId)).toBe(true);
    // Nothing lost: every message of the graph's state is in the session once, live or archived.
    const report = await audit(db, tenantId, threadId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(held);
    // The graph's own (checkpointed) state is whole: every message, in order, none compacted.
    const state = await agent.getState(config);
    const messages = (state as { values: { messages: BaseMessage[] } }).values.messages;
    expect(messages).toHaveLength(held);
    expect(messages[0]?.content).toBe('Run 0: read two files and tell me what they do.');
    expect(messages[2]?.content).toBe(await readFile(RECALLED, 'utf8'));
    expect(new Set(messages.map((m) => m.id)).size).toBe(held);

    // Recall: the first file read left the context; the model searches for it over MCP and reads
    // back the call and its answer exactly as stored.
    const fileText = await readFile(RECALLED, 'utf8');
    chat.script({ toolCalls: [{ name: 'recall_search', arguments: { query: RECALLED } }] });
    const before = chat.requests.length;
    const result = await agent.invoke(
      { messages: [new HumanMessage(`What did ${RECALLED} do, again?`)] },
      config,
    );
    const sent = chat.requests.slice(before);
    expect(sent).toHaveLength(3);
    expect(sent.map((r) => chatRequestError(sentMessages(r)))).toEqual([null, null, null]);
    expect(result.messages.at(-1)?.content).toBe(`${RECALLED} defines the checkpoint.`);
    // It had left: the first request of this run does not hold the file's text.
    expect(JSON.stringify(sentMessages(sent[0]))).not.toContain(JSON.stringify(fileText).slice(1, 200));
    // The model saw the recall tools without a session argument: the middleware fills it in.
    const declared = JSON.stringify((sent[0] as { tools?: unknown }).tools);
    expect(declared).toContain('recall_search');
    expect(declared).not.toContain('sessionId');
    expect(found.map((h) => h.seq)).toContain(1);
    const read = sentMessages(sent.at(-1)).at(-1) as SentMessage;
    expect(read.role).toBe('tool');
    const body = JSON.parse(String(read.content)) as {
      format: string;
      messages: Array<{ seq: number; content: SentMessage }>;
    };
    expect(body.format).toBe('openai-chat');
    expect(body.messages.map((m) => m.seq)).toEqual([1, 2]);
    // What run 0 sent of that call and its answer (seqs 1 and 2), exactly as the agent stored it.
    const run0 = sentMessages(firstRunRequests[1]);
    expect(body.messages[0]?.content).toEqual(run0[2]);
    expect(body.messages[1]?.content).toEqual({
      role: 'tool',
      tool_call_id: run0[3]?.tool_call_id,
      content: fileText,
    });
    await settled(tenantId, events.at(-1));
    const after = await audit(db, tenantId, threadId);
    expect(violations(after)).toEqual([]);
    expect(after.liveOriginals + after.archivedOriginals).toBe(held + 6); // prompt, search, hits, read, messages, reply
  });
});

/** The `messages` of a Messages API request body. */
const turnsOf = (body: unknown) =>
  (body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];

describe('a LangChain agent on ChatAnthropic with thinking and the compactor middleware', () => {
  const tenantId = 'langchain-claude';
  const threadId = 'claude-thread';
  const RUNS = 8;

  it('sends thinking back byte for byte through compactions, every request accepted by the strict fake', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 600 },
      triggers: { maxTokens: 4_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    const { producer, events } = recordingProducer();
    const agent = createAgent({
      model: new ChatAnthropic({
        model: 'claude-sonnet-5',
        apiKey: 'test',
        anthropicApiUrl: ctx.llm.url,
        maxRetries: 0,
        maxTokens: 4_096,
        thinking: { type: 'adaptive' },
      }),
      tools: [readFileTool],
      systemPrompt: 'You are a careful coding assistant.',
      checkpointer: new MemorySaver(),
      middleware: [compactorMiddleware({ db, producer, tenantId })],
    });
    const config = { configurable: { thread_id: threadId } };
    let held = 0;
    let continuedAfterCompaction = 0;
    for (let run = 0; run < RUNS; run++) {
      const file = FILES[run % FILES.length] as string;
      ctx.fake.enqueue(
        {
          reply: {
            thinking: `Run ${run}: I should read ${file}.`,
            text: 'Reading.',
            toolUse: [{ name: 'read_file', input: { path: file } }],
          },
        },
        { reply: { thinking: `Run ${run}: it is read.`, text: `Run ${run} done: ${file} read.` } },
      );
      const before = ctx.fake.requests.length;
      const compactedBefore = await appliedCompactions(tenantId);
      const result = await agent.invoke(
        { messages: [new HumanMessage(`Run ${run}: read ${file}.`)] },
        config,
      );
      held += 4; // prompt, thinking + call, answer, thinking + reply
      const sent = ctx.fake.requests.slice(before);
      expect(sent.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
      expect(result.messages).toHaveLength(held);
      expect(result.messages.at(-1)?.content).toEqual([
        expect.objectContaining({ type: 'thinking' }),
        expect.objectContaining({ type: 'text', text: `Run ${run} done: ${file} read.` }),
      ]);
      // The second request sends the first reply's thinking back as the fake signed it.
      const reply = result.messages.at(-3)?.content as Array<{ type: string; signature?: string }>;
      const thinking = reply.find((b) => b.type === 'thinking');
      expect(JSON.stringify(turnsOf(sent[1]?.body))).toContain(JSON.stringify(thinking?.signature));
      if (compactedBefore > 0) {
        const first = turnsOf(sent[0]?.body);
        expect(first[0]?.role).toBe('user');
        expect(JSON.stringify(first[0]?.content)).toMatch(/compactor/i);
        continuedAfterCompaction++;
      }
      await settled(tenantId, events.at(-1));
    }
    const rows = await ledger(tenantId);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows.every((r) => events.some((e) => e.eventId === r.event_id))).toBe(true);
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);
    const report = await audit(db, tenantId, threadId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(held);
    const state = (await agent.getState(config)) as { values: { messages: BaseMessage[] } };
    expect(state.values.messages).toHaveLength(held);
  });
});

describe('the compactor middleware, when a run goes wrong', () => {
  const tenantId = 'langchain-edges';
  const model = () =>
    new ChatOpenAI({
      model: 'gpt-5.4-mini',
      apiKey: 'sk-test',
      configuration: { baseURL: chatURL },
      maxRetries: 0,
    });
  const agentOn = (checkpointer: MemorySaver, llm: ChatOpenAI = model()) =>
    createAgent({
      model: llm,
      tools: [readFileTool],
      checkpointer,
      middleware: [compactorMiddleware({ db: ctx.tdb.database.db, producer: ctx.producer, tenantId })],
    });
  const stored = async (sessionId: string) =>
    ctx.tdb.database.sql<{ seq: number; content_blocks: unknown }[]>`
      select seq, content_blocks from messages where tenant_id = ${tenantId} and session_id = ${sessionId}
      order by seq`;

  it('refuses a message its format cannot hold, naming its place in the state, and stores nothing of it', async () => {
    const agent = agentOn(new MemorySaver());
    const before = chat.requests.length;
    const run = agent.invoke(
      {
        messages: [
          new HumanMessage({
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', url: 'https://example.com/a.png' },
            ],
          }),
        ],
      },
      { configurable: { thread_id: 'refused' } },
    );
    await expect(run).rejects.toThrow(
      /messages\[0\] \(human\)\.content\[1\]: a "image" block, which the openai-chat session format cannot hold/,
    );
    expect(chat.requests.length).toBe(before); // the model was never called
    expect(await stored('refused')).toEqual([]);
  });

  it('stores a message once when the model call after it failed and the next run brings it again', async () => {
    const checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: 'failed-call' } };
    // A model on a closed port: the call fails after the prompt was stored.
    const down = new ChatOpenAI({
      model: 'gpt-5.4-mini',
      apiKey: 'sk-test',
      configuration: { baseURL: 'http://127.0.0.1:9/v1' },
      maxRetries: 0,
    });
    await expect(
      agentOn(checkpointer, down).invoke({ messages: [new HumanMessage('First.')] }, config),
    ).rejects.toThrow();
    expect((await stored('failed-call')).map((r) => r.content_blocks)).toEqual([
      { role: 'user', content: 'First.' },
    ]);
    // The same thread goes on with a working model: the first prompt is in the state again, unrecorded.
    chat.script({ content: 'Both seen.' });
    const result = await agentOn(checkpointer).invoke({ messages: [new HumanMessage('Second.')] }, config);
    expect(result.messages.map((m) => m.content)).toEqual(['First.', 'Second.', 'Both seen.']);
    expect((await stored('failed-call')).map((r) => r.content_blocks)).toEqual([
      { role: 'user', content: 'First.' },
      { role: 'user', content: 'Second.' },
      { role: 'assistant', content: 'Both seen.' },
    ]);
    expect(sentMessages(chat.requests.at(-1))).toEqual([
      { role: 'user', content: 'First.' },
      { role: 'user', content: 'Second.' },
    ]);
  });

  it('refuses a state whose stored messages were removed: the history is append-only', async () => {
    const checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: 'rewritten' } };
    const agent = agentOn(checkpointer);
    chat.script({ content: 'Hello.' });
    const first = await agent.invoke({ messages: [new HumanMessage('Hi.')] }, config);
    await agent.updateState(config, { messages: [new RemoveMessage({ id: String(first.messages[0]?.id) })] });
    await expect(agent.invoke({ messages: [new HumanMessage('Again.')] }, config)).rejects.toThrow(
      /^compactor middleware: messages\[1\] of the agent's state is not the message stored last in session "rewritten" .*append-only/,
    );
    expect(await stored('rewritten')).toHaveLength(2);
  });
});
