/**
 * compactor's recall tools for a Claude Agent SDK agent: the MCP server of `compactor api`
 * (`/v1/mcp`, streamable HTTP, a tenant key with scope `context:read`) as an `mcpServers` entry, the
 * two tools allowed to run without a permission prompt, and the sentence that tells the model which
 * session id they take (the tools name no session of their own: the model passes its own). Pure.
 */
import type { McpServerConfig } from '@anthropic-ai/claude-agent-sdk';
import { InvalidInputError } from '../../../shared/contract/errors.ts';

/** The name of the server in `mcpServers`: Claude Code calls its tools `mcp__compactor__<tool>`. */
export const RECALL_SERVER_NAME = 'compactor';

/** Where the MCP server is and the key to call it with. */
export interface RecallServer {
  /** `compactor api`'s base URL, e.g. `https://compactor.example.com`. */
  apiUrl: string;
  /** A key of the tenant with scope `context:read`, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
}

/** The tools' names as the agent sees them. */
export const RECALL_TOOLS = [
  `mcp__${RECALL_SERVER_NAME}__recall_search`,
  `mcp__${RECALL_SERVER_NAME}__recall_read`,
] as const;

/**
 * `mcpServers` with the recall server and `allowedTools` with its two tools.
 * @throws {InvalidInputError} naming `recall.apiUrl` when it is not an http(s) URL, or
 *   `recall.apiKey` when it is empty.
 */
export function recallServer(server: RecallServer): {
  mcpServers: Record<string, McpServerConfig>;
  allowedTools: string[];
} {
  let url: URL;
  try {
    url = new URL('/v1/mcp', server.apiUrl);
  } catch {
    throw new InvalidInputError(`recall.apiUrl: not a URL: ${JSON.stringify(server.apiUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(`recall.apiUrl: expected an http(s) URL, got ${url.protocol}`);
  }
  if (typeof server.apiKey !== 'string' || server.apiKey.trim() === '') {
    throw new InvalidInputError('recall.apiKey: expected a key of the tenant (scope context:read)');
  }
  return {
    mcpServers: {
      [RECALL_SERVER_NAME]: {
        type: 'http',
        url: url.toString(),
        headers: { Authorization: `Bearer ${server.apiKey}` },
      },
    },
    allowedTools: [...RECALL_TOOLS],
  };
}

/** The sentence telling the model how to call recall in session `sessionId`. */
export function recallNote(sessionId: string): string {
  return (
    `This conversation is compactor session ${JSON.stringify(sessionId)}: ${RECALL_TOOLS[0]} and ` +
    `${RECALL_TOOLS[1]} take it as sessionId, to find and read back what left the context.`
  );
}
