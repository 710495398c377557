/**
 * The HTTP API over real HTTP (the app served by @hono/node-server on a free loopback port, called
 * with fetch), on the file's own database and BullMQ prefix: credentials and tenant scope, a session
 * created, appended to with real MessageParams and loaded back, idempotent appends (retried, reused,
 * and sent twice at once), field-named refusals, the body limit, the event, compact now with and
 * without a worker, delete, and the OpenAPI document.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { beforeAll, describe, expect, it } from 'vitest';
import { pruneAppendRequests } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { createApiApp } from '../../worker/http/api/index.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import { serveApi } from '../support/api-server.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

const ADMIN_TOKEN = 'api-admin-token-7c2e91f04b';
const TOKENS = { acme: 'api-acme-token-3f8d2a6c1e', globex: 'api-globex-token-9b4e0d7a2c' } as const;
type Who = 'admin' | keyof typeof TOKENS | 'nobody' | 'stranger';
/** The body limit of the app under test, bytes. */
const MAX_BODY = 64 * 1024;

let server: Listening;

beforeAll(async () => {
  server = await serveApi(ctx, TOKENS, { adminToken: ADMIN_TOKEN, maxBodyBytes: MAX_BODY });
});

interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  body: any;
}

/** `fetch` as `who`, with a JSON body when given one. */
async function call(
  who: Who,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (who === 'admin') headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  else if (who === 'stranger') headers.authorization = 'Bearer not-a-token-of-anyone-here';
  else if (who !== 'nobody') headers.authorization = `Bearer ${TOKENS[who]}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${server.url}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

async function liveRows(tenantId: string, sessionId: string): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from messages where tenant_id = ${tenantId} and session_id = ${sessionId}`;
  return row?.n ?? 0;
}

/** A session of the tenant with `turns` user/assistant exchanges, created through the API. */
async function createChat(who: keyof typeof TOKENS, id: string, turns = 2) {
  const messages = [
    { role: 'system', content: 'You are a careful coding assistant.', pinned: true },
    ...Array.from({ length: turns }, (_, i) => [
      { role: 'user', content: `Question ${i}: what does the parser do with an empty line?` },
      { role: 'assistant', content: [{ type: 'text', text: `Answer ${i}: it skips it.` }] },
    ]).flat(),
  ];
  const created = await call(who, 'POST', '/v1/sessions', { body: { id, contextWindow: 200_000, messages } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created;
}

/** An assistant turn that calls a tool, and the user turn that answers it. */
function toolTurn(n: number) {
  const id = `toolu_${n}_${randomUUID().slice(0, 8)}`;
  return [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me read the file.' },
        { type: 'tool_use', id, name: 'read_file', input: { path: `src/parser${n}.ts` } },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: `export function parse${n}() {}` }],
    },
  ];
}

describe('HTTP API: credentials and tenants', () => {
  it('answers 401 with a JSON error without credentials or with wrong ones', async () => {
    for (const who of ['nobody', 'stranger'] as const) {
      const answer = await call(who, 'GET', '/v1/sessions/any/context');
      expect(answer.status).toBe(401);
      expect(answer.body.error.type).toBe('authentication_error');
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it("gives another tenant's session the same 404 as an unknown one, on every route", async () => {
    const unknown = await call('acme', 'GET', '/v1/sessions/private-notes/context');
    expect(unknown.status).toBe(404);
    await createChat('globex', 'private-notes');
    const foreign = [
      await call('acme', 'GET', '/v1/sessions/private-notes/context'),
      await call('acme', 'POST', '/v1/sessions/private-notes/messages', {
        body: { messages: [{ role: 'user', content: 'hello?' }] },
      }),
      await call('acme', 'POST', '/v1/sessions/private-notes/compact'),
      await call('acme', 'DELETE', '/v1/sessions/private-notes'),
    ];
    for (const answer of foreign) {
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual(unknown.body);
    }
    expect(await liveRows('globex', 'private-notes')).toBe(5);
    expect((await call('globex', 'GET', '/v1/sessions/private-notes/context')).status).toBe(200);
  });

  it('makes the admin name the tenant, and refuses a tenant credential naming another', async () => {
    const unnamed = await call('admin', 'GET', '/v1/sessions/private-notes/context');
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.field).toBe('Compactor-Tenant');
    const named = await call('admin', 'GET', '/v1/sessions/private-notes/context', {
      headers: { 'Compactor-Tenant': 'globex' },
    });
    expect(named.status).toBe(200);
    const crossing = await call('acme', 'GET', '/v1/sessions/private-notes/context', {
      headers: { 'Compactor-Tenant': 'globex' },
    });
    expect(crossing.status).toBe(403);
    expect(crossing.body.error).toMatchObject({ type: 'permission_error', field: 'Compactor-Tenant' });
  });
});

describe('HTTP API: sessions and messages', () => {
  it('creates a session, appends tool calls and results, and loads them back as the next request', async () => {
    const created = await createChat('acme', 'round-trip', 1);
    expect(created.body).toMatchObject({ sessionId: 'round-trip', messageCount: 3 });
    const turn = [{ role: 'user', content: 'Now read the parser.' }, ...toolTurn(1)];
    const appended = await call('acme', 'POST', '/v1/sessions/round-trip/messages', {
      body: { messages: turn },
    });
    expect(appended.status).toBe(200);
    expect(appended.body).toEqual({ sessionId: 'round-trip', seqs: [3, 4, 5] });
    const context = await call('acme', 'GET', '/v1/sessions/round-trip/context');
    expect(context.status).toBe(200);
    expect(context.body.system).toEqual([{ type: 'text', text: 'You are a careful coding assistant.' }]);
    expect(context.body.sessionId).toBe('round-trip');
    expect(context.body.messages.slice(-3)).toEqual(turn);
    expect(context.body.messages[0]).toEqual({
      role: 'user',
      content: 'Question 0: what does the parser do with an empty line?',
    });
    const again = await call('acme', 'POST', '/v1/sessions', { body: { id: 'round-trip' } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'conflict_error', field: 'id' });
  });

  it('refuses a bad message with 400 naming the field, and writes nothing', async () => {
    await createChat('acme', 'refusals');
    const before = await liveRows('acme', 'refusals');
    const cases: Array<[unknown[], string]> = [
      [
        [
          { role: 'user', content: 'fine' },
          { role: 'user', content: 'fine' },
          { role: 'user', content: 7 },
        ],
        'messages[2].content',
      ],
      [
        [{ role: 'user', content: [{ type: 'tool_result', content: 'no id' }] }],
        'messages[0].content[0].tool_use_id',
      ],
      [[{ role: 'robot', content: 'beep' }], 'messages[0].role'],
      [[{ role: 'user', content: [{ text: 'no type' }] }], 'messages[0].content[0].type'],
    ];
    for (const [messages, field] of cases) {
      const answer = await call('acme', 'POST', '/v1/sessions/refusals/messages', { body: { messages } });
      expect(answer.status, field).toBe(400);
      expect(answer.body.error.type).toBe('invalid_request_error');
      expect(answer.body.error.field).toBe(field);
      expect(answer.body.error.message).toMatch(new RegExp(`^${field.replace(/[[\].]/g, '\\$&')}: `));
    }
    const notJson = await call('acme', 'POST', '/v1/sessions/refusals/messages', { body: '{"messages": [' });
    expect(notJson.status).toBe(400);
    const form = await call('acme', 'POST', '/v1/sessions/refusals/messages', {
      body: 'messages=hello',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(await liveRows('acme', 'refusals')).toBe(before);
  });

  it("declares the session's tools, and refuses bad ones with 400 naming the field", async () => {
    await createChat('acme', 'tooled');
    const tools = [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' } }];
    const put = await call('acme', 'PUT', '/v1/sessions/tooled/tools', { body: { tools } });
    expect(put.status).toBe(200);
    const stored = async () =>
      (
        await ctx.tdb.database.sql<{ tools: unknown }[]>`
          select tools from sessions where tenant_id = 'acme' and id = 'tooled'`
      )[0]?.tools;
    expect(await stored()).toEqual(tools);
    const twice = await call('acme', 'PUT', '/v1/sessions/tooled/tools', {
      body: { tools: [...tools, ...tools] },
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toMatch(/^tools\[1\]\.name: "bash" is declared twice/);
    expect(await stored()).toEqual(tools);
    const missing = await call('acme', 'PUT', '/v1/sessions/nobody-here/tools', { body: { tools } });
    expect(missing.status).toBe(404);
    const cleared = await call('acme', 'PUT', '/v1/sessions/tooled/tools', { body: { tools: null } });
    expect(cleared.status).toBe(200);
    expect(await stored()).toBeNull();
  });

  it('answers 413 with a JSON body to a body over the limit, and writes nothing', async () => {
    await createChat('acme', 'big');
    const before = await liveRows('acme', 'big');
    const image = 'A'.repeat(MAX_BODY + 1);
    const answer = await call('acme', 'POST', '/v1/sessions/big/messages', {
      body: {
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } }],
          },
        ],
      },
    });
    expect(answer.status).toBe(413);
    expect(answer.body.error.type).toBe('request_too_large');
    expect(await liveRows('acme', 'big')).toBe(before);
  });
});

describe('HTTP API: Idempotency-Key', () => {
  it('answers a retry with the first answer and appends nothing more', async () => {
    await createChat('acme', 'retry');
    const key = randomUUID();
    const body = { messages: toolTurn(2) };
    const first = await call('acme', 'POST', '/v1/sessions/retry/messages', {
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const rows = await liveRows('acme', 'retry');
    const retry = await call('acme', 'POST', '/v1/sessions/retry/messages', {
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await liveRows('acme', 'retry')).toBe(rows);
  });

  it('refuses the same key with another body with 422, writing nothing', async () => {
    await createChat('acme', 'reuse');
    const key = randomUUID();
    const headers = { 'Idempotency-Key': key };
    const first = await call('acme', 'POST', '/v1/sessions/reuse/messages', {
      body: { messages: [{ role: 'user', content: 'first' }] },
      headers,
    });
    expect(first.status).toBe(200);
    const rows = await liveRows('acme', 'reuse');
    const other = await call('acme', 'POST', '/v1/sessions/reuse/messages', {
      body: { messages: [{ role: 'user', content: 'something else' }] },
      headers,
    });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ type: 'idempotency_error', field: 'Idempotency-Key' });
    expect(await liveRows('acme', 'reuse')).toBe(rows);
    // The key belongs to the tenant: another tenant may use the same one.
    await createChat('globex', 'reuse');
    const elsewhere = await call('globex', 'POST', '/v1/sessions/reuse/messages', {
      body: { messages: [{ role: 'user', content: 'first' }] },
      headers,
    });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get('idempotent-replayed')).toBeNull();
  });

  it('appends once when identical requests arrive at the same moment', async () => {
    await createChat('acme', 'twins');
    const before = await liveRows('acme', 'twins');
    const key = randomUUID();
    const body = { messages: [...toolTurn(3), { role: 'user', content: 'and now?' }] };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call('acme', 'POST', '/v1/sessions/twins/messages', { body, headers: { 'Idempotency-Key': key } }),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(answers[0]?.body);
    }
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect(await liveRows('acme', 'twins')).toBe(before + 3);
  });
});

describe('HTTP API: expired idempotency keys', () => {
  it('forgets a key once it is older than 24 hours and pruned: the same request appends again', async () => {
    await createChat('acme', 'expired');
    const key = randomUUID();
    const request = {
      body: { messages: [{ role: 'user', content: 'once' }] },
      headers: { 'Idempotency-Key': key },
    };
    const first = await call('acme', 'POST', '/v1/sessions/expired/messages', request);
    expect(first.status).toBe(200);
    await ctx.tdb.database.sql`
      update append_requests set created_at = now() - interval '25 hours'
      where tenant_id = 'acme' and idempotency_key = ${key}`;
    expect(await pruneAppendRequests(ctx.tdb.database.db)).toBeGreaterThanOrEqual(1);
    const rows = await liveRows('acme', 'expired');
    const later = await call('acme', 'POST', '/v1/sessions/expired/messages', request);
    expect(later.status).toBe(200);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.seqs).not.toEqual(first.body.seqs);
    expect(await liveRows('acme', 'expired')).toBe(rows + 1);
  });
});

describe('HTTP API: events and compaction', () => {
  it('enqueues session.run.completed on the compaction queue', async () => {
    await createChat('acme', 'evented');
    const eventId = randomUUID();
    const event = { eventId, tenantId: 'acme', sessionId: 'evented', inputTokens: 1234 };
    const answer = await call('acme', 'POST', '/v1/events/run-completed', { body: event });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ jobId: `acme~${eventId}`, coalesced: false });
    const job = await ctx.producer.queue.getJob(`acme~${eventId}`);
    expect(job?.data).toMatchObject({ tenantId: 'acme', sessionId: 'evented', inputTokens: 1234 });
    const foreign = await call('acme', 'POST', '/v1/events/run-completed', {
      body: { ...event, eventId: randomUUID(), tenantId: 'globex' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.field).toBe('tenantId');
    const bad = await call('acme', 'POST', '/v1/events/run-completed', { body: { ...event, eventId: '42' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('eventId');
  });

  it('compact without a worker: 202 with the job id once the wait ends, at once without a wait', async () => {
    await createChat('acme', 'waiting', 10);
    const timedOut = await call('acme', 'POST', '/v1/sessions/waiting/compact?wait=300');
    expect(timedOut.status).toBe(202);
    expect(timedOut.body).toEqual({ state: 'running', jobId: expect.any(String) });
    expect(await ctx.producer.queue.getJobState(timedOut.body.jobId)).toBe('prioritized');
    const noWait = await call('acme', 'POST', '/v1/sessions/waiting/compact');
    expect(noWait.status).toBe(202);
    expect(noWait.body.state).toBe('running');
    expect(await ctx.producer.queue.getJobState(noWait.body.jobId)).toBe('prioritized');
    const tooLong = await call('acme', 'POST', '/v1/sessions/waiting/compact?wait=60001');
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.field).toBe('wait');
  });

  it('compact with a worker running: 200 with the job result and the ledger row', async () => {
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    await createChat('acme', 'compacted', 20);
    const answer = await call('acme', 'POST', '/v1/sessions/compacted/compact?wait=20000', {
      body: { strategy: { type: 'slidingWindow', maxMessages: 6 } },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.state).toBe('settled');
    expect(answer.body.result).toMatchObject({ status: 'applied', messagesBefore: 41 });
    expect(answer.body.compaction).toMatchObject({
      id: answer.body.result.compactionId,
      status: 'applied',
      trigger: 'manual',
      sessionId: 'compacted',
    });
    const context = await call('acme', 'GET', '/v1/sessions/compacted/context');
    expect(context.body.messages.length).toBeLessThan(41);
  });
});

describe('HTTP API: delete', () => {
  it('deletes the session with its idempotency keys; then it is 404', async () => {
    await createChat('acme', 'forget-me');
    await call('acme', 'POST', '/v1/sessions/forget-me/messages', {
      body: { messages: [{ role: 'user', content: 'remember this' }] },
      headers: { 'Idempotency-Key': randomUUID() },
    });
    const deleted = await call('acme', 'DELETE', '/v1/sessions/forget-me');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ sessions: ['forget-me'], messages: 6, appendRequests: 1 });
    expect((await call('acme', 'GET', '/v1/sessions/forget-me/context')).status).toBe(404);
    expect((await call('acme', 'DELETE', '/v1/sessions/forget-me')).status).toBe(404);
    expect(await liveRows('acme', 'forget-me')).toBe(0);
  });
});

describe('HTTP API: OpenAPI document', () => {
  it('is an OpenAPI 3.1 document, open to all, listing every route with its schemas', async () => {
    const answer = await call('nobody', 'GET', '/v1/openapi.json');
    expect(answer.status).toBe(200);
    const doc = answer.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBeTruthy();
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /v1/sessions',
        'POST /v1/sessions/{id}/messages',
        'POST /v1/events/run-completed',
        'GET /v1/sessions/{id}/context',
        'POST /v1/sessions/{id}/compact',
        'DELETE /v1/sessions/{id}',
        'PUT /v1/sessions/{id}/tools',
        'POST /v1/sessions/{id}/recall/search',
        'POST /v1/sessions/{id}/recall/read',
        'GET /v1',
        'GET /v1/openapi.json',
        'POST /v1/mcp',
        'POST /v1/admin/keys',
        'GET /v1/admin/keys',
        'DELETE /v1/admin/keys/{keyId}',
        'POST /v1/admin/keys/{keyId}/rotate',
      ].sort(),
    );
    const append = doc.paths['/v1/sessions/{id}/messages'].post;
    expect(append.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'path:id',
      'header:Compactor-Tenant',
      'header:Idempotency-Key',
    ]);
    expect(Object.keys(append.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '413', '422']),
    );
    // The request schema is the one the contract publishes.
    const ref = append.requestBody.content['application/json'].schema.$ref as string;
    const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')];
    const published = JSON.parse(
      readFileSync(
        new URL('../../shared/contract/schemas/append-request.schema.json', import.meta.url),
        'utf8',
      ),
    );
    expect(schema.properties).toEqual(published.properties);
    const event = doc.paths['/v1/events/run-completed'].post.requestBody.content['application/json'].schema;
    expect(doc.components.schemas[event.$ref.replace('#/components/schemas/', '')].required).toEqual([
      'eventId',
      'tenantId',
      'sessionId',
    ]);
  });

  it('writes every pattern as a regular expression a client can check ids with', async () => {
    const doc = (await call('nobody', 'GET', '/v1/openapi.json')).body;
    const patterns: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (typeof node === 'object' && node !== null)
        for (const [key, value] of Object.entries(node)) {
          if (key === 'pattern' && typeof value === 'string') patterns.push(value);
          else walk(value);
        }
    };
    walk(doc);
    expect(patterns.length).toBeGreaterThan(0);
    for (const pattern of patterns) expect(() => new RegExp(pattern, 'u')).not.toThrow();
    // A session id: both of an id's patterns, each accepting a plain id and refusing a space.
    const id = doc.paths['/v1/sessions/{id}/messages'].post.parameters[0].schema;
    expect(id.allOf).toHaveLength(2);
    for (const { pattern } of id.allOf as Array<{ pattern: string }>) {
      expect(new RegExp(pattern, 'u').test('session-1')).toBe(true);
    }
    expect(id.allOf.some(({ pattern }: { pattern: string }) => !new RegExp(pattern, 'u').test('a b'))).toBe(
      true,
    );
  });

  it('serves the same routes when mounted under a prefix of another Hono app', async () => {
    await createChat('acme', 'mounted');
    const parent = new Hono();
    parent.get('/', (c) => c.text('the host app'));
    parent.route(
      '/compactor',
      createApiApp(
        { db: ctx.tdb.database.db, producer: ctx.producer },
        {
          credentials: {
            adminToken: undefined,
            adminUser: undefined,
            adminPassword: undefined,
            tenantTokens: [{ tenantId: 'acme', token: TOKENS.acme }],
          },
          basePath: '/compactor',
        },
      ),
    );
    const mounted = await listen(parent, 0, '127.0.0.1');
    try {
      const context = await fetch(`${mounted.url}/compactor/v1/sessions/mounted/context`, {
        headers: { authorization: `Bearer ${TOKENS.acme}` },
      });
      expect(context.status).toBe(200);
      expect(((await context.json()) as { sessionId: string }).sessionId).toBe('mounted');
      expect((await fetch(`${mounted.url}/`)).status).toBe(200);
      const doc = (await (await fetch(`${mounted.url}/compactor/v1/openapi.json`)).json()) as {
        servers: Array<{ url: string }>;
      };
      expect(doc.servers).toEqual([{ url: '/compactor' }]);
      // The index names paths that resolve where it was read.
      const index = (await (await fetch(`${mounted.url}/compactor/v1`)).json()) as Record<string, unknown>;
      expect(index).toMatchObject({ openapi: '/compactor/v1/openapi.json', mcp: '/compactor/v1/mcp' });
    } finally {
      await mounted.close();
    }
  });
});
