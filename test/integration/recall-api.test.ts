/**
 * Recall over the API: the two HTTP routes and the MCP server beside them, through a real MCP client
 * (the SDK's `Client` over streamable HTTP), each behind the API's keys: a tenant's key finds its
 * own archive only, and a key without `context:read` finds nothing at all.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { postJson } from '../support/answers.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration();
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let server: Listening;
const keys: Record<string, string> = {};

const history: MessageParam[] = [
  { role: 'user', content: 'Deploy failed again; the config lives in deploy/helm/values-prod.yaml' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Screenshot of the failing dashboard:' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    ],
  },
  ...Array.from(
    { length: 24 },
    (_, i): MessageParam => ({
      role: i % 2 === 0 ? 'assistant' : 'user',
      content: `step ${i}: checking the rollout status of the canary`,
    }),
  ),
];

beforeAll(async () => {
  const db = ctx.tdb.database.db;
  server = await startKeyedApi(ctx);
  keys.acme = (await createKey(db, { tenantId: 'acme', name: 'acme agents' })).secret;
  keys.globex = (await createKey(db, { tenantId: 'globex', name: 'globex agents' })).secret;
  keys.writer = (
    await createKey(db, { tenantId: 'acme', name: 'writer', scopes: ['messages:write'] })
  ).secret;
  await createSession(db, {
    tenantId: 'acme',
    sessionId: 'deploy',
    messages: history.map((message, seq) => ({ message, seq })),
  });
  const outcome = await ctx.compactInProcess({
    tenantId: 'acme',
    sessionId: 'deploy',
    strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 2000 },
  });
  expect(outcome.row?.status).toBe('applied');
  await createSession(db, {
    tenantId: 'globex',
    sessionId: 'deploy',
    messages: [{ seq: 0, message: { role: 'user', content: 'hello' } }],
  });
});

/** A POST of `body` to the API with `key`. */
function post(key: string, path: string, body: unknown) {
  return postJson(server.url, key, path, body);
}

/** A connected MCP client authenticating with `key`. */
async function mcpClient(key: string) {
  const client = new Client({ name: 'recall-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/v1/mcp', server.url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  ctx.onTeardown(() => client.close());
  return client;
}

describe('recall over HTTP', () => {
  it('searches and reads the archive, exactly', async () => {
    const search = await post(keys.acme as string, '/v1/sessions/deploy/recall/search', {
      query: 'values-prod.yaml',
    });
    expect(search.status).toBe(200);
    expect(search.body.hits[0]).toMatchObject({ sessionId: 'deploy', seq: 0, kind: 'message' });
    const read = await post(keys.acme as string, '/v1/sessions/deploy/recall/read', { fromSeq: 0, toSeq: 1 });
    expect(read.status).toBe(200);
    expect(read.body.messages.map((m: { content: unknown }) => m.content)).toEqual([
      history[0]?.content,
      history[1]?.content,
    ]);
  });

  it('refuses a bad body naming the field, another tenant finds nothing, a key without context:read is refused', async () => {
    const bad = await post(keys.acme as string, '/v1/sessions/deploy/recall/read', { fromSeq: 3, toSeq: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/toSeq: must not be below fromSeq/);
    const other = await post(keys.globex as string, '/v1/sessions/deploy/recall/search', {
      query: 'values-prod.yaml',
    });
    expect(other).toEqual({ status: 200, body: { sessionId: 'deploy', hits: [] } });
    const missing = await post(keys.globex as string, '/v1/sessions/nowhere/recall/search', { query: 'x' });
    expect(missing.status).toBe(404);
    const writer = await post(keys.writer as string, '/v1/sessions/deploy/recall/search', {
      query: 'values-prod.yaml',
    });
    expect(writer.status).toBe(403);
  });
});

describe('recall over MCP', () => {
  it('lists both tools with their schemas, finds a path that left and reads it back with its image', async () => {
    const client = await mcpClient(keys.acme as string);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['recall_read', 'recall_search']);
    const search = tools.find((t) => t.name === 'recall_search');
    expect(search?.inputSchema.required).toEqual(expect.arrayContaining(['query', 'sessionId']));
    expect(search?.outputSchema?.properties).toHaveProperty('hits');

    const found = await client.callTool({
      name: 'recall_search',
      arguments: { sessionId: 'deploy', query: 'deploy/helm/values-prod.yaml' },
    });
    expect(found.isError).toBeFalsy();
    const hits = (found.structuredContent as { hits: Array<{ seq: number }> }).hits;
    expect(hits[0]?.seq).toBe(0);

    const read = await client.callTool({
      name: 'recall_read',
      arguments: { sessionId: 'deploy', fromSeq: 0, toSeq: 1 },
    });
    const messages = (read.structuredContent as { messages: Array<{ content: unknown }> }).messages;
    expect(JSON.stringify(messages.map((m) => m.content))).toBe(
      JSON.stringify([history[0]?.content, history[1]?.content]),
    );
    expect(read.content).toContainEqual({ type: 'image', data: PNG, mimeType: 'image/png' });
  });

  it("gives another tenant's key nothing, and names a bad argument", async () => {
    const client = await mcpClient(keys.globex as string);
    const found = await client.callTool({
      name: 'recall_search',
      arguments: { sessionId: 'deploy', query: 'values-prod.yaml' },
    });
    expect((found.structuredContent as { hits: unknown[] }).hits).toEqual([]);
    const missing = await client.callTool({
      name: 'recall_read',
      arguments: { sessionId: 'nowhere', fromSeq: 0, toSeq: 1 },
    });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toContain('session \\"nowhere\\" not found');
    const bad = await client.callTool({
      name: 'recall_read',
      arguments: { sessionId: 'deploy', fromSeq: 5, toSeq: 1 },
    });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('must not be below fromSeq');
  });

  it('refuses a request without a key', async () => {
    const response = await fetch(new URL('/v1/mcp', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
  });
});
