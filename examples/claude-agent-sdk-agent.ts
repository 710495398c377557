/**
 * An agent on the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`) whose sessions live in
 * compactor: the lines marked `compactor` are all it takes (docs/guide/claude-agent-sdk.md). The
 * SDK's session store is compactor's, so each run resumes from the session as compactor left it
 * (compacted by a worker between runs), Claude Code's own compactions follow the tenant's policy,
 * `session.run.completed` is enqueued at the end of each run, and the model can search and read back
 * what left its context through compactor's MCP server.
 *
 *     DATABASE_URL=… ANTHROPIC_API_KEY=… COMPACTOR_API_URL=… COMPACTOR_API_KEY=… \
 *       npx tsx examples/claude-agent-sdk-agent.ts "Summarise README.md" [session id to resume]
 *
 * Run a worker beside it (`npx compactor worker`) with the same environment, and `compactor api`
 * for the recall tools (a key of tenant `COMPACTOR_TENANT` with scope `context:read`).
 */
import { type Options, query } from '@anthropic-ai/claude-agent-sdk';
import { compactorOptions } from '../producer/frameworks/claude-agent-sdk/index.ts';
import { createProducer, openDatabase } from '../producer/index.ts';

/**
 * One run: the prompt, in a new session or the one `resume` names.
 * @returns the SDK's session id (pass it as `resume` to go on) and the result's text.
 * @throws the SDK's error when the run fails.
 */
export async function runClaudeAgent(
  prompt: string,
  options: Options,
): Promise<{ sessionId: string; text: string }> {
  for await (const message of query({ prompt, options })) {
    if (message.type !== 'result') continue;
    if (message.subtype !== 'success') throw new Error(`the run ended with ${message.subtype}`);
    return { sessionId: message.session_id, text: message.result };
  }
  throw new Error('the run ended without a result');
}

async function main(): Promise<void> {
  const [prompt = 'Read README.md and say what this project does.', resume] = process.argv.slice(2);
  const { COMPACTOR_API_URL: apiUrl, COMPACTOR_API_KEY: apiKey } = process.env;
  const tenantId = process.env.COMPACTOR_TENANT ?? 'example';
  const database = openDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/compactor'); // compactor
  const producer = createProducer({ db: database.db }); // compactor
  const recall = apiUrl && apiKey ? { apiUrl, apiKey } : undefined; // compactor
  const compactor = compactorOptions({ db: database.db, producer, tenantId, recall }); // compactor
  try {
    const result = await runClaudeAgent(prompt, {
      ...compactor, // compactor
      allowedTools: [...(compactor.allowedTools ?? []), 'Read', 'Grep', 'Glob'], // compactor (its recall tools)
      model: process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-5',
      ...(resume ? { resume } : {}),
    });
    console.log(JSON.stringify(result, null, 2));
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
