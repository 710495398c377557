/**
 * An agent on the OpenAI Agents SDK for TypeScript (`@openai/agents`) whose session lives in
 * compactor. It is an ordinary SDK agent (an `Agent` with a function tool, run by `run()`); the
 * lines compactor adds are the ones marked `// compactor`, ten of them:
 *
 * - a database handle and a producer (the queue the workers listen on);
 * - a `CompactorSession`, given to `run()` as `{ session }`: the SDK reads the compacted history
 *   through it before the run and appends the run's items after; its `runCompaction` hook, which
 *   the runner calls once the items are stored, enqueues `session.run.completed`, so a worker
 *   compacts between runs;
 * - with `COMPACTOR_API_URL` and `COMPACTOR_API_KEY` (a key of tenant `COMPACTOR_TENANT`, scope
 *   `context:read`), compactor's recall tools as an MCP server of the SDK's (`connectRecall`), so
 *   the model can search and read back what compactions took out of its context;
 * - closing what was opened.
 *
 * The SDK reads `OPENAI_API_KEY` (and `OPENAI_BASE_URL`) from the environment. With your own
 * database, Redis and a worker (`npx compactor worker`):
 *
 *     DATABASE_URL=… REDIS_URL=… OPENAI_API_KEY=… npx tsx examples/openai-agents-agent.ts "Summarise README.md"
 *
 * Run it again with `COMPACTOR_SESSION` set to the session id it printed, to carry on that session.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Agent, run, tool } from '@openai/agents';
import { z } from 'zod';
import { CompactorSession, connectRecall } from '../producer/frameworks/openai-agents/index.ts'; // compactor
import { createProducer, openDatabase } from '../producer/index.ts'; // compactor

/** A tool that reads a text file under the current directory (paths outside it are refused). */
export const readFileTool = tool({
  name: 'read_file',
  description: 'Read a text file of the project, by its path relative to the project root.',
  parameters: z.object({ path: z.string() }),
  async execute({ path: given }) {
    const root = path.resolve(process.cwd());
    const file = path.resolve(root, given);
    if (!file.startsWith(root + path.sep)) throw new Error(`${given}: outside the project`);
    return readFile(file, 'utf8');
  },
});

/** What one run of the example did. */
export interface ExampleRun {
  /** The compactor session the run used (pass it as `COMPACTOR_SESSION` to carry on). */
  sessionId: string;
  /** The agent's final answer. */
  output: unknown;
  /** The `session.run.completed` event the run's end enqueued. */
  eventId: string | undefined;
}

/**
 * Runs the agent once on `prompt` in the compactor session `sessionId` of `tenantId`.
 * @throws the SDK's errors (a 400 from the model's API) and compactor's (the database, the queue).
 */
export async function runExample(prompt: string, tenantId: string, sessionId: string): Promise<ExampleRun> {
  const database = openDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/compactor'); // compactor
  const producer = createProducer({ db: database.db }); // compactor
  const session = new CompactorSession({ db: database.db, producer, tenantId, sessionId }); // compactor
  const { COMPACTOR_API_URL: apiUrl, COMPACTOR_API_KEY: apiKey } = process.env; // compactor
  const recall = apiUrl && apiKey ? [await connectRecall({ session, apiUrl, apiKey })] : []; // compactor
  try {
    const agent = new Agent({
      name: 'coder',
      instructions: 'You are a careful coding assistant. Read files with read_file.',
      model: process.env.OPENAI_MODEL ?? 'gpt-5.4-mini',
      // Stateless: the whole history goes with every request, reasoning with its encrypted content.
      modelSettings: { store: false, providerData: { include: ['reasoning.encrypted_content'] } },
      tools: [readFileTool],
      mcpServers: recall, // compactor
    });
    const result = await run(agent, prompt, { session }); // compactor
    return {
      sessionId: await session.getSessionId(),
      output: result.finalOutput,
      eventId: session.lastRunCompleted?.eventId,
    };
  } finally {
    await Promise.all([...recall.map((r) => r.close()), producer.close(), database.close()]); // compactor
  }
}

async function main(): Promise<void> {
  const prompt = process.argv.slice(2).join(' ') || 'Read README.md and say what this project does.';
  const tenantId = process.env.COMPACTOR_TENANT ?? 'example';
  const sessionId = process.env.COMPACTOR_SESSION ?? `agents-sdk-${randomUUID()}`;
  console.log(JSON.stringify(await runExample(prompt, tenantId, sessionId), null, 2));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
