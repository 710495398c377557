/**
 * compactor's recall tools (`recall_search`, `recall_read` of the MCP server at `/v1/mcp`), as the
 * LangChain tools `@langchain/mcp-adapters` loads them, made into tools of one agent: the model
 * never names a session (the `sessionId` argument leaves the schema it sees) and the tool fills in
 * the run's own session, found as the middleware finds it (session-id.ts).
 *
 * The model gets the tool's text (the JSON of the search hits, or of the messages read, exactly as
 * stored: images there as their base64, as the MCP server writes them); the rest of what the
 * server answered (the structured content, the images of a read as image blocks) is the tool
 * message's `artifact`, which the graph keeps and no model sees.
 * A refused call (an empty query, a reversed range, a session the tenant does not have) throws,
 * and the agent's tool node answers the model with the error, as for any tool.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { type SessionIdOption, type SessionScope, sessionIdOf } from './session-id.ts';

/** A connection of `@langchain/mcp-adapters`' `MultiServerMCPClient`, over streamable HTTP. */
export interface RecallServer {
  transport: 'http';
  /** `/v1/mcp` of `compactor api`. */
  url: string;
  headers: { authorization: string };
}

/**
 * The connection to compactor's MCP recall server for `new MultiServerMCPClient({ compactor: … })`:
 * `/v1/mcp` of the API at `apiUrl`, with `apiKey` (a tenant key with the `context:read` scope) as
 * its bearer token.
 * @throws {InvalidInputError} when either is missing (an environment variable not set), naming it.
 */
export function recallServer(apiUrl: string | undefined, apiKey: string | undefined): RecallServer {
  if (!apiUrl) throw new InvalidInputError('recallServer: no API URL (where `compactor api` listens)');
  if (!apiKey)
    throw new InvalidInputError('recallServer: no API key (a tenant key with the context:read scope)');
  return {
    transport: 'http',
    url: new URL('/v1/mcp', apiUrl).href,
    headers: { authorization: `Bearer ${apiKey}` },
  };
}

/** A tool's JSON Schema, as `@langchain/mcp-adapters` gives an MCP tool's. */
interface ObjectSchema {
  type?: unknown;
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

/**
 * `tools` bound to the run's session: each keeps its name and description, loses `sessionId` from
 * its schema, and calls the original with `sessionId` set to the run's session.
 * @param sessionId the middleware's `sessionId` option (default: the run's thread id).
 * @throws {InvalidInputError} naming a tool whose JSON Schema has no `sessionId` property: not one
 *   of compactor's recall tools.
 */
export function sessionRecallTools(
  tools: readonly StructuredToolInterface[],
  sessionId: SessionIdOption | undefined,
): DynamicStructuredTool[] {
  return tools.map((tool) => {
    const schema = tool.schema as ObjectSchema;
    if (
      typeof schema !== 'object' ||
      schema === null ||
      !schema.properties ||
      !('sessionId' in schema.properties)
    ) {
      throw new InvalidInputError(
        `recall tool ${JSON.stringify(tool.name)}: its JSON Schema has no sessionId property, so it is not one of compactor's recall tools (load the tools of /v1/mcp with @langchain/mcp-adapters)`,
      );
    }
    return new DynamicStructuredTool({
      name: tool.name,
      description: tool.description,
      schema: withoutSessionId(schema) as never,
      responseFormat: 'content_and_artifact',
      func: async (args: Record<string, unknown>, _run: unknown, config?: RunnableConfig) => {
        const scope = config as (RunnableConfig & SessionScope) | undefined;
        const session = sessionIdOf(sessionId, {
          configurable: scope?.configurable,
          context: scope?.context,
        });
        // Called with its arguments and no tool call, the tool answers its raw content (not a tool
        // message): the MCP adapter's text, or its blocks.
        const { toolCall: _call, ...inner } = (config ?? {}) as RunnableConfig & { toolCall?: unknown };
        const content: unknown = await tool.invoke({ ...args, sessionId: session }, inner);
        return splitAnswer(content);
      },
    });
  });
}

/** `schema` without its `sessionId` property (and requirement). */
function withoutSessionId(schema: ObjectSchema): ObjectSchema {
  const { sessionId: _, ...properties } = schema.properties ?? {};
  return {
    ...schema,
    properties,
    ...(schema.required ? { required: schema.required.filter((r) => r !== 'sessionId') } : {}),
  };
}

/**
 * The MCP adapter's answer as the model's text and the tool message's artifact: a string is the
 * text; a block (a text block with the call's `structuredContent`, as the adapter gives it) or a
 * list of blocks gives its text blocks' text, and the artifact keeps everything else.
 */
function splitAnswer(content: unknown): [string, unknown] {
  if (typeof content === 'string') return [content, undefined];
  const blocks = (Array.isArray(content) ? content : [content]) as Array<Record<string, unknown> | null>;
  const texts = blocks.filter((b) => b?.type === 'text' && typeof b.text === 'string');
  const text = texts.map((b) => String(b?.text)).join('\n');
  const rest = blocks.filter((b) => !texts.includes(b));
  const structured = texts.flatMap((b) => (b && 'structuredContent' in b ? [b.structuredContent] : []));
  return [text, { structuredContent: structured[0], blocks: rest }];
}
