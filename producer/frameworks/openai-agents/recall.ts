/**
 * Recall for an Agents SDK agent: compactor's MCP server (`/v1/mcp` of `compactor api`, tools
 * `recall_search` and `recall_read`) as the SDK's own `MCPServerStreamableHttp`, with the tenant's
 * key in the Authorization header. The model never names a session: the tools' `sessionId` is left
 * out of the schemas it sees and filled in with the agent's live compactor session on each call, as
 * compactor's example agents do (docs/guide/recall.md).
 *
 * ```ts
 * const recall = await connectRecall({ session, apiUrl: 'https://compactor.example.com', apiKey });
 * const agent = new Agent({ name: 'coder', instructions, mcpServers: [recall] });
 * ```
 */
import {
  type CallToolResult,
  type CallToolResultContent,
  type MCPCallToolOptions,
  MCPServerStreamableHttp,
} from '@openai/agents';
import type { CompactorSession } from './session.ts';

/** Where compactor's API is, with which key, for which session. */
export interface RecallServerOptions {
  /** The agent's session: its live compactor session is the one searched and read. */
  session: Pick<CompactorSession, 'getSessionId' | 'liveSessionId'>;
  /** The base URL of `compactor api` (the MCP server is at `/v1/mcp` under it). */
  apiUrl: string | URL;
  /** A key of the session's tenant with the `context:read` scope, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** The server's name in the SDK (tracing, tool listings); default `compactor-recall`. */
  name?: string;
}

type McpTool = Awaited<ReturnType<MCPServerStreamableHttp['listTools']>>[number];

/** The tool with `sessionId` taken out of its arguments' schema. */
function withoutSessionId(tool: McpTool): McpTool {
  const { sessionId: _sessionId, ...properties } = tool.inputSchema.properties;
  return {
    ...tool,
    inputSchema: {
      ...tool.inputSchema,
      properties,
      required: tool.inputSchema.required.filter((name) => name !== 'sessionId'),
    },
  };
}

/**
 * compactor's recall tools over MCP, the SDK's `MCPServerStreamableHttp` with the session filled in
 * (see the module comment). Call `connect()` before a run and `close()` after, as for any MCP server
 * of the SDK, or use {@link connectRecall}.
 */
export class CompactorRecallServer extends MCPServerStreamableHttp {
  readonly #session: RecallServerOptions['session'];
  /** The tools whose schema had `sessionId`, by name (the ones it is filled in for). */
  readonly #takesSession = new Set<string>();

  /** A server for `options.session` (not connected: `connect()` it, or use {@link connectRecall}). */
  constructor(options: RecallServerOptions) {
    super({
      name: options.name ?? 'compactor-recall',
      url: new URL('/v1/mcp', options.apiUrl).href,
      requestInit: { headers: { Authorization: `Bearer ${options.apiKey}` } },
    });
    this.#session = options.session;
  }

  /** The server's tools, without `sessionId` in their schemas. */
  override async listTools(): Promise<McpTool[]> {
    const tools = await super.listTools();
    for (const tool of tools)
      if ('sessionId' in tool.inputSchema.properties) this.#takesSession.add(tool.name);
    return tools.map(withoutSessionId);
  }

  /** The SDK's `callTool`, the agent's live session as `sessionId` (see the class comment). */
  override async callTool(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResultContent> {
    return super.callTool(toolName, await this.#withSession(toolName, args), meta, options);
  }

  /** The SDK's `callToolResult`, the agent's live session as `sessionId` (see the class comment). */
  override async callToolResult(
    toolName: string,
    args: Record<string, unknown> | null,
    meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions,
  ): Promise<CallToolResult> {
    return super.callToolResult(toolName, await this.#withSession(toolName, args), meta, options);
  }

  /** The model's arguments with the agent's live session as `sessionId`, for a tool that takes one. */
  async #withSession(
    toolName: string,
    args: Record<string, unknown> | null,
  ): Promise<Record<string, unknown> | null> {
    if (!this.#takesSession.has(toolName)) return args;
    const sessionId = this.#session.liveSessionId ?? (await this.#session.getSessionId());
    return { ...(args ?? {}), sessionId };
  }
}

/**
 * A {@link CompactorRecallServer}, connected (its tools listed once, so that their calls get the
 * session).
 * @throws the SDK's MCP errors when the API cannot be reached or refuses the key.
 */
export async function connectRecall(options: RecallServerOptions): Promise<CompactorRecallServer> {
  const server = new CompactorRecallServer(options);
  await server.connect();
  await server.listTools();
  return server;
}
