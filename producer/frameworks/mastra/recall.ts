/**
 * compactor's recall tools for a Mastra agent: `recall_search` and `recall_read` as the MCP server
 * of `compactor api` declares them (`/v1/mcp`, read through `@mastra/mcp`'s `MCPClient`), with
 * the session filled in by the agent. The server's tools take the agent's `sessionId`; the model
 * never names one (it would have to be told its id, and could name another session of the tenant),
 * so it is taken out of the schema the model sees and set, at each call, to the session the
 * {@link CompactorProcessor} keeps the run's conversation in.
 */
import { standardSchemaToJSONSchema, toStandardSchema } from '@mastra/core/schema';
import { createTool, type Tool } from '@mastra/core/tools';
import type { CompactorProcessor } from './processor.ts';

/** The two recall tools, by the names the model calls them. */
export const RECALL_TOOL_NAMES = ['recall_search', 'recall_read'] as const;

/** A recall tool's name. */
export type RecallToolName = (typeof RECALL_TOOL_NAMES)[number];

/** A Mastra tool as `MCPClient` lists it (any input and output). */
// biome-ignore lint/suspicious/noExplicitAny: the MCP client's tools are typed with any schemas
export type McpTool = Tool<any, any, any, any, any>;

/** A JSON Schema object, as the recall tools' input schemas are. */
interface ObjectSchema {
  type?: unknown;
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

/**
 * `recall_search` and `recall_read` of `tools` (the compactor server's toolset from
 * `mcp.listToolsets()`, or `mcp.listTools()` whose names are prefixed with the server's name), each
 * without `sessionId` in its input schema and calling the server with the session `compactor`
 * keeps the calling run's conversation in (the run's thread, or the processor's `sessionId`).
 * Their results are the server's, as `MCPClient` gives them.
 * @throws {Error} when `tools` lacks one of them (naming it, and the tools it has).
 */
export function recallTools(
  tools: Record<string, McpTool>,
  compactor: CompactorProcessor,
): Record<RecallToolName, McpTool> {
  const byName = (name: RecallToolName): McpTool => {
    const key = Object.keys(tools).find((k) => k === name || k.endsWith(`_${name}`));
    const tool = key === undefined ? undefined : tools[key];
    if (!tool) {
      throw new Error(
        `recallTools: no ${name} among the MCP tools (${Object.keys(tools).join(', ') || 'none'}): connect the MCPClient to compactor's /v1/mcp`,
      );
    }
    return tool;
  };
  return {
    recall_search: withSession('recall_search', byName('recall_search'), compactor),
    recall_read: withSession('recall_read', byName('recall_read'), compactor),
  };
}

function withSession(name: RecallToolName, tool: McpTool, compactor: CompactorProcessor): McpTool {
  const execute = tool.execute;
  if (!execute) throw new Error(`recallTools: the MCP tool ${name} cannot be called (it has no execute)`);
  const schema = (tool.inputSchema ? standardSchemaToJSONSchema(tool.inputSchema) : {}) as ObjectSchema;
  const { sessionId: _, ...properties } = schema.properties ?? {};
  const input: ObjectSchema = {
    ...schema,
    type: 'object',
    properties,
    ...(schema.required ? { required: schema.required.filter((r) => r !== 'sessionId') } : {}),
  };
  return createTool({
    id: name,
    description: tool.description,
    inputSchema: toStandardSchema(input as Parameters<typeof toStandardSchema>[0]),
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.toModelOutput ? { toModelOutput: tool.toModelOutput } : {}),
    execute: async (args: unknown, context) => {
      const { sessionId } = compactor.sessionOf({
        ...(context?.agent?.threadId ? { threadId: context.agent.threadId } : {}),
        ...(context?.agent?.resourceId ? { resourceId: context.agent.resourceId } : {}),
        ...(context?.requestContext ? { requestContext: context.requestContext } : {}),
      });
      return execute({ ...(args as Record<string, unknown>), sessionId }, context);
    },
  }) as McpTool;
}
