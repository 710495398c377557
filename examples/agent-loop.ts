/**
 * A small agent on @anthropic-ai/sdk that keeps its session in compactor and builds every request
 * from it, closing the loop: what the model writes is appended as it came (thinking, signatures and
 * tool calls included), `session.run.completed` is enqueued after each run, and the next request
 * is whatever `loadContext` returns — the compacted history when a worker has compacted it.
 *
 *     create → append → enqueue → load → call
 *
 * Run it against your own database, Redis and a worker (`npx compactor worker`):
 *
 *     DATABASE_URL=… REDIS_URL=… ANTHROPIC_API_KEY=… npx tsx examples/agent-loop.ts "Summarise README.md"
 *
 * Its tools read files under the current directory, and search and read back what compactions took
 * out of its context (`recall_search`, `recall_read`: see examples/recall-tools.ts). With
 * `COMPACTOR_API_URL` and `COMPACTOR_API_KEY` (a key of tenant `COMPACTOR_TENANT`, scope
 * `context:read`) it calls the MCP server of `compactor api`; without them, the client library.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  ThinkingConfigParam,
  Tool,
  ToolResultBlockParam,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';
import {
  appendToLiveSession,
  createProducer,
  createSession,
  loadContext,
  type Producer,
} from '../producer/index.ts';
import type { Db } from '../producer/postgres/db.ts';
import { openDatabase } from '../producer/postgres/db.ts';
import { connectRecallMcp, localRecall, type RecallTools } from './recall-tools.ts';

/** A tool the agent can call: its definition for the API and what running it returns. */
export interface AgentTool {
  definition: Tool;
  /**
   * Runs the tool in the agent's live session; what it returns is the `tool_result`'s content (text,
   * or blocks: text and images). A thrown error becomes a `tool_result` with `is_error: true`.
   */
  run(
    input: Record<string, unknown>,
    context: { sessionId: string },
  ): Promise<ToolResultBlockParam['content']>;
}

/** What {@link runAgent} works with. */
export interface AgentOptions {
  db: Db;
  producer: Producer;
  client: Anthropic;
  tenantId: string;
  /** The session the agent started; after a `newSession` compaction the live one is followed. */
  sessionId: string;
  model: string;
  /** `max_tokens` of each request. */
  maxTokens: number;
  tools: AgentTool[];
  /** Extended thinking, passed as is (`{ type: 'adaptive' }`, or `enabled` with `budget_tokens` on older models). */
  thinking?: ThinkingConfigParam;
  /** Requests per run at most (a run ends when the model stops calling tools). Default 20. */
  maxSteps?: number;
}

/** What one run did. */
export interface RunResult {
  /** The live session the run ended in. */
  sessionId: string;
  /** Requests sent to the Messages API. */
  requests: number;
  /** The last response's text. */
  text: string;
  /** What `loadContext` reported on the way (e.g. thinking signed before a compaction). */
  notices: string[];
  /** The `session.run.completed` event enqueued at the end (its BullMQ job id). */
  eventId: string;
}

/**
 * The beta that lets a request drop thinking blocks whose signature no longer matches instead of
 * answering 400 (Messages API docs, "Preserved thinking", 2026-09).
 */
const BINDING_BETA = 'thinking-binding-controls-2026-08-01';

/**
 * Creates the agent's session, its system prompt as a pinned system message.
 * @throws {SessionExistsError} when the tenant already has this session.
 */
export async function startSession(
  db: Db,
  input: { tenantId: string; sessionId: string; system: string },
): Promise<void> {
  await createSession(db, {
    tenantId: input.tenantId,
    sessionId: input.sessionId,
    messages: [{ seq: 0, message: { role: 'system', content: input.system }, pinned: true }],
  });
}

/**
 * One run: appends the user's prompt, then calls the model until it stops calling tools, every
 * request built by `loadContext` and every reply appended as received; then enqueues
 * `session.run.completed` with the size of the last request (`inputTokens`, and `cacheReadTokens`:
 * what of it came from the prompt cache).
 * @throws the SDK's errors (a 400 here means the context broke a rule of the Messages API).
 */
export async function runAgent(options: AgentOptions, prompt: string): Promise<RunResult> {
  const { db, tenantId } = options;
  const tools = new Map(options.tools.map((t) => [t.definition.name, t]));
  let { sessionId } = await appendToLiveSession(db, tenantId, options.sessionId, [
    { role: 'user', content: prompt },
  ]);
  const notices: string[] = [];
  let usage: Usage | null = null;
  let text = '';
  let requests = 0;
  for (let step = 0; step < (options.maxSteps ?? 20); step++) {
    const context = await loadContext(db, { tenantId, sessionId });
    sessionId = context.sessionId;
    notices.push(...context.notices.map((n) => n.message));
    // A compaction landed inside this tool loop: the turn's thinking was signed over the history
    // before it. The docs' remedy: let the API drop the blocks that no longer match.
    const dropStale = context.notices.some((n) => n.type === 'thinking_prefix_changed');
    const params: MessageCreateParamsNonStreaming = {
      model: options.model,
      max_tokens: options.maxTokens,
      messages: context.messages,
      tools: options.tools.map((t) => t.definition),
      ...(context.system ? { system: context.system } : {}),
      ...(options.thinking ? { thinking: withBinding(options.thinking, dropStale) } : {}),
    };
    const response = await options.client.messages.create(
      params,
      dropStale ? { headers: { 'anthropic-beta': BINDING_BETA } } : undefined,
    );
    requests++;
    usage = response.usage;
    // The reply as received: every block, in order, its thinking signatures untouched.
    const reply = response.content as ContentBlockParam[];
    ({ sessionId } = await appendToLiveSession(
      db,
      tenantId,
      sessionId,
      [{ role: 'assistant', content: reply }],
      { contextVersion: context.version },
    ));
    text = response.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    if (response.stop_reason !== 'tool_use') break;
    const results: ToolResultBlockParam[] = [];
    for (const block of response.content) {
      if (block.type !== 'tool_use') continue;
      results.push(await runTool(tools.get(block.name), block.id, block.input, sessionId));
    }
    ({ sessionId } = await appendToLiveSession(db, tenantId, sessionId, [
      { role: 'user', content: results },
    ]));
  }
  const eventId = randomUUID();
  await options.producer.runCompleted({
    tenantId,
    sessionId,
    eventId,
    ...(usage
      ? {
          inputTokens:
            usage.input_tokens +
            (usage.cache_read_input_tokens ?? 0) +
            (usage.cache_creation_input_tokens ?? 0),
          cacheReadTokens: usage.cache_read_input_tokens ?? 0,
        }
      : {}),
  });
  return { sessionId, requests, text, notices, eventId };
}

async function runTool(
  tool: AgentTool | undefined,
  id: string,
  input: unknown,
  sessionId: string,
): Promise<ToolResultBlockParam> {
  if (!tool) return { type: 'tool_result', tool_use_id: id, is_error: true, content: 'no such tool' };
  try {
    const content = await tool.run((input ?? {}) as Record<string, unknown>, { sessionId });
    return { type: 'tool_result', tool_use_id: id, content };
  } catch (error) {
    return { type: 'tool_result', tool_use_id: id, is_error: true, content: String(error) };
  }
}

/** `thinking` with `block_binding.prefix_mismatch_behavior: "drop_block"` when asked. */
function withBinding(thinking: ThinkingConfigParam, dropStale: boolean): ThinkingConfigParam {
  if (!dropStale || thinking.type === 'disabled') return thinking;
  // Not in the SDK's types yet: a field of the beta.
  return {
    ...thinking,
    block_binding: { prefix_mismatch_behavior: 'drop_block' },
  } as unknown as ThinkingConfigParam;
}

/** A tool that reads a text file under `root` (paths outside it are refused). */
export function readFileTool(root: string): AgentTool {
  return {
    definition: {
      name: 'read_file',
      description: 'Read a text file of the project, by its path relative to the project root.',
      input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
    async run(input) {
      const file = path.resolve(root, String(input.path ?? ''));
      if (!file.startsWith(path.resolve(root) + path.sep))
        throw new Error(`${input.path}: outside the project`);
      return readFile(file, 'utf8');
    },
  };
}

/**
 * `recall_search` and `recall_read` as the agent's tools: declared with the schemas `recall` gives
 * (the MCP server's own, from `listTools()`, or recall's zod schemas), called in the agent's live
 * session. A read's images come back as image blocks of the `tool_result`, so the model sees them.
 * A refused call (a bad range, an empty query) becomes a `tool_result` with `is_error: true`.
 */
export function recallAgentTools(recall: RecallTools): AgentTool[] {
  return recall.specs.map((spec) => ({
    definition: { name: spec.name, description: spec.description, input_schema: spec.inputSchema },
    async run(input, { sessionId }) {
      const output = await recall.call(spec.name, input, sessionId);
      if (output.isError) throw new Error(output.text);
      if (output.images.length === 0) return output.text;
      return [
        { type: 'text', text: output.text },
        ...output.images.map((image) => ({
          type: 'image' as const,
          source: {
            type: 'base64' as const,
            media_type: image.mimeType as 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp',
            data: image.data,
          },
        })),
      ];
    },
  }));
}

async function main(): Promise<void> {
  const prompt = process.argv.slice(2).join(' ') || 'Read README.md and say what this project does.';
  const database = openDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/compactor');
  // No queue options: the queue the workers' environment names (the same rule as theirs).
  const producer = createProducer({ db: database.db });
  const tenantId = process.env.COMPACTOR_TENANT ?? 'example';
  const { COMPACTOR_API_URL: apiUrl, COMPACTOR_API_KEY: apiKey } = process.env;
  let recall: RecallTools | undefined;
  try {
    recall =
      apiUrl && apiKey ? await connectRecallMcp({ apiUrl, apiKey }) : localRecall(database.db, tenantId);
    const sessionId = `agent-${randomUUID()}`;
    await startSession(database.db, { tenantId, sessionId, system: 'You are a careful coding assistant.' });
    const result = await runAgent(
      {
        db: database.db,
        producer,
        client: new Anthropic(),
        tenantId,
        sessionId,
        model: process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-5',
        maxTokens: 4_096,
        thinking: { type: 'adaptive' },
        tools: [readFileTool(process.cwd()), ...recallAgentTools(recall)],
      },
      prompt,
    );
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await recall?.close();
    await producer.close();
    await database.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
