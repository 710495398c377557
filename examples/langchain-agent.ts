/**
 * A LangChain.js agent (`createAgent` of `langchain` v1, on `ChatOpenAI`) that keeps its session in
 * compactor: the compactor middleware stores what the agent says and hears and hands the model the
 * compacted context instead of the whole history, while the graph's checkpointed state keeps every
 * message; compactor's recall tools come from its MCP server through `@langchain/mcp-adapters`.
 * docs/guide/langchain.md explains it.
 *
 * The lines marked `// compactor` are the whole wiring: what an agent you already have gains.
 * Run it with your database, Redis, a worker (`npx compactor worker`) and the API (`npx compactor
 * api`, for recall), a key of tenant `acme` with the `context:read` scope:
 *
 *     DATABASE_URL=… REDIS_URL=… OPENAI_API_KEY=… COMPACTOR_API_URL=… COMPACTOR_API_TOKEN=… \
 *       npx tsx examples/langchain-agent.ts "Read README.md and say what this project does."
 *
 * `OPENAI_BASE_URL` points `ChatOpenAI` at any server that takes Chat Completions requests.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MemorySaver } from '@langchain/langgraph';
import { MultiServerMCPClient } from '@langchain/mcp-adapters'; // compactor
import { ChatOpenAI } from '@langchain/openai';
import { createAgent, HumanMessage, tool } from 'langchain';
import { z } from 'zod';
import { compactorMiddleware, recallServer } from '../producer/frameworks/langchain/index.ts'; // compactor
import { createProducer, openDatabase } from '../producer/index.ts'; // compactor

/** A tool reading a text file under the current directory (a path outside it is refused). */
export const readFileTool = tool(
  async ({ path: file }: { path: string }) => {
    const root = path.resolve(process.cwd());
    const resolved = path.resolve(root, file);
    if (!resolved.startsWith(root + path.sep)) throw new Error(`${file}: outside the project`);
    return readFile(resolved, 'utf8');
  },
  {
    name: 'read_file',
    description: 'Read a text file of the project, by its path relative to the project root.',
    schema: z.object({ path: z.string() }),
  },
);

async function main(): Promise<void> {
  const prompt = process.argv.slice(2).join(' ') || 'Read README.md and say what this project does.';
  const { DATABASE_URL, COMPACTOR_API_URL, COMPACTOR_API_TOKEN } = process.env; // compactor
  const mcp = new MultiServerMCPClient({ compactor: recallServer(COMPACTOR_API_URL, COMPACTOR_API_TOKEN) }); // compactor
  const recall = await mcp.getTools(); // compactor
  const database = openDatabase(DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/compactor'); // compactor
  const producer = createProducer({ db: database.db }); // compactor
  const agent = createAgent({
    model: new ChatOpenAI({ model: process.env.OPENAI_MODEL ?? 'gpt-5.4-mini' }),
    tools: [readFileTool],
    systemPrompt: 'You are a careful coding assistant.',
    checkpointer: new MemorySaver(),
    middleware: [compactorMiddleware({ db: database.db, producer, tenantId: 'acme', recall })], // compactor
  });
  try {
    // One LangGraph thread is one compactor session.
    const config = { configurable: { thread_id: `langchain-${randomUUID()}` } };
    const result = await agent.invoke({ messages: [new HumanMessage(prompt)] }, config);
    console.log(result.messages.at(-1)?.content);
  } finally {
    await Promise.all([mcp.close(), producer.close(), database.close()]); // compactor
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
