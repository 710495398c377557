/**
 * Over the HTTP API, what the providers would refuse is refused before anything is stored: an
 * append holding one such message (after valid ones) answers 400 naming the field, in each session
 * format, and the session's rows stay as they were. A recall search for text Postgres cannot hold
 * (a NUL) is a 400 on the route and a tool error over MCP, naming the field. And a database error
 * that does reach a 500 is logged as its cause: the captured log line holds neither the statement
 * nor the tenant's text that was one of its parameters.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { executePrepared } from '../../producer/postgres/db.ts';
import { sql } from '../../producer/postgres/orm.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { createKey } from '../../worker/postgres/api-keys.ts';
import { createLogger } from '../../worker/runtime/logger.ts';
import { postJson } from '../support/answers.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration();
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let server: Listening;
let key = '';
/** The JSON lines the API logged. */
const logged: string[] = [];

beforeAll(async () => {
  const logger = createLogger('info', 'compactor', { write: (line: string) => logged.push(line) });
  server = await startKeyedApi(ctx, { logger });
  key = (await createKey(ctx.tdb.database.db, { tenantId: 'acme', name: 'agents' })).secret;
  const sessions = [
    { id: 'claude', format: 'anthropic', messages: [{ role: 'user', content: 'Run the tests.' }] },
    { id: 'chat', format: 'openai-chat', messages: [{ role: 'user', content: 'Run the tests.' }] },
    { id: 'responses', format: 'openai-responses', messages: [{ role: 'user', content: 'Run the tests.' }] },
  ];
  for (const session of sessions) expect((await post('/v1/sessions', session)).status).toBe(201);
});

/** A POST of `body` to the API with the tenant's key. */
function post(path: string, body: unknown) {
  return postJson(server.url, key, path, body);
}

/** The rows a session holds. */
async function rows(sessionId: string): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from messages where tenant_id = 'acme' and session_id = ${sessionId}`;
  return row?.n ?? -1;
}

/** Appends `[valid, bad]` to `sessionId`; expects a 400 naming `field` and no row written. */
async function refused(sessionId: string, valid: unknown, bad: unknown, field: string, says: RegExp) {
  const before = await rows(sessionId);
  const answer = await post(`/v1/sessions/${sessionId}/messages`, { messages: [valid, bad] });
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.error.message).toContain(`${field}: `);
  expect(answer.body.error.message).toMatch(says);
  expect(await rows(sessionId)).toBe(before);
}

describe('appends the provider would refuse', () => {
  const toolUse = {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'run_tests', input: {} }],
  };
  const toolResult = (content: unknown) => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }],
  });

  it('anthropic: a tool result that is a number or an object, an HTML "image", a signed thinking block from the user', async () => {
    await refused(
      'claude',
      toolUse,
      toolResult(5),
      'messages[1].content[0].content',
      /expected a string or a list/,
    );
    await refused(
      'claude',
      toolUse,
      toolResult({ text: 'x' }),
      'messages[1].content[0].content',
      /got an object/,
    );
    const html = { type: 'image', source: { type: 'base64', media_type: 'text/html', data: 'PGI+aGk8L2I+' } };
    await refused(
      'claude',
      toolUse,
      { role: 'user', content: [{ type: 'text', text: 'look' }, html] },
      'messages[1].content[1].source.media_type',
      /image\/jpeg, image\/png, image\/gif, image\/webp/,
    );
    await refused(
      'claude',
      toolUse,
      toolResult([html]),
      'messages[1].content[0].content[0].source.media_type',
      /image\/png/,
    );
    const thinking = { type: 'thinking', thinking: 'plan', signature: 'EuYBCkQYAiJA' };
    await refused(
      'claude',
      toolUse,
      { role: 'user', content: [thinking] },
      'messages[1].content[0].type',
      /belongs in an assistant message/,
    );
  });

  it('anthropic: what the provider takes is stored, an empty tool result and an image included', async () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
    const before = await rows('claude');
    const answer = await post('/v1/sessions/claude/messages', {
      messages: [
        toolUse,
        toolResult([]),
        { role: 'user', content: [image, { type: 'text', text: 'and this' }] },
      ],
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await rows('claude')).toBe(before + 3);
  });

  it('openai-chat: an image data URL that is no image, a file part with no file', async () => {
    const valid = { role: 'assistant', content: 'Running them.' };
    await refused(
      'chat',
      valid,
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:text/html;base64,PGI+' } }] },
      'messages[1].content[0].image_url.url',
      /"text\/html" is no image OpenAI takes/,
    );
    await refused(
      'chat',
      valid,
      { role: 'user', content: [{ type: 'file', file: { filename: 'report.pdf' } }] },
      'messages[1].content[0].file',
      /needs file_id/,
    );
  });

  it('openai-responses: a call output part of a wrong shape, an image data URL that is no image', async () => {
    const call = { type: 'function_call', call_id: 'call_1', name: 'run_tests', arguments: '{}' };
    await refused(
      'responses',
      call,
      { type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_text', text: 5 }] },
      'messages[1].output[0].text',
      /expected string/,
    );
    await refused(
      'responses',
      call,
      { role: 'user', content: [{ type: 'input_image', image_url: 'data:application/pdf;base64,JVBE' }] },
      'messages[1].content[0].image_url',
      /"application\/pdf"/,
    );
  });
});

describe('a recall search for text Postgres cannot hold', () => {
  it('is a 400 naming the field on the route', async () => {
    const answer = await post('/v1/sessions/claude/recall/search', { query: 'a\u0000b' });
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/query: contains a NUL character \(U\+0000\) at character 1/);
    const surrogate = await post('/v1/sessions/claude/recall/search', { query: 'a\ud800b' });
    expect(surrogate.status).toBe(400);
    expect(surrogate.body.error.message).toMatch(/query: contains an unpaired surrogate \(U\+D800\)/);
  });

  it('is a tool error naming the field over MCP', async () => {
    const client = new Client({ name: 'refusals-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/v1/mcp', server.url), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    ctx.onTeardown(() => client.close());
    const result = await client.callTool({
      name: 'recall_search',
      arguments: { sessionId: 'claude', query: 'a\u0000b' },
    });
    expect(result.isError).toBe(true);
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
    expect(text).toMatch(/query/);
    expect(text).toMatch(/NUL character/);
  });
});

describe('a database error in a request', () => {
  it('is logged as its cause, without the statement or the tenant text among its parameters', async () => {
    const secret = 'kubeconfig-of-acme-prod-7f3a';
    await ctx.tdb.database.sql`alter table archived_messages rename to archived_messages_away`;
    let answer: Awaited<ReturnType<typeof post>>;
    try {
      answer = await post('/v1/sessions/claude/recall/search', { query: secret });
    } finally {
      await ctx.tdb.database.sql`alter table archived_messages_away rename to archived_messages`;
    }
    expect(answer.status).toBe(500);
    const line = logged.find((l) => l.includes('"api request failed"'));
    expect(line).toBeDefined();
    expect(JSON.parse(line as string).err).toMatch(/^relation "archived_messages" does not exist: /);
    expect(line).not.toContain(secret);
    expect(line).not.toMatch(/select|params|plainto_tsquery/i);
    expect(logged.join('\n')).not.toContain(secret);
  });

  it('is logged without the value Postgres quotes from a parameter, whoever logs it', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', 'compactor', { write: (line: string) => lines.push(line) });
    const secret = 'acme-customer-4242';
    const failed = await executePrepared(ctx.tdb.database.db, sql`select ${secret}::int as n`).catch(
      (e) => e,
    );
    expect(String(failed.message)).toContain(secret);
    logger.error({ err: failed }, 'query failed');
    logger.warn({ err: failed.message }, 'query failed, as a message');
    expect(lines.map((l) => JSON.parse(l).err)).toEqual([
      'invalid input syntax for type integer: "…"',
      'a database statement failed (its text and parameters are not logged)',
    ]);
    expect(lines.join('\n')).not.toContain(secret);
  });
});
