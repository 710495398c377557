/**
 * The example agent (examples/agent-loop.ts) recalls what a compaction took out of its context: it
 * reads a file and takes a screenshot, a worker compacts its session, and then — scripted turns of
 * the fake Messages API — it calls `recall_search` with the file's path and `recall_read` with the
 * seq it found, through a real MCP client over streamable HTTP to the API's `/v1/mcp` with its
 * tenant's key. What comes back is what it appended, byte for byte (the screenshot too), and the
 * strict fake accepts the request carrying it. Another tenant's key finds nothing in a session of
 * the same id.
 */
import { readFile } from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentTool,
  readFileTool,
  recallAgentTools,
  runAgent,
  startSession,
} from '../../examples/agent-loop.ts';
import { connectRecallMcp, type RecallTools } from '../../examples/recall-tools.ts';
import { loadContext } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'agents';
const sessionId = 'recall-agent';
const FILE = 'shared/planning/window.ts';
/** A 1x1 PNG, the screenshot the agent's tool returns. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const SCREENSHOT: ToolResultBlockParam['content'] = [
  { type: 'text', text: 'The dashboard, after the deploy:' },
  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
];

let api: Listening;
const keys: Record<'agents' | 'other', string> = { agents: '', other: '' };
const opened: RecallTools[] = [];

/** A tool returning a screenshot: text and an image, as a browser tool would. */
const screenshotTool: AgentTool = {
  definition: {
    name: 'screenshot',
    description: 'Takes a screenshot of the dashboard.',
    input_schema: { type: 'object', properties: {} },
  },
  run: async () => SCREENSHOT,
};

beforeAll(async () => {
  ctx.fake.strict = true;
  const db = ctx.tdb.database.db;
  api = await startKeyedApi(ctx);
  keys.agents = (await createKey(db, { tenantId, name: 'agents' })).secret;
  keys.other = (await createKey(db, { tenantId: 'other', name: 'other agents' })).secret;
});

afterAll(async () => {
  for (const recall of opened) await recall.close();
});

/** The recall tools over MCP with `key`. */
async function recallWith(key: string): Promise<RecallTools> {
  const recall = await connectRecallMcp({ apiUrl: api.url, apiKey: key });
  opened.push(recall);
  return recall;
}

/** Runs the agent once and waits for the worker to finish with its `session.run.completed`. */
async function run(options: Parameters<typeof runAgent>[0], prompt: string) {
  const result = await runAgent(options, prompt);
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(jobIdOf(tenantId, result.eventId));
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 30_000);
  expect(state).toBe('completed');
  return result;
}

/** The `messages` of the last request the fake Messages API received. */
function lastRequestMessages(): MessageParam[] {
  const body = ctx.fake.requests.at(-1)?.body as { messages?: MessageParam[] } | undefined;
  if (!body?.messages) throw new Error('the fake received no Messages request');
  return body.messages;
}

/** The tool results the last request carried (its last user turn's). */
function lastToolResults(): ToolResultBlockParam[] {
  const last = lastRequestMessages().at(-1);
  if (!Array.isArray(last?.content)) return [];
  return last.content.flatMap((b) => (b.type === 'tool_result' ? [b] : []));
}

describe('the example agent with recall', () => {
  it('finds the file that left its context over MCP, reads it and its screenshot back exactly, and carries on', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 4, maxSummaryTokens: 600 },
      triggers: { maxTokens: 2_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    await startSession(db, { tenantId, sessionId, system: 'You are a careful coding assistant.' });
    const recall = await recallWith(keys.agents);
    expect(recall.specs.map((s) => s.name).sort()).toEqual(['recall_read', 'recall_search']);
    const options = {
      db,
      producer: ctx.producer,
      client: new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 }),
      tenantId,
      sessionId,
      model: 'claude-sonnet-5',
      maxTokens: 2_048,
      tools: [readFileTool(process.cwd()), screenshotTool, ...recallAgentTools(recall)],
    };

    // Run 1 (seqs 1-6): the file and the screenshot.
    ctx.fake.enqueue(
      { reply: { text: 'Reading it.', toolUse: [{ name: 'read_file', input: { path: FILE } }] } },
      { reply: { toolUse: [{ name: 'screenshot', input: {} }] } },
      { reply: { text: 'The window planner is fine; the dashboard is blank.' } },
    );
    await run(options, 'Why is the dashboard blank after the deploy?');
    const sent = lastRequestMessages();
    // Run 2 (seqs 7-10): more work, so that run 1 leaves the context.
    ctx.fake.enqueue(
      { reply: { toolUse: [{ name: 'read_file', input: { path: 'shared/context/render.ts' } }] } },
      { reply: { text: 'Rendering looks right too.' } },
    );
    await run(options, 'And the renderer?');
    // The file's text and the screenshot left the context; the summary says where they went.
    const fileText = await readFile(FILE, 'utf8');
    const live = JSON.stringify((await loadContext(db, { tenantId, sessionId })).messages);
    expect(live).not.toContain(JSON.stringify(fileText).slice(1, 200));
    expect(live).not.toContain(PNG);
    expect(live).toContain('recall_search and recall_read find and read them');

    // Run 3: the model searches for the path, reads the seqs it found, and answers.
    const before = ctx.fake.requests.length;
    ctx.fake.enqueue({ reply: { toolUse: [{ name: 'recall_search', input: { query: FILE } }] } });
    const search = options.tools.find((t) => t.definition.name === 'recall_search') as AgentTool;
    let found: Array<{ seq: number; kind: string }> = [];
    const scripted: AgentTool = {
      ...search,
      // The scripted model's next turn depends on what the search gave it: read from the first hit.
      async run(input, context) {
        const text = (await search.run(input, context)) as string;
        found = JSON.parse(text).hits;
        const seq = found.find((h) => h.kind === 'tool_call')?.seq ?? -1;
        ctx.fake.enqueue(
          { reply: { toolUse: [{ name: 'recall_read', input: { fromSeq: seq, toSeq: seq + 3 } }] } },
          { reply: { text: `${FILE} was fine; the screenshot shows a blank dashboard.` } },
        );
        return text;
      },
    };
    const result = await run(
      { ...options, tools: options.tools.map((t) => (t === search ? scripted : t)) },
      'What did that file and the screenshot show, again?',
    );
    expect(result.requests).toBe(3);
    expect(result.text).toBe(`${FILE} was fine; the screenshot shows a blank dashboard.`);
    expect(found.map((h) => h.seq)).toContain(2);

    // The read's tool result, as the model received it: the originals of seqs 2-5, as appended.
    const requests = ctx.fake.requests.slice(before);
    expect(requests).toHaveLength(3);
    const [readResult] = lastToolResults();
    expect(readResult?.is_error).toBeUndefined();
    const blocks = readResult?.content as Array<{ type: string; text?: string; source?: { data: string } }>;
    const read = JSON.parse(blocks[0]?.text ?? '{}') as {
      messages: Array<{ seq: number; content: unknown }>;
    };
    expect(read.messages.map((m) => m.seq)).toEqual([2, 3, 4, 5]);
    const appended = sent.slice(1, 5).map((m) => m.content); // what run 1's last request sent of seqs 2-5
    expect(JSON.stringify(read.messages.map((m) => m.content))).toBe(JSON.stringify(appended));
    expect((read.messages[1]?.content as ToolResultBlockParam[] | undefined)?.[0]?.content).toBe(fileText);
    expect(JSON.stringify(read.messages[3]?.content)).toContain(JSON.stringify(SCREENSHOT));
    // ...and the screenshot as an image the model sees.
    expect(blocks.slice(1)).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ]);
    const report = await audit(db, tenantId, sessionId);
    expect(violations(report)).toEqual([]);
  });

  it("gives another tenant's agent nothing of a session with the same id", async () => {
    const recall = await recallWith(keys.other);
    // The other tenant has no such session: both calls are refused, naming it.
    for (const [name, args] of [
      ['recall_search', { query: FILE }],
      ['recall_read', { fromSeq: 0, toSeq: 20 }],
    ] as const) {
      const refused = await recall.call(name, args, sessionId);
      expect(refused.isError).toBe(true);
      expect(refused.text).toBe(`session "${sessionId}" not found for tenant "other"`);
    }
    // Its own session of the same id: nothing of the first tenant's archive in it.
    await startSession(ctx.tdb.database.db, { tenantId: 'other', sessionId, system: 'Another tenant.' });
    const search = await recall.call('recall_search', { query: FILE }, sessionId);
    expect({ isError: search.isError, hits: JSON.parse(search.text).hits }).toEqual({
      isError: false,
      hits: [],
    });
    const read = await recall.call('recall_read', { fromSeq: 0, toSeq: 20 }, sessionId);
    expect(read).toMatchObject({ isError: false, images: [] });
    expect(JSON.parse(read.text).messages).toEqual([]);
  });
});
