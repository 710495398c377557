/**
 * Recall as an MCP server (Model Context Protocol, the official `@modelcontextprotocol/sdk` 1.32):
 * two tools, `recall_search` and `recall_read`, over the streamable HTTP transport in stateless
 * mode (a server and a transport per request, JSON answers, no MCP session to keep), for the tenant
 * the API's key authenticated. The tools' input and output schemas are recall's own zod schemas
 * (shared/recall/schemas.ts) with the session id added, so the MCP tools, the HTTP routes and the
 * client library take and give the same shapes.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Db } from '../../../producer/postgres/db.ts';
import { readRecall, searchRecall } from '../../../producer/recall.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { SESSION_FORMAT_RULES } from '../../../shared/formats/registry.ts';
import { idSchema } from '../../../shared/protocol/events.ts';
import {
  type RecallReadResult,
  recallReadRangeSchema,
  recallReadResultSchema,
  recallSearchQuerySchema,
  recallSearchResultSchema,
  withRangeChecks,
} from '../../../shared/recall/schemas.ts';

/** The tools' names, as an agent calls them. */
export const RECALL_TOOLS = { search: 'recall_search', read: 'recall_read' } as const;

const sessionIdField = {
  sessionId: idSchema.describe("The session whose archive to look in: the agent's own session id."),
};

/**
 * A server holding the recall tools for `tenantId`: every call looks in that tenant's archive only.
 * @param logger where an unexpected failure of a tool is logged (the caller gets "internal error").
 */
export function recallMcpServer(db: Db, tenantId: string, logger: Logger): McpServer {
  const server = new McpServer(
    { name: 'compactor-recall', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.registerTool(
    RECALL_TOOLS.search,
    {
      title: 'Search what left the context',
      description:
        "Searches the messages that compactions removed from this session's context (and from the sessions it continued from) for a file path, a command, an identifier or words. Returns the seqs that hold every word, best first, with a snippet. Read one back with recall_read.",
      inputSchema: recallSearchQuerySchema.extend(sessionIdField),
      outputSchema: recallSearchResultSchema,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      answer(logger, async () => {
        const { sessionId, ...query } = args;
        const result = await searchRecall(db, { tenantId, sessionId, ...query });
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
      }),
  );
  server.registerTool(
    RECALL_TOOLS.read,
    {
      title: 'Read removed messages back',
      description:
        "Reads back, exactly as written, the messages of a seq range that compactions removed from this session's context (images and documents included). Bounded by maxBytes; nextSeq says where to go on.",
      inputSchema: withRangeChecks(recallReadRangeSchema.extend(sessionIdField)),
      outputSchema: recallReadResultSchema,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      answer(logger, async () => {
        const { sessionId, ...range } = args;
        const result = await readRecall(db, { tenantId, sessionId, ...range });
        return {
          content: [{ type: 'text', text: JSON.stringify(result) }, ...imagesOf(result)],
          structuredContent: result,
        };
      }),
  );
  return server;
}

/**
 * Answers one MCP request (POST of a JSON-RPC message; GET and DELETE are refused in stateless mode
 * by the transport, as the protocol says) with a fresh server and transport.
 * @param body a POST's body, already read and parsed by the API's body reader (its size, coding,
 *   UTF-8, nesting and JSON-RPC shape checked): the transport never reads the request's bytes.
 */
export async function handleRecallMcp(
  request: Request,
  body: unknown,
  db: Db,
  tenantId: string,
  logger: Logger,
): Promise<Response> {
  const server = recallMcpServer(db, tenantId, logger);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, body === undefined ? {} : { parsedBody: body });
  } finally {
    await server.close();
  }
}

/** A tool's result; a refused input or a missing session as a tool error naming what is wrong. */
async function answer(logger: Logger, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof InvalidInputError) {
      return { isError: true, content: [{ type: 'text', text: error.message }] };
    }
    logger.error({ err: error }, 'recall tool failed');
    return { isError: true, content: [{ type: 'text', text: 'internal error' }] };
  }
}

/**
 * The base64 images of the messages read, also as MCP image content, so that a model reading the
 * tool's result sees them (the structured result keeps them in their messages as well): each
 * message's images as its session's format finds them (`imagesOf`: an Anthropic `image` block,
 * also inside a `tool_result`, a Chat Completions or Responses image data URL, an AI SDK image file).
 */
function imagesOf(result: RecallReadResult): CallToolResult['content'] {
  const format = SESSION_FORMAT_RULES[result.format];
  return result.messages.flatMap((message) =>
    format.imagesOf(message.content).map((image) => ({
      type: 'image' as const,
      data: image.data,
      mimeType: image.mediaType,
    })),
  );
}
