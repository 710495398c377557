/**
 * A Mastra agent (`@mastra/core`'s `Agent` on `@ai-sdk/openai`'s Chat Completions model, a
 * file-reading tool, Mastra's memory) whose conversation compactor keeps: the model reads the
 * session's context at every step (compacted once a worker has compacted it), Mastra's memory keeps
 * the whole thread, and the agent can search and read back what compactions took out of its
 * context through compactor's MCP server. docs/guide/mastra.md explains each line.
 *
 * The compactor wiring is the seven lines marked `// compactor`, added to an agent you already have.
 * With your database, Redis, a worker (`npx compactor worker`) and `compactor api` running:
 *
 *     DATABASE_URL=… REDIS_URL=… OPENAI_API_KEY=… COMPACTOR_API_URL=http://127.0.0.1:3100 \
 *       COMPACTOR_API_TOKEN=… npx tsx examples/mastra-agent.ts "What does README.md say?"
 *
 * `COMPACTOR_API_TOKEN` is a key of tenant `acme` with scope `context:read` (`compactor key create`).
 * Mastra's memory here lives in this process only, and compactor's session outlives it: run the
 * example again with the `THREAD` it printed and the model reads that thread's session.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { z } from 'zod';
import { createMastraCompactor } from '../producer/frameworks/mastra/index.ts'; // compactor

/** A tool that reads a text file under the current directory (paths outside it are refused). */
const readFileTool = createTool({
  id: 'read_file',
  description: 'Read a text file of the project, by its path relative to the project root.',
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path: file }) => {
    const resolved = path.resolve(process.cwd(), file);
    if (!resolved.startsWith(process.cwd() + path.sep)) throw new Error(`${file}: outside the project`);
    return readFile(resolved, 'utf8');
  },
});

const { COMPACTOR_API_URL: apiUrl = 'http://127.0.0.1:3100', COMPACTOR_API_TOKEN: apiKey = '' } = process.env; // compactor
const compactor = await createMastraCompactor({ tenantId: 'acme', recall: { apiUrl, apiKey } }); // compactor
const agent = new Agent({
  id: 'coder',
  name: 'coder',
  instructions: 'You are a careful coding assistant.',
  model: createOpenAI().chat(process.env.OPENAI_MODEL ?? 'gpt-5.4-mini'), // OPENAI_API_KEY, OPENAI_BASE_URL
  tools: { read_file: readFileTool, ...compactor.tools }, // compactor
  memory: new Memory({ storage: new InMemoryStore() }),
  inputProcessors: [compactor.processor], // compactor
  outputProcessors: [compactor.processor], // compactor
});

try {
  const prompt = process.argv.slice(2).join(' ') || 'Read README.md and say what this project does.';
  const thread = process.env.THREAD ?? `thread-${crypto.randomUUID()}`;
  const result = await agent.generate(prompt, { maxSteps: 20, memory: { thread, resource: 'developer' } });
  console.log(`${thread}: ${result.text}`);
} finally {
  await compactor.close(); // compactor
}
