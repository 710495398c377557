/**
 * Malformed and hostile requests against the HTTP API over real HTTP, generated as data: bad JSON,
 * nesting thousands deep, numbers JSON cannot hold, wrong types, ids with control characters, ANSI
 * escapes, bidi overrides and `..`, duplicate tool_use ids (in the request, live in the session),
 * thinking without its signature, NUL and unpaired surrogates anywhere in a message,
 * oversized fields and bodies, wrong content types, events for sessions the tenant does not have.
 * Each one must be answered 4xx with an error that names the field or the limit, never 5xx, and
 * must write nothing: the row counts of every table a request can write, and the queue's jobs, are
 * the same after it as before.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Listening } from '../../worker/http/ops.ts';
import { answerOf } from '../support/answers.ts';
import { serveApi } from '../support/api-server.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

const TOKENS = { acme: 'security-acme-token-5d1f', globex: 'security-globex-token-8e2a' } as const;
/** The body limit of the app under test, bytes. */
const MAX_BODY = 256 * 1024;
/** The session the cases aim at: acme's, compacted once, with a live tool call. */
const SESSION = 'target';
const LIVE_TOOL_ID = 'toolu_live_1';
const ARCHIVED_TOOL_ID = 'toolu_archived_1';

let server: Listening;

/** One malformed request and what its answer must name. */
interface Case {
  name: string;
  method: string;
  path: string;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** As whom: acme's token by default. */
  as?: 'acme' | 'nobody';
  /** The exact status, when one is required (otherwise any 4xx). */
  status?: number;
  /** The `error.field` expected, or a pattern of it. */
  field?: string | RegExp;
  /** A pattern the message must match (the limit or the rule named). */
  message?: RegExp;
}

// ---------------------------------------------------------------------------------------------
// The cases

const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }] });
const append = (...messages: unknown[]) => ({ messages });
const toolUse = (id: string, input: unknown = { path: 'a.ts' }) => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'read_file', input }],
});
const event = (over: Record<string, unknown> = {}) => ({
  eventId: 'evt-1',
  tenantId: 'acme',
  sessionId: SESSION,
  ...over,
});
/** `depth` arrays inside each other, as text: `[[[...]]]`. */
const nestedText = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** An object `depth` levels deep: `{ a: { a: ... } }`, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const APPEND = `/v1/sessions/${SESSION}/messages`;
const BODY_ROUTES: Array<[string, string, unknown]> = [
  ['POST', '/v1/sessions', { id: 'fresh', messages: [text('hi')] }],
  ['POST', APPEND, append(text('hi'))],
  ['POST', '/v1/events/run-completed', event()],
  [
    'PUT',
    `/v1/sessions/${SESSION}/tools`,
    { tools: [{ name: 'read_file', input_schema: { type: 'object' } }] },
  ],
  ['POST', `/v1/sessions/${SESSION}/compact`, { strategy: { type: 'slidingWindow', maxMessages: 2 } }],
];

const BAD_JSON = ['{', '{"messages":}', 'nul', '[1,]', "{'id':'x'}", '{"id":"x"} trailing', '"unterminated'];

const BAD_IDS: Array<[string, string]> = [
  ['an ANSI escape', 'run\u001b[31mred'],
  ['a bidi override', 'run\u202Egnp.exe'],
  ['a newline', 'run\nforged'],
  ['a NUL', 'run\u0000x'],
  ['a zero-width space', 'run\u200Bx'],
  ['a lone surrogate', 'run\uD800x'],
  ['a .. segment', '../other'],
  ['a . segment', 'a/./b'],
  ['a space', 'run 1'],
  ['201 characters', 'x'.repeat(201)],
];

/** Messages each wrong in one way, and the field the answer must name. */
const BAD_MESSAGES: Array<[string, unknown, string | RegExp, RegExp?]> = [
  ['NUL in a text block', text('a\u0000b'), 'messages[0].content[0].text', /NUL.*U\+0000/],
  ['NUL in string content', { role: 'user', content: 'a\u0000b' }, 'messages[0].content', /NUL/],
  ['NUL in a system message', { role: 'system', content: 'be\u0000good' }, 'messages[0].content', /NUL/],
  [
    'NUL in a tool input value',
    toolUse('toolu_nul_v', { path: 'a\u0000.ts' }),
    'messages[0].content[0].input.path',
    /NUL/,
  ],
  [
    'NUL in a tool input key',
    toolUse('toolu_nul_k', { 'pa\u0000th': 'a.ts' }),
    'messages[0].content[0].input',
    /key/,
  ],
  [
    'NUL in a tool result',
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: LIVE_TOOL_ID, content: 'out\u0000put' }] },
    'messages[0].content[0].content',
    /NUL/,
  ],
  [
    'NUL in a nested tool result block',
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: LIVE_TOOL_ID, content: [{ type: 'text', text: '\u0000' }] },
      ],
    },
    'messages[0].content[0].content[0].text',
    /NUL/,
  ],
  [
    'a lone high surrogate in text',
    text('emoji \uD83D cut'),
    'messages[0].content[0].text',
    /unpaired surrogate.*U\+D83D/,
  ],
  ['a lone low surrogate in text', text('\uDE00 alone'), 'messages[0].content[0].text', /unpaired surrogate/],
  ['a lone surrogate at the end', text('cut at the end \uD83D'), 'messages[0].content[0].text', /unpaired/],
  [
    'a lone surrogate in a thinking block',
    {
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 'hm \uDC00', signature: 'sig' }],
    },
    'messages[0].content[0].thinking',
    /unpaired/,
  ],
  [
    'a lone surrogate in a tool input',
    toolUse('toolu_sur', { q: '\uD800' }),
    'messages[0].content[0].input.q',
    /unpaired/,
  ],
  [
    'a thinking block without a signature',
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me think.' },
        { type: 'text', text: 'ok' },
      ],
    },
    'messages[0].content[0].signature',
    /signature/,
  ],
  [
    'a thinking block with an empty signature',
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'Let me think.', signature: '' }] },
    'messages[0].content[0].signature',
    /signature/,
  ],
  [
    'a thinking block with a numeric signature',
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'Let me think.', signature: 42 }] },
    'messages[0].content[0].signature',
    /signature/,
  ],
  [
    'a redacted_thinking block without data',
    { role: 'assistant', content: [{ type: 'redacted_thinking' }, { type: 'text', text: 'ok' }] },
    'messages[0].content[0].data',
    /data/,
  ],
  [
    'a thinking block without its text',
    { role: 'assistant', content: [{ type: 'thinking', signature: 'sig' }] },
    'messages[0].content[0].thinking',
  ],
  ['a tool_use nested just past the limit', toolUse('toolu_deep2', nested(130)), 'body', /128 levels/],
  [
    'a tool_use without input',
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_x', name: 'f' }] },
    'messages[0].content[0].input',
  ],
  ['a tool_use with a string input', toolUse('toolu_s', 'rm -rf /'), 'messages[0].content[0].input'],
  [
    'a tool_use without an id',
    { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] },
    'messages[0].content[0].id',
  ],
  [
    'a tool_result without tool_use_id',
    { role: 'user', content: [{ type: 'tool_result', content: 'x' }] },
    'messages[0].content[0].tool_use_id',
  ],
  ['a text block without text', { role: 'user', content: [{ type: 'text' }] }, 'messages[0].content[0].text'],
  [
    'a text block with numeric text',
    { role: 'user', content: [{ type: 'text', text: 5 }] },
    'messages[0].content[0].text',
  ],
  ['a block without a type', { role: 'user', content: [{ text: 'x' }] }, 'messages[0].content[0].type'],
  [
    'a block with an empty type',
    { role: 'user', content: [{ type: '', text: 'x' }] },
    'messages[0].content[0].type',
  ],
  ['a block that is a string', { role: 'user', content: ['hello'] }, /^messages\[0\]\.content/],
  ['a block that is null', { role: 'user', content: [null] }, /^messages\[0\]\.content/],
  [
    'an image without a source',
    { role: 'user', content: [{ type: 'image' }] },
    'messages[0].content[0].source',
  ],
  ['an unknown role', { role: 'tool', content: 'x' }, 'messages[0].role'],
  ['a numeric role', { role: 5, content: 'x' }, 'messages[0].role'],
  ['no role', { content: 'x' }, 'messages[0].role'],
  ['numeric content', { role: 'user', content: 5 }, 'messages[0].content'],
  ['object content', { role: 'user', content: { type: 'text', text: 'x' } }, 'messages[0].content'],
  ['no content', { role: 'user' }, 'messages[0].content'],
  ['pinned as a string', { role: 'user', content: 'x', pinned: 'yes' }, 'messages[0].pinned'],
  ['an extra field', { role: 'user', content: 'x', name: 'bob' }, /^messages\[0\]/],
  ['a message that is a string', 'hello', 'messages[0]'],
  ['a message that is null', null, 'messages[0]'],
];

/** Requests that carry two tool calls of one id, or one the session already holds. */
const DUPLICATE_TOOL_IDS: Case[] = [
  {
    name: 'one tool_use id twice in one message',
    method: 'POST',
    path: APPEND,
    body: append({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'toolu_twice', name: 'a', input: {} },
        { type: 'tool_use', id: 'toolu_twice', name: 'b', input: {} },
      ],
    }),
    status: 400,
    field: 'messages[0].content[1].id',
    message: /already used by messages\[0\]\.content\[0\]\.id/,
  },
  {
    name: 'one tool_use id in two messages of one request',
    method: 'POST',
    path: APPEND,
    body: append(toolUse('toolu_again'), text('and again'), toolUse('toolu_again')),
    status: 400,
    field: 'messages[2].content[0].id',
  },
  {
    name: 'a tool_use id the session holds live',
    method: 'POST',
    path: APPEND,
    body: append(text('next'), toolUse(LIVE_TOOL_ID)),
    status: 409,
    field: 'messages[1].content[0].id',
    message: /already used in session/,
  },
  {
    name: 'one tool_use id twice in a new session',
    method: 'POST',
    path: '/v1/sessions',
    body: { id: 'dup-session', messages: [toolUse('toolu_d'), toolUse('toolu_d')] },
    status: 400,
    field: 'messages[1].content[0].id',
  },
];

function cases(): Case[] {
  const all: Case[] = [];
  for (const [method, path] of BODY_ROUTES) {
    for (const body of BAD_JSON)
      all.push({
        name: `${method} ${path}: ${JSON.stringify(body)}`,
        method,
        path,
        body,
        status: 400,
        field: 'body',
      });
    all.push({
      name: `${method} ${path}: 5,000 nested arrays`,
      method,
      path,
      body: nestedText(5_000),
      status: 400,
      field: 'body',
      message: /deeper than 128 levels/,
    });
    all.push({
      name: `${method} ${path}: 40,000 nested objects, as text`,
      method,
      path,
      body: `${'{"a":'.repeat(40_000)}1${'}'.repeat(40_000)}`,
      status: 400,
      field: 'body',
      message: /128 levels/,
    });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])
      all.push({
        name: `${method} ${path}: as ${type}`,
        method,
        path,
        body: '{}',
        headers: { 'content-type': type },
        status: 415,
      });
    all.push({
      name: `${method} ${path}: larger than the limit`,
      method,
      path,
      body: `{"x":"${'a'.repeat(MAX_BODY)}"}`,
      status: 413,
      message: /bytes/,
    });
    all.push({
      name: `${method} ${path}: without credentials`,
      method,
      path,
      body: '{}',
      as: 'nobody',
      status: 401,
    });
  }
  for (const [what, id] of BAD_IDS) {
    // A lone surrogate has no UTF-8 form: sent as the bytes a careless encoder would write (WTF-8).
    const encoded = encodeURIComponent(id.replace(/\uD800/g, '\u0001')).replace('%01', '%ED%A0%80');
    all.push({
      name: `create: a session id with ${what}`,
      method: 'POST',
      path: '/v1/sessions',
      body: { id },
      status: 400,
      field: 'id',
    });
    for (const suffix of ['/messages', '/context', '/compact', ''])
      all.push({
        name: `${suffix || 'delete'}: a path id with ${what}`,
        method: suffix === '/context' ? 'GET' : suffix === '' ? 'DELETE' : 'POST',
        path: `/v1/sessions/${encoded}${suffix}`,
        ...(suffix === '/messages' ? { body: append(text('x')) } : {}),
        // An id that cannot be decoded (no UTF-8 form) stays encoded, and no session has it.
        ...(id.includes('\uD800') ? { status: 404 } : { status: 400, field: 'id' }),
      });
    for (const field of ['sessionId', 'eventId'])
      all.push({
        name: `event: ${field} with ${what}`,
        method: 'POST',
        path: '/v1/events/run-completed',
        body: event({ [field]: id }),
        status: 400,
        field,
      });
  }
  for (const [what, message, field, pattern] of BAD_MESSAGES) {
    all.push({
      name: `append: ${what}`,
      method: 'POST',
      path: APPEND,
      body: append(message),
      status: 400,
      field,
      ...(pattern ? { message: pattern } : {}),
    });
  }
  for (const [what, message, field] of BAD_MESSAGES.slice(0, 12)) {
    all.push({
      name: `create: ${what}`,
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 'fresh', messages: [message] },
      status: 400,
      field,
    });
  }
  all.push(...DUPLICATE_TOOL_IDS);
  all.push({
    name: 'append: a tool_use input nested 5,000 deep',
    method: 'POST',
    path: APPEND,
    body: `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_deep","name":"f","input":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}]}]}`,
    status: 400,
    field: 'body',
    message: /deeper than 128 levels/,
  });
  all.push(
    // Numbers JSON cannot hold, and wrong types of the other fields.
    {
      name: 'create: contextWindow 1e400',
      method: 'POST',
      path: '/v1/sessions',
      body: '{"id":"fresh","contextWindow":1e400}',
      status: 400,
      field: 'contextWindow',
    },
    {
      name: 'create: contextWindow 1.5',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 'fresh', contextWindow: 1.5 },
      status: 400,
      field: 'contextWindow',
    },
    {
      name: 'create: contextWindow -1',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 'fresh', contextWindow: -1 },
      status: 400,
      field: 'contextWindow',
    },
    {
      name: 'create: id a number',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 7 },
      status: 400,
      field: 'id',
    },
    {
      name: 'create: agentId an array',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 'fresh', agentId: [] },
      status: 400,
      field: 'agentId',
    },
    {
      name: 'create: messages an object',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 'fresh', messages: {} },
      status: 400,
      field: 'messages',
    },
    {
      name: 'create: an unknown field',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: 'fresh', owner: 'root' },
      status: 400,
    },
    { name: 'create: the body an array', method: 'POST', path: '/v1/sessions', body: [], status: 400 },
    {
      name: 'create: an existing session',
      method: 'POST',
      path: '/v1/sessions',
      body: { id: SESSION },
      status: 409,
      field: 'id',
    },
    {
      name: 'append: contextVersion 1e400',
      method: 'POST',
      path: APPEND,
      body: `{"messages":[{"role":"user","content":"x"}],"contextVersion":1e400}`,
      status: 400,
      field: 'contextVersion',
    },
    {
      name: 'append: contextVersion a string',
      method: 'POST',
      path: APPEND,
      body: { ...append(text('x')), contextVersion: '3' },
      status: 400,
      field: 'contextVersion',
    },
    {
      name: 'append: no messages',
      method: 'POST',
      path: APPEND,
      body: { messages: [] },
      status: 400,
      field: 'messages',
    },
    {
      name: 'append: messages null',
      method: 'POST',
      path: APPEND,
      body: { messages: null },
      status: 400,
      field: 'messages',
    },
    { name: 'append: an empty body', method: 'POST', path: APPEND, body: '   ', status: 400, field: 'body' },
    {
      name: 'append: an idempotency key of 256 characters',
      method: 'POST',
      path: APPEND,
      body: append(text('x')),
      headers: { 'idempotency-key': 'k'.repeat(256) },
      status: 400,
      field: 'Idempotency-Key',
    },
    {
      name: 'append: to an unknown session',
      method: 'POST',
      path: '/v1/sessions/nobody-home/messages',
      body: append(text('x')),
      status: 404,
    },
    {
      name: "append: to another tenant's session",
      method: 'POST',
      path: '/v1/sessions/globex-own/messages',
      body: append(text('x')),
      status: 404,
    },
    {
      name: 'event: an unknown session',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ sessionId: 'nobody-home' }),
      status: 404,
      message: /nobody-home/,
    },
    {
      name: "event: another tenant's session",
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ sessionId: 'globex-own' }),
      status: 404,
    },
    {
      name: 'event: another tenant',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ tenantId: 'globex', sessionId: 'globex-own' }),
      status: 403,
      field: 'tenantId',
    },
    {
      name: 'event: inputTokens 1e400',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: '{"eventId":"e","tenantId":"acme","sessionId":"target","inputTokens":1e400}',
      status: 400,
      field: 'inputTokens',
    },
    {
      name: 'event: inputTokens negative',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ inputTokens: -1 }),
      status: 400,
      field: 'inputTokens',
    },
    {
      name: 'event: an integer event id',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ eventId: '42' }),
      status: 400,
      field: 'eventId',
    },
    {
      name: 'event: a strategy of an unknown type',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ strategy: { type: 'everything' } }),
      status: 400,
    },
    {
      name: 'event: __proto__ pollution',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: '{"eventId":"e","tenantId":"acme","sessionId":"target","__proto__":{"admin":true}}',
      status: 400,
    },
    {
      name: 'event: no session id',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: { eventId: 'e', tenantId: 'acme' },
      status: 400,
      field: 'sessionId',
    },
    {
      name: 'tools: not a list',
      method: 'PUT',
      path: `/v1/sessions/${SESSION}/tools`,
      body: { tools: 'read_file' },
      status: 400,
      field: 'tools',
    },
    {
      name: 'tools: NUL in a description',
      method: 'PUT',
      path: `/v1/sessions/${SESSION}/tools`,
      body: { tools: [{ name: 'f', description: 'a\u0000b', input_schema: {} }] },
      status: 400,
      field: 'tools[0].description',
      message: /NUL/,
    },
    {
      name: 'tools: a lone surrogate in a schema',
      method: 'PUT',
      path: `/v1/sessions/${SESSION}/tools`,
      body: { tools: [{ name: 'f', input_schema: { title: '\uD800' } }] },
      status: 400,
      field: 'tools[0].input_schema.title',
    },
    {
      name: 'tools: a name twice',
      method: 'PUT',
      path: `/v1/sessions/${SESSION}/tools`,
      body: { tools: [{ name: 'f' }, { name: 'f' }] },
      status: 400,
      field: 'tools[1].name',
    },
    {
      name: 'tools: an unknown session',
      method: 'PUT',
      path: '/v1/sessions/nobody-home/tools',
      body: { tools: null },
      status: 404,
    },
    {
      name: 'compact: wait 1e400',
      method: 'POST',
      path: `/v1/sessions/${SESSION}/compact?wait=1e400`,
      status: 400,
      field: 'wait',
    },
    {
      name: 'compact: wait negative',
      method: 'POST',
      path: `/v1/sessions/${SESSION}/compact?wait=-5`,
      status: 400,
      field: 'wait',
    },
    {
      name: 'compact: wait words',
      method: 'POST',
      path: `/v1/sessions/${SESSION}/compact?wait=soon`,
      status: 400,
      field: 'wait',
    },
    {
      name: 'compact: an unknown strategy',
      method: 'POST',
      path: `/v1/sessions/${SESSION}/compact`,
      body: { strategy: { type: 'nope' } },
      status: 400,
    },
    {
      name: 'compact: an unknown session',
      method: 'POST',
      path: '/v1/sessions/nobody-home/compact',
      status: 404,
    },
    {
      name: 'context: an unknown session',
      method: 'GET',
      path: '/v1/sessions/nobody-home/context',
      status: 404,
    },
    {
      name: 'context: a bad thinking mode',
      method: 'GET',
      path: `/v1/sessions/${SESSION}/context?thinking=all-of-it`,
      status: 400,
      field: 'thinking',
    },
    {
      name: 'a tenant header naming another tenant',
      method: 'GET',
      path: `/v1/sessions/${SESSION}/context`,
      headers: { 'compactor-tenant': 'globex' },
      status: 403,
    },
    {
      name: 'a wrong token',
      method: 'GET',
      path: `/v1/sessions/${SESSION}/context`,
      headers: { authorization: 'Bearer nope' },
      status: 401,
    },
    { name: 'an unknown route', method: 'POST', path: '/v1/sessions/target/explode', body: {}, status: 404 },
  );
  return all;
}

// ---------------------------------------------------------------------------------------------
// The harness

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  body: any;
}

async function send(c: Case): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (c.as !== 'nobody') headers.authorization = `Bearer ${TOKENS.acme}`;
  let body: string | undefined;
  if (c.body !== undefined) {
    body = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
    headers['content-type'] = 'application/json';
  }
  Object.assign(headers, c.headers);
  const request = () => fetch(`${server.url}${c.path}`, { method: c.method, headers, body });
  return answerOf(request);
}

/** Everything a request could write: rows per table, and the compaction queue's jobs. */
async function written(): Promise<Record<string, number>> {
  const [row] = await ctx.tdb.database.sql<Array<Record<string, number>>>`
    select (select count(*)::int from sessions) as sessions,
           (select count(*)::int from messages) as messages,
           (select count(*)::int from archived_messages) as archived,
           (select count(*)::int from append_requests) as appends,
           (select count(*)::int from compactions) as compactions,
           (select count(*)::int from sessions where tools is not null) as tools`;
  const jobs = await ctx.producer.queue.getJobCounts();
  return { ...row, jobs: Object.values(jobs).reduce((a, b) => a + b, 0) };
}

beforeAll(async () => {
  server = await serveApi(ctx, TOKENS, { maxBodyBytes: MAX_BODY, unlimitedRate: true });
  // acme's session: a tool call that a compaction archives, then one that stays live.
  const { createSession, appendMessages } = await import('../../producer/index.ts');
  const db = ctx.tdb.database.db;
  await createSession(db, {
    tenantId: 'acme',
    sessionId: SESSION,
    messages: [
      { seq: 0, message: { role: 'user', content: 'Read a.ts please.' } },
      { seq: 1, message: toolUse(ARCHIVED_TOOL_ID) as never },
      {
        seq: 2,
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: ARCHIVED_TOOL_ID, content: 'x' }],
        },
      },
      ...Array.from({ length: 6 }, (_, i) => ({
        seq: 3 + i,
        message: { role: i % 2 === 0 ? ('assistant' as const) : ('user' as const), content: `turn ${i}` },
      })),
    ],
  });
  const outcome = await ctx.compactInProcess({
    tenantId: 'acme',
    sessionId: SESSION,
    strategy: { type: 'slidingWindow', maxMessages: 4 },
  });
  expect(outcome.row?.status).toBe('applied');
  await appendMessages(db, 'acme', SESSION, [toolUse(LIVE_TOOL_ID) as never]);
  await createSession(db, { tenantId: 'globex', sessionId: 'globex-own', messages: [] });
});

describe('malformed requests', () => {
  const all = cases();

  it('are at least 120, each with its own name', () => {
    expect(all.length).toBeGreaterThanOrEqual(120);
    expect(new Set(all.map((c) => c.name)).size).toBe(all.length);
  });

  it('are all answered 4xx naming the field or the limit, with nothing written', async () => {
    const before = await written();
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (const c of all) {
      const answer = await send(c).catch((error: Error) => ({
        status: 0,
        body: { thrown: String(error.cause ?? error) },
      }));
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const error = answer.body?.error;
      const problems: string[] = [];
      if (answer.status < 400 || answer.status >= 500) problems.push(`status ${answer.status}`);
      if (c.status !== undefined && answer.status !== c.status)
        problems.push(`status ${answer.status}, not ${c.status}`);
      if (typeof error?.type !== 'string' || typeof error?.message !== 'string')
        problems.push('no error body');
      if (typeof c.field === 'string' && error?.field !== c.field)
        problems.push(`field ${error?.field}, not ${c.field}`);
      if (c.field instanceof RegExp && !c.field.test(String(error?.field)))
        problems.push(`field ${error?.field}`);
      if (c.message && !c.message.test(String(error?.message))) problems.push(`message "${error?.message}"`);
      const after = await written();
      if (JSON.stringify(after) !== JSON.stringify(before)) problems.push(`wrote ${JSON.stringify(after)}`);
      if (problems.length > 0)
        failures.push(`${c.name}: ${problems.join('; ')} (${JSON.stringify(answer.body).slice(0, 300)})`);
    }
    console.info(
      `${all.length} malformed requests: ${[...statuses].map(([s, n]) => `${n}× ${s}`).join(', ')}; ${failures.length} wrong`,
    );
    expect(failures).toEqual([]);
    expect([...statuses.keys()].every((s) => s >= 400 && s < 500)).toBe(true);
  });

  it('leave the session usable: a well-formed append and event still go through', async () => {
    const appended = await send({
      name: 'valid',
      method: 'POST',
      path: APPEND,
      body: append(
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: LIVE_TOOL_ID, content: 'export {}' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Done.', signature: 'c2lnbmVk' },
            { type: 'text', text: 'Read it.' },
          ],
        },
      ),
    });
    expect(appended.status, JSON.stringify(appended.body)).toBe(200);
    const enqueued = await send({
      name: 'event',
      method: 'POST',
      path: '/v1/events/run-completed',
      body: event({ eventId: 'evt-ok' }),
    });
    expect(enqueued.status, JSON.stringify(enqueued.body)).toBe(202);
  });
});
