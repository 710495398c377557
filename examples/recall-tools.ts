/**
 * The two recall tools (`recall_search`, `recall_read`) for the example agents, independent of the
 * model's SDK: each agent turns {@link RecallTools.specs} into its own tool definitions and a call's
 * {@link RecallToolOutput} into its own tool result.
 *
 * Two ways to reach recall (docs/guide/recall.md):
 * - {@link connectRecallMcp}: the MCP server of `compactor api` at `/v1/mcp`, through the MCP SDK's
 *   `Client` over streamable HTTP, with a tenant API key (scope `context:read`). The tools' names,
 *   descriptions and JSON schemas are the server's own, from `listTools()`.
 * - {@link localRecall}: no API, the client library's `searchRecall` / `readRecall` on the database,
 *   the schemas from recall's zod schemas (`z.toJSONSchema`).
 *
 * Either way the model does not name the session: the agent fills in its own live session id, so
 * the `sessionId` field is taken out of the schemas the model sees.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { readRecall, searchRecall } from '../producer/index.ts';
import type { Db } from '../producer/postgres/db.ts';
import { InvalidInputError } from '../shared/contract/errors.ts';
import {
  type RecallReadResult,
  recallReadQuerySchema,
  recallSearchQuerySchema,
} from '../shared/recall/schemas.ts';

/** A recall tool as the model is told of it: a JSON Schema object of its arguments. */
export interface RecallToolSpec {
  name: string;
  description: string;
  /** JSON Schema, `type: 'object'`, without `sessionId`. */
  inputSchema: { type: 'object'; properties?: Record<string, unknown>; required?: string[] };
}

/** What a recall tool call gives the model. */
export interface RecallToolOutput {
  /** The result as JSON text (search hits; read messages with their content as stored), or the error. */
  text: string;
  /** The base64 images among the messages read, for a model that takes images in a tool result. */
  images: Array<{ data: string; mimeType: string }>;
  /** True when the call was refused (a bad argument, a session the tenant does not have). */
  isError: boolean;
}

/** The recall tools of one agent, whichever way they are reached. */
export interface RecallTools {
  specs: RecallToolSpec[];
  /**
   * Calls tool `name` with the model's `args`, in the archive of `sessionId` (the agent's live session).
   * @throws {Error} for a tool that is not a recall tool, or when the server cannot be reached.
   */
  call(name: string, args: Record<string, unknown>, sessionId: string): Promise<RecallToolOutput>;
  close(): Promise<void>;
}

/**
 * Connects to the MCP server of `compactor api` (`apiUrl` is the API's base URL; the server is at
 * `/v1/mcp`) with `apiKey`, a tenant key with scope `context:read`, and lists its tools.
 * @throws the MCP SDK's errors when the server refuses the key or cannot be reached.
 */
export async function connectRecallMcp(options: { apiUrl: string; apiKey: string }): Promise<RecallTools> {
  const client = new Client({ name: 'compactor-example-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/v1/mcp', options.apiUrl), {
    requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } },
  });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const specs = tools.map((t) => ({
    name: t.name,
    description: t.description ?? t.title ?? t.name,
    inputSchema: withoutSessionId(t.inputSchema),
  }));
  return {
    specs,
    async call(name, args, sessionId) {
      if (!specs.some((s) => s.name === name)) throw new Error(`${name}: not a recall tool`);
      const result = await client.callTool({ name, arguments: { ...args, sessionId } });
      const content = (result.content ?? []) as Array<{
        type: string;
        text?: string;
        data?: string;
        mimeType?: string;
      }>;
      return {
        text: content.flatMap((c) => (c.type === 'text' ? [c.text ?? ''] : [])).join('\n'),
        images: content.flatMap((c) =>
          c.type === 'image' ? [{ data: c.data ?? '', mimeType: c.mimeType ?? '' }] : [],
        ),
        isError: result.isError === true,
      };
    },
    close: () => client.close(),
  };
}

/**
 * The recall tools on the client library, for an agent without the API: `searchRecall` and
 * `readRecall` in `tenantId`'s archive, the schemas from shared/recall/schemas.ts.
 */
export function localRecall(db: Db, tenantId: string): RecallTools {
  const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input' }) as RecallToolSpec['inputSchema'];
  const specs: RecallToolSpec[] = [
    {
      name: 'recall_search',
      description:
        "Searches the messages that compactions removed from this session's context for a file path, a command, an identifier or words. Returns the seqs that hold every word, best first, with a snippet. Read one back with recall_read.",
      inputSchema: schema(recallSearchQuerySchema),
    },
    {
      name: 'recall_read',
      description:
        "Reads back, exactly as written, the messages of a seq range that compactions removed from this session's context (images and documents included).",
      inputSchema: schema(recallReadQuerySchema),
    },
  ];
  return {
    specs,
    async call(name, args, sessionId) {
      try {
        if (name === 'recall_search') {
          const result = await searchRecall(db, { ...args, tenantId, sessionId } as Parameters<
            typeof searchRecall
          >[1]);
          return { text: JSON.stringify(result), images: [], isError: false };
        }
        if (name === 'recall_read') {
          const result = await readRecall(db, { ...args, tenantId, sessionId } as Parameters<
            typeof readRecall
          >[1]);
          return { text: JSON.stringify(result), images: imagesOf(result), isError: false };
        }
      } catch (error) {
        if (error instanceof InvalidInputError) return { text: error.message, images: [], isError: true };
        throw error;
      }
      throw new Error(`${name}: not a recall tool`);
    },
    close: async () => {},
  };
}

/** `schema` without its `sessionId` property: the agent fills that in. */
function withoutSessionId(schema: {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
}) {
  const { sessionId: _, ...properties } = schema.properties ?? {};
  return {
    ...schema,
    properties,
    ...(schema.required ? { required: schema.required.filter((r) => r !== 'sessionId') } : {}),
  };
}

/**
 * The base64 images of an anthropic session's messages read (in a message's content, or returned by
 * a tool inside a `tool_result` block), as the MCP server gives them.
 */
function imagesOf(result: RecallReadResult): RecallToolOutput['images'] {
  const images: RecallToolOutput['images'] = [];
  const visit = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks as Array<Record<string, unknown>>) {
      const source = block?.source as { type?: unknown; media_type?: unknown; data?: unknown } | undefined;
      if (block?.type === 'image' && source?.type === 'base64' && typeof source.data === 'string') {
        images.push({ data: source.data, mimeType: String(source.media_type) });
      } else if (block?.type === 'tool_result') visit(block.content);
    }
  };
  for (const message of result.messages) visit(message.content);
  return images;
}
