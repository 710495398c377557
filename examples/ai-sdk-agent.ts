/**
 * An agent on the Vercel AI SDK (`ai` 7, `@ai-sdk/anthropic`) that keeps its conversation in
 * compactor: its model is wrapped with compactor's middleware, which stores every new message and
 * answer in a session of format `ai-sdk` and sends the model the session's context (compacted when
 * a worker has compacted it); each run that ends enqueues `session.run.completed`. The agent itself
 * is an ordinary AI SDK chat loop: it keeps its own `messages` and calls `generateText` with tools.
 *
 * With your own database, Redis and a worker (`npx compactor worker`):
 *
 *     DATABASE_URL=… REDIS_URL=… ANTHROPIC_API_KEY=… npx tsx examples/ai-sdk-agent.ts "Summarise README.md"
 *
 * The lines marked `compactor` (seven, the `wrapLanguageModel` around the model aside) are all the
 * wiring compactor needs (docs/guide/ai-sdk.md).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { anthropic } from '@ai-sdk/anthropic';
import { generateText, jsonSchema, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { compactorMiddleware } from '../producer/frameworks/ai-sdk/index.ts'; // compactor
import { createProducer, openDatabase } from '../producer/index.ts'; // compactor

/** A tool that reads a text file under the current directory (paths outside it are refused). */
const readFileTool = tool({
  description: 'Read a text file of the project, by its path relative to the project root.',
  inputSchema: jsonSchema<{ path: string }>({
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
  }),
  execute: async ({ path: file }) => {
    const resolved = path.resolve(file);
    if (!resolved.startsWith(process.cwd() + path.sep)) throw new Error(`${file}: outside the project`);
    return readFile(resolved, 'utf8');
  },
});

async function main(): Promise<void> {
  const tenantId = process.env.COMPACTOR_TENANT ?? 'example';
  const sessionId = `ai-sdk-agent-${crypto.randomUUID()}`;
  const database = openDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/compactor'); // compactor
  const producer = createProducer({ db: database.db }); // compactor: the workers' queue, by their rule
  const model = wrapLanguageModel({
    model: anthropic('claude-sonnet-5'),
    middleware: compactorMiddleware({ db: database.db, producer, tenantId, sessionId }), // compactor
  });
  const messages: ModelMessage[] = [];
  try {
    const prompt = process.argv.slice(2).join(' ') || 'Read README.md and say what this project does.';
    messages.push({ role: 'user', content: prompt });
    const result = await generateText({
      model,
      system: 'You are a careful coding assistant.',
      messages,
      tools: { read_file: readFileTool },
      stopWhen: stepCountIs(20),
    });
    messages.push(...result.responseMessages);
    console.log(result.text);
  } finally {
    await producer.close(); // compactor
    await database.close(); // compactor
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
