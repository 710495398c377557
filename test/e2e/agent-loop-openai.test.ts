/**
 * The example agent on Chat Completions (examples/agent-loop-openai.ts) closes the loop: 42
 * requests with tool calls through the real `openai` SDK, each request's `messages` built by
 * loadContext from an `openai-chat` session, each reply and its tool messages appended as
 * received, an event after every run, a real worker compacting in between — and the strict fake
 * Chat Completions server, which refuses a tool call without its answers, an answer without its
 * call, `tool_calls: []` and a null content, accepts all of them. Nothing is lost: live + archived
 * = appended.
 */
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatAgentTool,
  readFileChatTool,
  recallChatTools,
  runChatAgent,
  startChatSession,
} from '../../examples/agent-loop-openai.ts';
import { localRecall } from '../../examples/recall-tools.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { chatRequestError, FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'chat-agents';
const RUNS = 14;
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
let baseURL = '';

beforeAll(async () => {
  baseURL = await fake.start();
});

afterAll(() => fake.close());

type SentMessage = { role: string; content?: unknown; tool_calls?: unknown };
const sentMessages = (request: unknown) =>
  ((request as { messages: SentMessage[] }).messages ?? []) as SentMessage[];

describe('the example agent on Chat Completions', () => {
  it('runs 42 requests with tool calls through several compactions, every one accepted', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 1_000 },
      triggers: { maxTokens: 9_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() }, concurrency: 2 });
    const sessionId = 'chat-agent-loop';
    await startChatSession(db, { tenantId, sessionId, system: 'You are a careful coding assistant.' });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 });
    const options = {
      db,
      producer: ctx.producer,
      client,
      tenantId,
      sessionId,
      model: 'gpt-5.4-mini',
      maxTokens: 2_048,
      tools: [readFileChatTool(process.cwd())],
    };

    let requests = 0;
    let appended = 1; // the system prompt
    let continuedAfterCompaction = 0;
    let cacheReads = 0;
    for (let run = 0; run < RUNS; run++) {
      const [a, b] = [FILES[run % FILES.length] as string, FILES[(run + 3) % FILES.length] as string];
      fake.script(
        { content: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: a } }] },
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: b } },
            { name: 'read_file', arguments: { path: '../outside.txt' } },
          ],
        },
        { content: `Run ${run} done: ${a} and ${b} read.` },
      );
      const before = fake.requests.length;
      const compactedBefore = await appliedCompactions();
      const result = await runChatAgent(options, `Run ${run}: read two files and tell me what they do.`);
      expect(result.requests).toBe(3);
      expect(result.text).toBe(`Run ${run} done: ${a} and ${b} read.`);
      expect(fake.pending).toBe(0);
      requests += result.requests;
      appended += 1 + 1 + 1 + 1 + 2 + 1; // prompt, call, answer, two calls, two answers, reply
      const sent = fake.requests.slice(before);
      // The run's last request carries the run's own turns, as appended, after whatever came before.
      const last = sentMessages(sent.at(-1));
      expect(last.at(-1)).toMatchObject({
        role: 'tool',
        content: expect.stringMatching(/outside the project/),
      });
      if (compactedBefore > 0) {
        // The agent went on from a compacted history: its first request opens with the pinned
        // system prompt, then compactor's summary as a user message.
        const first = sentMessages(sent[0]);
        expect(first[0]).toMatchObject({ role: 'system', content: 'You are a careful coding assistant.' });
        expect(first[1]?.role).toBe('user');
        expect(String(first[1]?.content)).toMatch(/compactor/i);
        continuedAfterCompaction++;
      }
      await waitFor(async () => {
        const state = await ctx.producer.queue.getJobState(jobIdOf(tenantId, result.eventId));
        return state === 'completed' || state === 'failed' ? state : undefined;
      }, 30_000);
      expect(await ctx.producer.queue.getJobState(jobIdOf(tenantId, result.eventId))).toBe('completed');
      // The event carried the last request's prompt tokens and, of those, the cached ones.
      const event = (await ctx.producer.queue.getJob(jobIdOf(tenantId, result.eventId)))?.data;
      expect(event).toMatchObject({ inputTokens: expect.any(Number), cacheReadTokens: expect.any(Number) });
      expect(event?.cacheReadTokens).toBeLessThanOrEqual(event?.inputTokens ?? 0);
      cacheReads += event?.cacheReadTokens ?? 0;
    }

    expect(requests).toBeGreaterThanOrEqual(40);
    expect(cacheReads).toBeGreaterThan(0);
    expect(await appliedCompactions()).toBeGreaterThanOrEqual(3);
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);
    // Every request the agent sent was valid and answered 200: runChatAgent throws on a 400 (no
    // retries), and each body passes the fake's checks again here.
    expect(fake.requests.length).toBe(requests);
    expect(fake.requests.map((r) => chatRequestError((r as { messages?: unknown }).messages))).toEqual(
      fake.requests.map(() => null),
    );
    const report = await audit(db, tenantId, sessionId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(appended);
  });
});

describe('the example agent on Chat Completions, with recall', () => {
  // This test compacts by hand: the first test's worker would take the session's run events and
  // hold its lease while the test asks for its own compaction.
  beforeAll(() => ctx.closeWorkers());

  it('searches the client library for a file that left its context and reads its call and answer back exactly', async () => {
    const db = ctx.tdb.database.db;
    const tenant = 'chat-recall';
    const sessionId = 'chat-recall';
    const file = 'shared/planning/window.ts';
    await startChatSession(db, {
      tenantId: tenant,
      sessionId,
      system: 'You are a careful coding assistant.',
    });
    const recall = localRecall(db, tenant);
    const tools = [readFileChatTool(process.cwd()), ...recallChatTools(recall)];
    // Declared from recall's own schemas, without the session id the agent fills in.
    const search = tools.find((t) => t.definition.function.name === 'recall_search') as ChatAgentTool;
    expect(search.definition.function.parameters).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string', maxLength: 500 } },
    });
    expect(JSON.stringify(tools.map((t) => t.definition))).not.toContain('sessionId');
    const options = {
      db,
      producer: ctx.producer,
      client: new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0 }),
      tenantId: tenant,
      sessionId,
      model: 'gpt-5.4-mini',
      maxTokens: 2_048,
      tools,
    };
    fake.script({ toolCalls: [{ name: 'read_file', arguments: { path: file } }] }, { content: 'Read it.' });
    await runChatAgent(options, 'Read the window planner.');
    const sent = sentMessages(fake.requests.at(-1)); // system, prompt, call (seq 2), answer (seq 3)
    fake.script({ content: 'Done.' });
    await runChatAgent(options, 'Anything else?');
    const outcome = await ctx.compactInProcess({
      tenantId: tenant,
      sessionId,
      strategy: { type: 'summarize', keepRecent: 2, maxSummaryTokens: 500 },
    });
    expect(outcome.row?.status).toBe('applied');

    fake.script({ toolCalls: [{ name: 'recall_search', arguments: { query: file } }] });
    const scripted: ChatAgentTool = {
      ...search,
      // The scripted model reads from the call it found, then answers.
      async run(input, context) {
        const text = await search.run(input, context);
        const hit = (JSON.parse(text).hits as Array<{ seq: number; kind: string }>).find(
          (h) => h.kind === 'tool_call',
        );
        fake.script(
          {
            toolCalls: [
              { name: 'recall_read', arguments: { fromSeq: hit?.seq ?? 0, toSeq: (hit?.seq ?? 0) + 1 } },
            ],
          },
          { content: 'It plans the context window.' },
        );
        return text;
      },
    };
    const result = await runChatAgent(
      { ...options, tools: tools.map((t) => (t === search ? scripted : t)) },
      'What did that file do, again?',
    );
    expect(result).toMatchObject({ requests: 3, text: 'It plans the context window.' });
    const last = sentMessages(fake.requests.at(-1)).at(-1) as { role: string; content: string };
    expect(last.role).toBe('tool');
    const read = JSON.parse(last.content) as {
      format: string;
      messages: Array<{ seq: number; content: unknown }>;
    };
    expect(read.format).toBe('openai-chat');
    expect(read.messages.map((m) => m.seq)).toEqual([2, 3]);
    expect(JSON.stringify(read.messages.map((m) => m.content))).toBe(JSON.stringify(sent.slice(2, 4)));
    expect(read.messages[1]?.content).toMatchObject({ role: 'tool', content: await readFile(file, 'utf8') });
    expect(chatRequestError(sentMessages(fake.requests.at(-1)))).toBeNull();
  });
});

async function appliedCompactions(): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenantId} and status = 'applied'`;
  return row?.n ?? 0;
}
