/**
 * A small agent on the `openai` SDK's Chat Completions that keeps its session in compactor, in the
 * `openai-chat` format, and builds every request from it, closing the loop: each assistant message
 * is appended as it came (its `tool_calls` included), then one tool message per call, right after
 * it; `session.run.completed` is enqueued after each run, and the next request's `messages` are
 * whatever `loadContext` returns — the compacted history when a worker has compacted it.
 *
 *     create → append → enqueue → load → call
 *
 * It runs against any server that takes Chat Completions requests (OpenAI, vLLM, Ollama, LiteLLM,
 * OpenRouter): the SDK reads `OPENAI_API_KEY` and `OPENAI_BASE_URL` from the environment. With your
 * own database, Redis and a worker (`npx compactor worker`):
 *
 *     DATABASE_URL=… REDIS_URL=… OPENAI_API_KEY=… npx tsx examples/agent-loop-openai.ts "Summarise README.md"
 *
 * Its tools read files under the current directory, and search and read back what compactions took
 * out of its context (`recall_search`, `recall_read`: see examples/recall-tools.ts). With
 * `COMPACTOR_API_URL` and `COMPACTOR_API_KEY` (a key of tenant `COMPACTOR_TENANT`, scope
 * `context:read`) it calls the MCP server of `compactor api`; without them, the client library.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
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

/** A function tool the agent can call: its definition for the API and what running it returns. */
export interface ChatAgentTool {
  definition: ChatCompletionFunctionTool;
  /**
   * Runs the tool on its parsed arguments, in the agent's live session. A thrown error becomes the
   * tool message's text.
   */
  run(input: Record<string, unknown>, context: { sessionId: string }): Promise<string>;
}

/** What {@link runChatAgent} works with. */
export interface ChatAgentOptions {
  db: Db;
  producer: Producer;
  client: OpenAI;
  tenantId: string;
  /** The session the agent started; after a `newSession` compaction the live one is followed. */
  sessionId: string;
  model: string;
  /** `max_completion_tokens` of each request. */
  maxTokens: number;
  tools: ChatAgentTool[];
  /** Requests per run at most (a run ends when the model stops calling tools). Default 20. */
  maxSteps?: number;
}

/** What one run did. */
export interface ChatRunResult {
  /** The live session the run ended in. */
  sessionId: string;
  /** Requests sent to Chat Completions. */
  requests: number;
  /** The last reply's text. */
  text: string;
  /** The `session.run.completed` event enqueued at the end (its id). */
  eventId: string;
}

/**
 * Creates the agent's `openai-chat` session, its system prompt as a pinned system message.
 * @throws {SessionExistsError} when the tenant already has this session.
 */
export async function startChatSession(
  db: Db,
  input: { tenantId: string; sessionId: string; system: string },
): Promise<void> {
  await createSession(db, {
    tenantId: input.tenantId,
    sessionId: input.sessionId,
    format: 'openai-chat',
    messages: [{ seq: 0, message: { role: 'system', content: input.system }, pinned: true }],
  });
}

/**
 * One run: appends the user's prompt, then calls the model until it stops calling tools, every
 * request's `messages` built by `loadContext` and every reply appended as received, with the
 * context version it was made from; then enqueues `session.run.completed` with the size of the
 * last request (`inputTokens`: its `prompt_tokens`; `cacheReadTokens`: of those, the ones read from
 * the prompt cache, `prompt_tokens_details.cached_tokens`, when the server reports them).
 * @throws the SDK's errors (a 400 here means the context broke a rule of Chat Completions).
 */
export async function runChatAgent(options: ChatAgentOptions, prompt: string): Promise<ChatRunResult> {
  const { db, tenantId } = options;
  const tools = new Map(options.tools.map((t) => [t.definition.function.name, t]));
  let { sessionId } = await appendToLiveSession(db, tenantId, options.sessionId, [
    { role: 'user', content: prompt },
  ]);
  let promptTokens: number | null = null;
  let cachedTokens: number | null = null;
  let text = '';
  let requests = 0;
  for (let step = 0; step < (options.maxSteps ?? 20); step++) {
    const context = await loadContext(db, { tenantId, sessionId, format: 'openai-chat' });
    sessionId = context.sessionId;
    const completion = await options.client.chat.completions.create({
      model: options.model,
      max_completion_tokens: options.maxTokens,
      messages: context.messages as ChatCompletionMessageParam[],
      tools: options.tools.map((t) => t.definition),
    });
    requests++;
    if (completion.usage) {
      promptTokens = completion.usage.prompt_tokens;
      cachedTokens = completion.usage.prompt_tokens_details?.cached_tokens ?? null;
    }
    const choice = completion.choices[0];
    if (!choice) throw new Error(`completion ${completion.id} has no choice`);
    // The reply as received: its tool calls' ids are what the tool messages answer.
    ({ sessionId } = await appendToLiveSession(db, tenantId, sessionId, [choice.message], {
      contextVersion: context.version,
    }));
    text = choice.message.content ?? '';
    const calls = (choice.message.tool_calls ?? []).filter(
      (c): c is ChatCompletionMessageFunctionToolCall => c.type === 'function',
    );
    if (choice.finish_reason !== 'tool_calls' || calls.length === 0) break;
    const results: ChatCompletionToolMessageParam[] = [];
    for (const call of calls) results.push(await runTool(tools.get(call.function.name), call, sessionId));
    ({ sessionId } = await appendToLiveSession(db, tenantId, sessionId, results));
  }
  const eventId = randomUUID();
  await options.producer.runCompleted({
    tenantId,
    sessionId,
    eventId,
    ...(promptTokens !== null ? { inputTokens: promptTokens } : {}),
    ...(promptTokens !== null && cachedTokens !== null ? { cacheReadTokens: cachedTokens } : {}),
  });
  return { sessionId, requests, text, eventId };
}

/** The tool message answering `call`: the tool's output, or what went wrong. */
async function runTool(
  tool: ChatAgentTool | undefined,
  call: ChatCompletionMessageFunctionToolCall,
  sessionId: string,
): Promise<ChatCompletionToolMessageParam> {
  const answer = (content: string) => ({ role: 'tool' as const, tool_call_id: call.id, content });
  if (!tool) return answer(`error: no tool named ${call.function.name}`);
  try {
    const input = JSON.parse(call.function.arguments || '{}') as Record<string, unknown>;
    return answer(await tool.run(input, { sessionId }));
  } catch (error) {
    return answer(`error: ${String(error)}`);
  }
}

/** A tool that reads a text file under `root` (paths outside it are refused). */
export function readFileChatTool(root: string): ChatAgentTool {
  return {
    definition: {
      type: 'function',
      function: {
        name: 'read_file',
        description: 'Read a text file of the project, by its path relative to the project root.',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
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
 * `recall_search` and `recall_read` as function tools: declared with the schemas `recall` gives (the
 * MCP server's own, from `listTools()`, or recall's zod schemas), called in the agent's live
 * session. A tool message holds text only (Chat Completions), so a read's images come as they are
 * stored, base64 in the JSON. A refused call becomes the tool message's error text.
 */
export function recallChatTools(recall: RecallTools): ChatAgentTool[] {
  return recall.specs.map((spec) => ({
    definition: {
      type: 'function',
      function: { name: spec.name, description: spec.description, parameters: spec.inputSchema },
    },
    async run(input, { sessionId }) {
      const output = await recall.call(spec.name, input, sessionId);
      if (output.isError) throw new Error(output.text);
      return output.text;
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
    const sessionId = `chat-agent-${randomUUID()}`;
    await startChatSession(database.db, {
      tenantId,
      sessionId,
      system: 'You are a careful coding assistant.',
    });
    const result = await runChatAgent(
      {
        db: database.db,
        producer,
        client: new OpenAI(),
        tenantId,
        sessionId,
        model: process.env.OPENAI_MODEL ?? 'gpt-5.4-mini',
        maxTokens: 4_096,
        tools: [readFileChatTool(process.cwd()), ...recallChatTools(recall)],
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
