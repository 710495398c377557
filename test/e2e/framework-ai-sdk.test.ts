/**
 * The AI SDK (`ai` 7, the real package) runs an agent through compactor's middleware: its
 * `generateText` and `streamText` with tools and Anthropic thinking, on `@ai-sdk/anthropic` pointed
 * at the strict fake Messages API over HTTP, a real worker compacting the session between runs.
 * The application keeps its own history, as AI SDK apps do (`messages` grows by each run's
 * `responseMessages`); the model is sent compactor's context instead. After each run the test
 * checks that every request was accepted (the strict fake answers 400 to a broken conversation or a
 * thinking block whose signature no longer verifies), that the run's thinking went back signed in
 * its tool loop, that the ledger has the compactions and that nothing was lost (the audit). Then
 * the agent recalls, through `@ai-sdk/mcp`'s client on compactor's `/v1/mcp` with its tenant's
 * key, the file that a compaction took out of its context, and reads it back exactly.
 */
import { readFile } from 'node:fs/promises';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { createOpenAI } from '@ai-sdk/openai';
import {
  generateText,
  jsonSchema,
  type ModelMessage,
  stepCountIs,
  streamText,
  type Tool,
  tool,
  wrapLanguageModel,
} from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CompletedRun, compactorMiddleware } from '../../producer/frameworks/ai-sdk/index.ts';
import { loadContext } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { FakeOpenAIResponsesServer, responsesInputError } from '../support/fake-openai-responses.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'ai-sdk-agents';
const sessionId = 'ai-sdk-agent';
const SYSTEM = `You are a careful coding assistant. Your session id is ${sessionId}.`;
/** Files the scripted model reads: a few kB of source each, so each run outgrows the trigger. */
const FILES = [
  'shared/planning/window.ts',
  'shared/context/render.ts',
  'shared/contract/blocks.ts',
  'shared/policy/policy.ts',
  'worker/postgres/restore.ts',
  'shared/extractive/index.ts',
];
const RUNS = 5;
/**
 * Thinking on, and the same tool definitions whether streamed or not: `@ai-sdk/anthropic` adds
 * `eager_input_streaming` to a streamed request's tools unless `toolStreaming` is false, and a
 * thinking signature is bound to the tools as well as to the messages before it.
 */
const THINKING = {
  anthropic: { thinking: { type: 'enabled', budgetTokens: 1_024 }, toolStreaming: false },
} as const;

let api: Listening;
let key = '';
let mcp: MCPClient | undefined;

beforeAll(async () => {
  ctx.fake.strict = true;
  api = await startKeyedApi(ctx);
  key = (await createKey(ctx.tdb.database.db, { tenantId, name: 'ai-sdk agents' })).secret;
});

afterAll(async () => {
  await mcp?.close();
});

const readFileTool = tool({
  description: 'Read a text file of the project, by its path relative to the project root.',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path }) => readFile(path, 'utf8'),
});

type Body = { messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }> };
const bodyOf = (i: number) => ctx.fake.requests[i]?.body as Body;

/** Waits for the worker to finish the run's event; returns its state. */
async function settled(run: CompletedRun, tenant = tenantId): Promise<string | undefined> {
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobIdOf(tenant, run.eventId));
    return state === 'completed' || state === 'failed' ? state : undefined;
  }, 30_000);
}

async function appliedCompactions(tenant = tenantId): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenant} and status = 'applied'`;
  return row?.n ?? 0;
}

describe('an AI SDK agent through the compactor middleware', () => {
  it('runs generateText and streamText with tools and thinking through several compactions, then recalls over MCP', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 2, maxSummaryTokens: 600 },
      triggers: { maxTokens: 4_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    const runs: CompletedRun[] = [];
    const middleware = compactorMiddleware({
      db,
      producer: ctx.producer,
      tenantId,
      sessionId,
      onRunCompleted: (run) => runs.push(run),
    });
    const anthropic = createAnthropic({ baseURL: `${ctx.llm.url}/v1`, apiKey: 'test' });
    const model = wrapLanguageModel({ model: anthropic('claude-sonnet-4-5'), middleware });

    const history: ModelMessage[] = [];
    let appended = 1; // the system prompt, pinned when the session was created
    let continuedAfterCompaction = 0;
    for (let run = 0; run < RUNS; run++) {
      const [a, b] = [FILES[run % FILES.length] as string, FILES[(run + 1) % FILES.length] as string];
      ctx.fake.enqueue(
        {
          reply: {
            thinking: `Run ${run}: start with ${a}.`,
            text: 'Reading.',
            toolUse: [{ name: 'read_file', input: { path: a } }],
          },
        },
        {
          reply: { thinking: `Run ${run}: now ${b}.`, toolUse: [{ name: 'read_file', input: { path: b } }] },
        },
        { reply: { thinking: `Run ${run}: enough.`, text: `Run ${run} done: ${a} and ${b} read.` } },
      );
      const before = ctx.fake.requests.length;
      const compactedBefore = await appliedCompactions();
      history.push({ role: 'user', content: `Run ${run}: read two files and tell me what they do.` });
      const settings = {
        model,
        system: SYSTEM,
        messages: history,
        tools: { read_file: readFileTool },
        stopWhen: stepCountIs(8),
        maxRetries: 0,
        providerOptions: THINKING,
      };
      let text: string;
      let responseMessages: ModelMessage[];
      if (run % 2 === 1) {
        // streamText: the middleware passes the SSE stream through and stores each answer at its end.
        const result = streamText(settings);
        text = await result.text;
        responseMessages = await result.responseMessages;
      } else {
        const result = await generateText(settings);
        text = result.text;
        responseMessages = result.responseMessages;
      }
      history.push(...responseMessages);
      expect(text).toBe(`Run ${run} done: ${a} and ${b} read.`);
      expect(ctx.fake.pending).toBe(0);
      appended += 6; // the prompt, three answers, two tool results

      // Three requests, every one accepted by the strict fake.
      const sent = ctx.fake.requests.slice(before);
      expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(sent.every((r) => (run % 2 === 1) === ((r.body as { stream?: boolean }).stream === true))).toBe(
        true,
      );
      // The run's tool loop went back with its thinking signed: the last request holds both of
      // the run's tool-use turns, each opening with the thinking block the fake signed.
      const last = bodyOf(ctx.fake.requests.length - 1).messages;
      const thinkingTurns = last.filter(
        (m) =>
          m.role === 'assistant' &&
          Array.isArray(m.content) &&
          m.content[0]?.type === 'thinking' &&
          String(m.content[0]?.thinking).startsWith(`Run ${run}:`),
      );
      expect(thinkingTurns).toHaveLength(2);
      for (const turn of thinkingTurns)
        expect((turn.content as Array<{ signature?: string }>)[0]?.signature).toMatch(/^eyJ/);
      if (compactedBefore > 0) {
        // The agent went on from compactor's compacted history, not from its own: the first request
        // of the run opens with the summary, and the file the previous run read first is no longer
        // in it, though the application's own history still holds it.
        const first = JSON.stringify(bodyOf(before).messages);
        expect(JSON.stringify(bodyOf(before).messages[0]?.content)).toMatch(/compactor/i);
        const earlier = JSON.stringify(
          await readFile(FILES[(run - 1) % FILES.length] as string, 'utf8'),
        ).slice(1, 200);
        expect(first).not.toContain(earlier);
        expect(JSON.stringify(history)).toContain(earlier);
        continuedAfterCompaction++;
      }

      // One event for the run, finished by the worker; ledger and audit after each.
      const event = runs.at(-1) as CompletedRun;
      expect(runs).toHaveLength(run + 1);
      expect(event.inputTokens).toBeGreaterThan(0);
      expect(await settled(event)).toBe('completed');
      const report = await audit(db, tenantId, middleware.sessionId);
      expect(violations(report)).toEqual([]);
      expect(report.liveOriginals + report.archivedOriginals).toBe(appended);
    }
    expect(await appliedCompactions()).toBeGreaterThanOrEqual(3);
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);

    // Recall: the first file left the context; the agent finds it over MCP and reads it back.
    const file = FILES[0] as string;
    const fileText = await readFile(file, 'utf8');
    const live = JSON.stringify((await loadContext(db, { tenantId, sessionId, format: 'ai-sdk' })).prompt);
    expect(live).not.toContain(JSON.stringify(fileText).slice(1, 200));
    mcp = await createMCPClient({
      transport: {
        type: 'http',
        url: new URL('/v1/mcp', api.url).href,
        headers: { authorization: `Bearer ${key}` },
      },
    });
    const recall = await mcp.tools();
    expect(Object.keys(recall).sort()).toEqual(['recall_read', 'recall_search']);
    const search = recall.recall_search as Tool;
    let found: Array<{ seq: number; kind: string }> = [];
    const scriptedSearch: Tool = {
      ...search,
      // The scripted model's next turn depends on what the search found: it reads from the first call.
      async execute(input, options) {
        const output = await search.execute?.(input, options);
        const text = (output as { content: Array<{ type: string; text?: string }> }).content[0]?.text ?? '{}';
        found = JSON.parse(text).hits;
        const seq = found.find((h) => h.kind === 'tool_call')?.seq ?? -1;
        ctx.fake.enqueue(
          {
            reply: {
              thinking: 'Read it back.',
              toolUse: [{ name: 'recall_read', input: { sessionId, fromSeq: seq, toSeq: seq + 1 } }],
            },
          },
          { reply: { thinking: 'Got it.', text: `${file} plans the context window.` } },
        );
        return output;
      },
    };
    ctx.fake.enqueue({
      reply: {
        thinking: 'It left my context.',
        toolUse: [{ name: 'recall_search', input: { sessionId, query: file } }],
      },
    });
    const before = ctx.fake.requests.length;
    history.push({ role: 'user', content: 'What did the first file you read do, again?' });
    const result = await generateText({
      model,
      system: SYSTEM,
      messages: history,
      tools: {
        read_file: readFileTool,
        recall_search: scriptedSearch,
        recall_read: recall.recall_read as Tool,
      },
      stopWhen: stepCountIs(8),
      maxRetries: 0,
      providerOptions: THINKING,
    });
    expect(result.text).toBe(`${file} plans the context window.`);
    const sent = ctx.fake.requests.slice(before);
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(found.map((h) => h.seq)).toContain(2);
    // The read's result, as the model received it: the call and the tool result that held the file,
    // as the middleware stored them.
    const lastTurn = bodyOf(ctx.fake.requests.length - 1).messages.at(-1);
    const toolResult = ((lastTurn?.content ?? []) as Array<{ type: string; content?: unknown }>).find(
      (b) => b.type === 'tool_result',
    );
    const readText = JSON.stringify(toolResult?.content);
    expect(readText).toContain(JSON.stringify(JSON.stringify(fileText).slice(1, 400)).slice(1, -1));
    const read = JSON.parse(((toolResult?.content ?? []) as Array<{ text: string }>)[0]?.text ?? '{}') as {
      messages: Array<{ seq: number; content: { role: string; content: Array<Record<string, unknown>> } }>;
    };
    expect(read.messages.map((m) => m.seq)).toEqual([2, 3]);
    expect(read.messages[0]?.content.content.find((p) => p.type === 'tool-call')).toMatchObject({
      toolName: 'read_file',
      input: { path: file },
    });
    expect(read.messages[1]?.content).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolName: 'read_file', output: { type: 'text', value: fileText } }],
    });
    expect(await settled(runs.at(-1) as CompletedRun)).toBe('completed');
    const report = await audit(db, tenantId, middleware.sessionId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(appended + 6);
  });
});

describe('an AI SDK agent on OpenAI Responses through the compactor middleware', () => {
  it('runs generateText with tools through @ai-sdk/openai against the strict fake Responses API, through compactions', async () => {
    const db = ctx.tdb.database.db;
    const tenant = 'ai-sdk-openai';
    const fake = new FakeOpenAIResponsesServer();
    const baseURL = await fake.start();
    ctx.onTeardown(() => fake.close());
    await setPolicy(db, tenant, null, {
      strategy: { type: 'summarize', keepRecent: 2, maxSummaryTokens: 600 },
      triggers: { maxTokens: 4_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    const runs: CompletedRun[] = [];
    const middleware = compactorMiddleware({
      db,
      producer: ctx.producer,
      tenantId: tenant,
      sessionId: 'ai-sdk-openai',
      onRunCompleted: (run) => runs.push(run),
    });
    const openai = createOpenAI({ baseURL, apiKey: 'sk-test' });
    const model = wrapLanguageModel({ model: openai('gpt-5.4-mini'), middleware });
    const history: ModelMessage[] = [];
    let appended = 1;
    let continuedAfterCompaction = 0;
    for (let run = 0; run < 4; run++) {
      const [a, b] = [FILES[run % FILES.length] as string, FILES[(run + 1) % FILES.length] as string];
      fake.script.push(
        { name: 'read_file', arguments: JSON.stringify({ path: a }) },
        { name: 'read_file', arguments: JSON.stringify({ path: b }) },
      );
      const before = fake.requests.length;
      const compactedBefore = await appliedCompactions(tenant);
      history.push({ role: 'user', content: `Run ${run}: read two files.` });
      const result = await generateText({
        model,
        system: 'You are a careful coding assistant.',
        messages: history,
        tools: { read_file: readFileTool },
        stopWhen: stepCountIs(8),
        maxRetries: 0,
        // Stateless: reasoning goes back as the encrypted content the fake signed, kept byte-exact.
        providerOptions: { openai: { store: false, include: ['reasoning.encrypted_content'] } },
      });
      history.push(...result.responseMessages);
      expect(result.text).toBe('ok');
      appended += 6;
      const sent = fake.requests.slice(before);
      expect(sent).toHaveLength(3);
      // Every request passes the fake's input rules again here (each was answered 200 already).
      for (const r of sent) {
        const body = r.body as { input: unknown; store?: boolean };
        expect(responsesInputError(body.input, fake.state, body.store !== false)).toBeNull();
      }
      if (compactedBefore > 0) {
        const first = sent[0]?.body as { input: Array<{ role?: string; content?: unknown }> };
        const input = first.input;
        expect(input[0]?.role).toBe('developer');
        expect(JSON.stringify(input[1]?.content)).toMatch(/compactor/i);
        continuedAfterCompaction++;
      }
      expect(await settled(runs.at(-1) as CompletedRun, tenant)).toBe('completed');
      const report = await audit(db, tenant, middleware.sessionId);
      expect(violations(report)).toEqual([]);
      expect(report.liveOriginals + report.archivedOriginals).toBe(appended);
    }
    expect(await appliedCompactions(tenant)).toBeGreaterThanOrEqual(3);
    expect(continuedAfterCompaction).toBeGreaterThanOrEqual(3);
  });
});
