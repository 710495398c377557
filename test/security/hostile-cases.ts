/**
 * The hostile requests of hostile-input.test.ts, as data. The REST cases are generated per
 * operation of the OpenAPI document (a route the document gains gets them without being listed):
 * its body's transport (bad JSON, nesting, content types, content encodings and a decompression
 * bomb, invalid UTF-8, duplicate keys, sizes), its body's schema (hostile-schema-cases.ts), its
 * path, query and header parameters, and its credentials. Then the session formats' malformed
 * messages (anthropic, openai-chat, openai-responses) and the MCP server's JSON-RPC. Each case
 * says what the answer must be; every case must also be answered below 500 and write nothing.
 * Pure: no I/O.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import {
  isClosed,
  type JsonSchema,
  jsonText,
  RawJson,
  resolve,
  schemaMutations,
} from './hostile-schema-cases.ts';

/** Who sends a request: a tenant's token, the admin token, a key holding only `context:read`, or nobody. */
export type Caller = 'acme' | 'admin' | 'reader' | 'nobody';

/** One acceptable answer: its status, the `error.field` and a pattern of `error.message`. */
export interface Outcome {
  status?: number;
  field?: string | RegExp;
  message?: RegExp;
}

/** What an MCP answer must be. */
export type McpOutcome =
  /** A tool's result with `isError`, or a JSON-RPC invalid-params error, its text matching. */
  | { kind: 'tool-error'; message: RegExp }
  /** A JSON-RPC error (any code but internal error), at HTTP status below 500. */
  | { kind: 'rpc-error' }
  /** Refused at HTTP level (one of `status`), its `error.message` matching. */
  | { kind: 'refused'; status: number[]; message?: RegExp }
  /** Anything below 500 but an internal error: a request that is no JSON-RPC call at all. */
  | { kind: 'any' };

/** One hostile request and the answers it may get. */
export interface HostileCase {
  name: string;
  /** The operationId it aims at, or `mcp`. */
  route: string;
  method: string;
  path: string;
  /** The body as sent (text is sent as UTF-8). */
  body?: string | Uint8Array;
  /** The content-type of the body; null: none. Default `application/json` with a body. */
  contentType?: string | null;
  headers?: Record<string, string>;
  as: Caller;
  /** The answers it may get (any one); REST cases. */
  expect?: Outcome[];
  /** What its answer must be; MCP cases. */
  mcp?: McpOutcome;
}

/** What the cases aim at, set up by the test. */
export interface Target {
  /** The body limit of the app, bytes. */
  maxBodyBytes: number;
  /** acme's sessions, one per format; the anthropic one has an archive and an open tool call. */
  sessions: { anthropic: string; 'openai-chat': string; 'openai-responses': string };
  /** The open tool call of the anthropic session. */
  openToolUseId: string;
  /** globex's session: acme must never reach it. */
  otherTenantSession: string;
  /** A live key the rotation cases aim at. */
  keyId: string;
}

/** One operation of the OpenAPI document, as the generator reads it. */
export interface Operation {
  operationId: string;
  method: string;
  /** In OpenAPI's form: `/v1/sessions/{id}/messages`. */
  path: string;
  scope: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; schema: JsonSchema }>;
  body?: { schema: JsonSchema; required: boolean };
}

/** The operations of an OpenAPI document, `$ref`s of bodies resolved. */
export function operationsOf(document: Record<string, unknown>): Operation[] {
  const components = ((document.components as Record<string, unknown>)?.schemas ?? {}) as Record<
    string,
    JsonSchema
  >;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, JsonSchema>>)) {
    for (const [method, op] of Object.entries(item)) {
      const body = (op.requestBody as JsonSchema | undefined)?.content as
        | Record<string, { schema: JsonSchema }>
        | undefined;
      const json = body?.['application/json'];
      out.push({
        operationId: String(op.operationId),
        method: method.toUpperCase(),
        path,
        scope: String(op['x-required-scope'] ?? ''),
        parameters: (op.parameters ?? []) as Operation['parameters'],
        ...(json
          ? {
              body: {
                schema: resolve(json.schema, components),
                required: (op.requestBody as JsonSchema).required === true,
              },
            }
          : {}),
      });
    }
  }
  return out;
}

/** Whether an operation takes input a caller chooses (a body or parameters). */
export function takesInput(op: Operation): boolean {
  return op.body !== undefined || op.parameters.length > 0;
}

/**
 * A valid body of each operation that takes one: the cases change it one way each, so that what
 * they change is the only thing wrong. A route with a body and no entry here fails the test.
 */
export const VALID_BODIES: Record<string, (t: Target) => Record<string, unknown>> = {
  // The MCP route's own JSON-RPC cases are in mcpCases; this body carries its credential, header and
  // body-transport cases.
  recallMcp: () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  createSession: () => ({
    id: 'hostile-new',
    format: 'anthropic',
    messages: [{ role: 'user', content: 'hello' }],
  }),
  appendMessages: () => ({ messages: [{ role: 'user', content: 'hello again' }] }),
  runCompleted: (t) => ({ eventId: 'evt-hostile', tenantId: 'acme', sessionId: t.sessions.anthropic }),
  searchRecall: () => ({ query: 'rollout', scope: 'lineage', limit: 5 }),
  readRecall: () => ({ fromSeq: 0, toSeq: 3, maxBytes: 4096 }),
  setSessionTools: () => ({ tools: [{ name: 'read_file', input_schema: { type: 'object' } }] }),
  compactSession: () => ({ strategy: { type: 'slidingWindow', maxMessages: 2 } }),
  createKey: () => ({ name: 'hostile key', tenantId: 'acme', scopes: ['context:read'] }),
  rotateKey: () => ({ graceSeconds: 60 }),
};

const enc = new TextEncoder();
const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(enc.encode(p)) : Buffer.from(p))));

/** An answer of 400 naming `field` (exactly, or as a pattern). */
const refused = (field?: string | RegExp, message?: RegExp): Outcome[] => [
  { status: 400, ...(field !== undefined ? { field } : {}), ...(message ? { message } : {}) },
];
/** `property` or a path below it: `messages`, `messages[0].role`, `strategy.type`. */
const under = (property: string) => new RegExp(`^${property.replace(/[[\].]/g, '\\$&')}($|[.[])`);

/** Bytes that are not UTF-8, by what they are: each case puts them inside a string of the body. */
const INVALID_UTF8: Array<[string, number[]]> = [
  ['a lone 0xFF byte', [0xff]],
  ['a surrogate encoded as UTF-8 (ED A0 80)', [0xed, 0xa0, 0x80]],
  ['a lead byte without its continuation (C3 28)', [0xc3]],
  ['an overlong encoding of "/" (C0 AF)', [0xc0, 0xaf]],
  ['a sequence cut short (E2 82)', [0xe2, 0x82]],
];

/** The base JSON text with `bad` inserted at the start of its first string value; its byte offset. */
function withBytes(text: string, bad: number[]): { body: Uint8Array; offset: number } {
  // A body without a string gets one: a property of its own, refused anyway.
  if (!text.includes(':"')) return withBytes(`{"hostile":"x",${text.slice(1)}`, bad);
  const at = text.indexOf(':"') + 2;
  const head = enc.encode(text.slice(0, at));
  return { body: bytes(text.slice(0, at), bad, text.slice(at)), offset: head.byteLength };
}

/** A refusal of invalid UTF-8 at byte `offset`: 400 naming the body and the byte. */
const notUtf8 = (offset: number): Outcome[] =>
  refused('body', new RegExp(`UTF-8.*\\b${offset}\\b|\\b${offset}\\b.*UTF-8`, 'i'));

/** `depth` arrays inside each other, as text. */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
/** An object `depth` levels deep. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** A body that inflates to 64 MiB of JSON, compressed once (about 64 KiB). */
let bomb: Uint8Array | undefined;
function gzipBomb(): Uint8Array {
  bomb ??= gzipSync(
    Buffer.concat([Buffer.from('{"x":"'), Buffer.alloc(64 * 2 ** 20, 0x61), Buffer.from('"}')]),
  );
  return bomb;
}

const ENCODINGS: Array<[string, (b: Uint8Array) => Uint8Array]> = [
  ['gzip', (b) => gzipSync(b)],
  ['deflate', (b) => deflateSync(b)],
  ['br', (b) => brotliCompressSync(b)],
];

/** The path of `op` with its parameters filled in: the anthropic session, the live key. */
function pathOf(op: Operation, t: Target, over: Record<string, string> = {}): string {
  const values: Record<string, string> = { id: t.sessions.anthropic, keyId: t.keyId, ...over };
  return op.path.replace(/\{(\w+)\}/g, (_m, name: string) => values[name] ?? name);
}

/** Who calls `op` when the case does not say: the admin for the key routes, acme otherwise. */
function callerOf(op: Operation): Caller {
  return op.scope === 'admin' ? 'admin' : 'acme';
}

/** The body cases of an operation: its transport, then its schema. */
function bodyCases(op: Operation, t: Target): HostileCase[] {
  if (!op.body) return [];
  const make = VALID_BODIES[op.operationId];
  if (!make) return [];
  const base = make(t);
  const baseText = jsonText(base);
  const first = Object.keys(base)[0] as string;
  const as = callerOf(op);
  const path = pathOf(op, t);
  const out: HostileCase[] = [];
  const add = (name: string, c: Omit<HostileCase, 'name' | 'route' | 'method' | 'path' | 'as'>) =>
    out.push({ name, route: op.operationId, method: op.method, path, as, ...c });

  for (const text of ['{', `{"${first}":}`, "{'a':1}", `${baseText} trailing`])
    add(`not JSON: ${text.slice(0, 30)}`, { body: text, expect: refused('body', /not valid JSON/) });
  add('a raw NUL byte inside a string', {
    body: `{"hostile":"a\u0000b",${baseText.slice(1)}`,
    expect: refused('body', /not valid JSON/),
  });
  if (op.body.required) {
    add('an empty body', { body: '', expect: refused('body') });
    add('a body of spaces', { body: '   \n', expect: refused('body') });
  }
  for (const [what, text] of [
    ['an array', '[]'],
    ['a string', '"x"'],
    ['null', 'null'],
  ])
    add(`the body ${what}`, { body: text, expect: refused() });
  add('5,000 nested arrays', { body: nestedArrays(5_000), expect: refused('body', /128 levels/) });
  add('an extra property nested 200 deep', {
    body: jsonText({ ...base, hostile: nested(200) }),
    expect: refused('body', /128 levels/),
  });
  add(`"${first}" twice, the second wrong`, {
    body: `${baseText.slice(0, -1)},"${first}":[[[]]]}`,
    expect: refused(under(first)),
  });
  add('a __proto__ property', {
    body: `{"__proto__":{"admin":true},${baseText.slice(1)}`,
    expect: refused(),
  });
  if (isClosed(op.body.schema)) {
    add('an unknown property', { body: jsonText({ ...base, hostile: 1 }), expect: refused() });
    add('an unknown property of 1 MiB', {
      body: jsonText({ ...base, hostile: 'x'.repeat(2 ** 20) }),
      expect: refused(),
    });
  }
  add('larger than the body limit', {
    body: jsonText({ ...base, hostile: 'x'.repeat(t.maxBodyBytes) }),
    expect: [{ status: 413, message: /bytes/ }],
  });
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])
    add(`sent as ${type}`, { body: baseText, contentType: type, expect: [{ status: 415 }] });
  add('sent without a content-type', {
    body: enc.encode(baseText),
    contentType: null,
    expect: [{ status: 415 }],
  });
  for (const [what, bad] of INVALID_UTF8.slice(0, 2)) {
    const { body, offset } = withBytes(baseText, bad);
    add(`invalid UTF-8: ${what}`, { body, expect: notUtf8(offset) });
  }
  // Encoded bodies are decoded before they are read (or the encoding is refused whole): a body
  // whose first field is wrong must be refused naming that field, not as bytes that are not JSON.
  const wrong = enc.encode(jsonText({ ...base, [first]: [[[]]] }));
  for (const [encoding, compress] of ENCODINGS)
    add(`Content-Encoding ${encoding}, "${first}" wrong inside`, {
      body: compress(wrong),
      headers: { 'content-encoding': encoding },
      expect: [...refused(under(first)), { status: 415 }],
    });
  for (const encoding of ['compress', 'gzip, x-hostile'])
    add(`Content-Encoding ${encoding}`, {
      body: baseText,
      headers: { 'content-encoding': encoding },
      expect: [{ status: 415 }],
    });
  add('Content-Encoding gzip on bytes that are not gzip', {
    body: baseText,
    headers: { 'content-encoding': 'gzip' },
    expect: [...refused('body'), { status: 415 }],
  });
  add('a gzip bomb: 64 KiB inflating to 64 MiB', {
    body: gzipBomb(),
    headers: { 'content-encoding': 'gzip' },
    expect: [{ status: 413 }, { status: 415 }],
  });
  for (const mutation of schemaMutations(op.body.schema)) {
    const body = { ...base, [mutation.property]: mutation.value };
    if (mutation.value === undefined) delete body[mutation.property];
    add(`${mutation.property}: ${mutation.what}`, {
      body: jsonText(body),
      expect: refused(mutation.value === undefined ? mutation.property : under(mutation.property)),
    });
  }
  return out;
}

/** Session ids no route may take, URL-encoded as a client would send them. */
const BAD_SESSION_IDS: Array<[string, string]> = [
  ['an ANSI escape', '%1B%5B31mred'],
  ['a newline', 'run%0Aforged'],
  ['a NUL', 'run%00x'],
  ['a zero-width space', 'run%E2%80%8Bx'],
  ['a .. segment', '..%2Fother'],
  ['201 characters', 'x'.repeat(201)],
];

/** The parameter cases of an operation: its path ids, query parameters and headers. */
function parameterCases(op: Operation, t: Target): HostileCase[] {
  const out: HostileCase[] = [];
  const as = callerOf(op);
  const base = VALID_BODIES[op.operationId]?.(t);
  const body = base ? jsonText(base) : undefined;
  const add = (name: string, c: Omit<HostileCase, 'name' | 'route' | 'method'>) =>
    out.push({ name, route: op.operationId, method: op.method, ...(body ? { body } : {}), ...c });
  for (const param of op.parameters) {
    if (param.in === 'path' && param.name === 'id') {
      for (const [what, id] of BAD_SESSION_IDS)
        add(`path id with ${what}`, { path: pathOf(op, t, { id }), as, expect: refused('id') });
      add('path id of a session acme does not have', {
        path: pathOf(op, t, { id: 'nobody-home' }),
        as,
        expect: [{ status: 404, message: /not found/ }],
      });
      add("path id of another tenant's session", {
        path: pathOf(op, t, { id: t.otherTenantSession }),
        as,
        expect: [{ status: 404, message: /not found/ }],
      });
    }
    if (param.in === 'path' && param.name === 'keyId') {
      for (const [what, keyId] of [
        ['not hex', 'zzzzzzzzzzzzzzzz'],
        ['upper case', 'ABCDEF0123456789'],
        ['17 characters', '0123456789abcdef0'],
        ['a .. segment', '..%2F0123456789abcdef'],
      ] as const)
        add(`path keyId ${what}`, { path: pathOf(op, t, { keyId }), as, expect: refused('keyId') });
      add('path keyId of no key', {
        path: pathOf(op, t, { keyId: '0123456789abcdef' }),
        as,
        expect: [{ status: 404 }],
      });
    }
    if (param.in === 'query') {
      const values: Array<[string, string]> =
        param.schema.type === 'integer'
          ? [
              ['negative', '-5'],
              ['a fraction', '1.5'],
              ['1e400', '1e400'],
              ['words', 'soon'],
              ['past its maximum', String(Number(param.schema.maximum ?? 0) + 1)],
            ]
          : Array.isArray(param.schema.enum)
            ? [
                ['not among its values', 'all-of-it'],
                ['empty', ''],
                ['with a NUL', `${param.schema.enum[0]}%00`],
              ]
            : [
                ['with a NUL', 'acme%00'],
                ['with a space', 'ac%20me'],
                ['201 characters', 'x'.repeat(201)],
              ];
      for (const [what, value] of values)
        add(`query ${param.name} ${what}`, {
          path: `${pathOf(op, t)}?${param.name}=${value}`,
          as,
          expect: refused(param.name),
        });
    }
    if (param.in === 'header' && param.name === 'Idempotency-Key') {
      for (const [what, key] of [
        ['of 256 characters', 'k'.repeat(256)],
        ['with a space', 'a key'],
        ['with a Latin-1 letter', 'cl\u00e9'],
      ] as const)
        add(`Idempotency-Key ${what}`, {
          path: pathOf(op, t),
          as,
          headers: { 'idempotency-key': key },
          expect: refused('Idempotency-Key'),
        });
    }
    if (param.in === 'header' && param.name === 'Compactor-Tenant') {
      add('Compactor-Tenant naming another tenant', {
        path: pathOf(op, t),
        as: 'acme',
        headers: { 'compactor-tenant': 'globex' },
        expect: [{ status: 403, field: 'Compactor-Tenant' }],
      });
      add('the admin naming no tenant', {
        path: pathOf(op, t),
        as: 'admin',
        expect: refused('Compactor-Tenant'),
      });
      for (const [what, tenant] of [
        ['with a space', 'ac me'],
        ['of 201 characters', 'x'.repeat(201)],
        ['with a .. segment', '../acme'],
      ] as const)
        add(`the admin naming a tenant ${what}`, {
          path: pathOf(op, t),
          as: 'admin',
          headers: { 'compactor-tenant': tenant },
          expect: refused('Compactor-Tenant'),
        });
    }
  }
  return out;
}

/** The credential cases of an operation, each with a valid body: refused before it is read. */
function credentialCases(op: Operation, t: Target): HostileCase[] {
  const base = VALID_BODIES[op.operationId]?.(t);
  const common = {
    route: op.operationId,
    method: op.method,
    path: pathOf(op, t),
    ...(base ? { body: jsonText(base) } : {}),
  };
  const out: HostileCase[] = [
    { name: 'no credentials', ...common, as: 'nobody', expect: [{ status: 401 }] },
    {
      name: 'a wrong bearer token',
      ...common,
      as: 'nobody',
      headers: { authorization: 'Bearer cpt_0123456789abcdef_wrong' },
      expect: [{ status: 401 }],
    },
    {
      name: 'a malformed Authorization header',
      ...common,
      as: 'nobody',
      headers: { authorization: 'Basic %%%not-base64' },
      expect: [{ status: 401 }],
    },
  ];
  if (op.scope !== 'context:read')
    out.push({
      name: `a key without ${op.scope}`,
      ...common,
      as: 'reader',
      expect: [{ status: 403, message: new RegExp(op.scope) }],
    });
  if (op.scope === 'admin')
    out.push({ name: "a tenant's token", ...common, as: 'acme', expect: [{ status: 403 }] });
  return out;
}

/** Every REST case of `op`, named after it. */
export function operationCases(op: Operation, t: Target): HostileCase[] {
  return [...bodyCases(op, t), ...parameterCases(op, t), ...credentialCases(op, t)].map((c) => ({
    ...c,
    name: `${op.method} ${op.path} (${op.operationId}): ${c.name}`,
  }));
}

// ---------------------------------------------------------------------------------------------
// Session formats

/** A message each format refuses, the field the answer must name, and a pattern of its message. */
type BadMessage = [what: string, message: unknown, field: string | RegExp, pattern?: RegExp];

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Anthropic messages the Messages API refuses (the tool_result answers the session's open call). */
function anthropicBad(t: Target): BadMessage[] {
  const result = (content: unknown) => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: t.openToolUseId, content }],
  });
  return [
    ['a tool_result whose content is a number', result(5), 'messages[0].content[0].content'],
    // An empty list is not here: the Messages API documents a tool_result's `content` as optional,
    // a string or a list, with no minimum length, so `[]` is valid and stored.
    ['a tool_result whose content is null', result(null), 'messages[0].content[0].content'],
    ['a tool_result whose content is an object', result({ text: 'x' }), 'messages[0].content[0].content'],
    [
      'an image of media_type text/html',
      {
        role: 'user',
        content: [{ type: 'image', source: { type: 'base64', media_type: 'text/html', data: PNG } }],
      },
      'messages[0].content[0].source.media_type',
    ],
    [
      'a signed thinking block in a user message',
      { role: 'user', content: [{ type: 'thinking', thinking: 'I decide.', signature: 'c2lnbmVk' }] },
      under('messages[0].content[0]'),
    ],
    [
      'a thinking block without a signature',
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] },
      'messages[0].content[0].signature',
    ],
    [
      'a redacted_thinking block without data',
      { role: 'assistant', content: [{ type: 'redacted_thinking' }] },
      'messages[0].content[0].data',
    ],
    [
      'a tool_use whose input is a string',
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_s', name: 'f', input: 'rm -rf /' }] },
      'messages[0].content[0].input',
    ],
    [
      'a text block with a number',
      { role: 'user', content: [{ type: 'text', text: 5 }] },
      'messages[0].content[0].text',
    ],
    [
      'a NUL in a text block',
      { role: 'user', content: [{ type: 'text', text: 'a\u0000b' }] },
      'messages[0].content[0].text',
      /NUL/,
    ],
    [
      'an unpaired surrogate in content',
      { role: 'user', content: 'cut \uD83D' },
      'messages[0].content',
      /unpaired/,
    ],
    [
      'a Chat Completions tool message',
      { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
      'messages[0].role',
      /Chat Completions/,
    ],
    [
      'a Responses function_call item',
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      /^messages\[0\]/,
    ],
    ['an item of an unknown type', { type: 'frobnicate' }, /^messages\[0\]/],
  ];
}

/** Chat Completions messages the API refuses. */
const CHAT_BAD: BadMessage[] = [
  [
    'an empty tool_calls',
    { role: 'assistant', content: null, tool_calls: [] },
    'messages[0].tool_calls',
    /minimum length 1/,
  ],
  ['a tool message without tool_call_id', { role: 'tool', content: 'done' }, 'messages[0].tool_call_id'],
  [
    'arguments as an object',
    {
      role: 'assistant',
      tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'bash', arguments: { cmd: 'ls' } } }],
    },
    'messages[0].tool_calls[0].function.arguments',
  ],
  [
    'a tool call of an unknown type',
    { role: 'assistant', tool_calls: [{ id: 'call_y', type: 'telepathy' }] },
    under('messages[0].tool_calls[0]'),
  ],
  ['an assistant message with null content', { role: 'assistant', content: null }, 'messages[0].content'],
  ['the legacy function role', { role: 'function', name: 'f', content: 'x' }, 'messages[0].role'],
  [
    'an image_url without its url',
    { role: 'user', content: [{ type: 'image_url', image_url: { url: '' } }] },
    under('messages[0].content[0]'),
  ],
  [
    'an input_audio of an unknown format',
    { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'ogg' } }] },
    under('messages[0].content[0]'),
  ],
  ['a NUL in content', { role: 'user', content: 'a\u0000b' }, 'messages[0].content', /NUL/],
  [
    'an Anthropic tool_result block',
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    'messages[0].content[0].type',
    /Anthropic/,
  ],
  [
    'a Responses function_call item',
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
    /^messages\[0\]/,
  ],
];

/** Responses input items the API refuses. */
const RESPONSES_BAD: BadMessage[] = [
  [
    'arguments as an object',
    { type: 'function_call', call_id: 'c', name: 'f', arguments: { a: 1 } },
    'messages[0].arguments',
  ],
  [
    'a function_call without call_id',
    { type: 'function_call', name: 'f', arguments: '{}' },
    'messages[0].call_id',
  ],
  [
    'a function_call_output without output',
    { type: 'function_call_output', call_id: 'c' },
    'messages[0].output',
  ],
  ['reasoning without summary', { type: 'reasoning', id: 'rs_1' }, 'messages[0].summary'],
  ['compaction without its blob', { type: 'compaction', id: 'cmp_1' }, 'messages[0].encrypted_content'],
  ['a Chat Completions tool role', { role: 'tool', content: 'x' }, 'messages[0].role'],
  [
    'an input_image without a source',
    { role: 'user', content: [{ type: 'input_image' }] },
    'messages[0].content[0]',
  ],
  ['an item_reference', { type: 'item_reference', id: 'msg_1' }, 'messages[0].type', /stored/],
  ['a compaction_trigger', { type: 'compaction_trigger' }, 'messages[0].type'],
  ['an unknown item type', { type: 'frobnicate' }, 'messages[0].type'],
  [
    'a NUL in input_text',
    { role: 'user', content: [{ type: 'input_text', text: 'a\u0000b' }] },
    /^messages\[0\]\.content/,
    /NUL/,
  ],
  [
    'an Anthropic tool_result block',
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    /^messages\[0\]\.content\[0\]/,
  ],
];

/** The session formats' cases: each malformed message appended, and given to a new session. */
export function formatCases(t: Target): HostileCase[] {
  const out: HostileCase[] = [];
  const lists: Array<[keyof Target['sessions'], BadMessage[]]> = [
    ['anthropic', anthropicBad(t)],
    ['openai-chat', CHAT_BAD],
    ['openai-responses', RESPONSES_BAD],
  ];
  for (const [format, bad] of lists) {
    const session = t.sessions[format];
    for (const [what, message, field, pattern] of bad) {
      out.push({
        name: `${format} append: ${what}`,
        route: 'appendMessages',
        method: 'POST',
        path: `/v1/sessions/${session}/messages`,
        body: jsonText({ messages: [message] }),
        as: 'acme',
        expect: refused(field, pattern),
      });
    }
    for (const [i, [what, message, field, pattern]] of bad.slice(0, 4).entries()) {
      out.push({
        name: `${format} create: ${what}`,
        route: 'createSession',
        method: 'POST',
        path: '/v1/sessions',
        body: jsonText({ id: `new-${format}-${i}`, format, messages: [message] }),
        as: 'acme',
        expect: refused(field, pattern),
      });
    }
    const text = jsonText({ messages: [{ role: 'user', content: 'fine' }] });
    const at = text.indexOf('"fine"') + 1;
    const offset = enc.encode(text.slice(0, at)).byteLength;
    for (const [what, bad] of INVALID_UTF8)
      out.push({
        name: `${format} append: invalid UTF-8 in the text, ${what}`,
        route: 'appendMessages',
        method: 'POST',
        path: `/v1/sessions/${session}/messages`,
        body: bytes(text.slice(0, at), bad, text.slice(at)),
        as: 'acme',
        expect: notUtf8(offset),
      });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// MCP

const rpc = (method: string, params?: unknown, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const call = (name: string, args: unknown) => rpc('tools/call', { name, arguments: args });

/** The MCP server's cases: JSON-RPC, the tools' arguments, and the body as the REST routes see it. */
export function mcpCases(t: Target): HostileCase[] {
  const session = t.sessions.anthropic;
  const search = (args: Record<string, unknown>) =>
    call('recall_search', { sessionId: session, query: 'rollout', ...args });
  const read = (args: Record<string, unknown>) =>
    call('recall_read', { sessionId: session, fromSeq: 0, toSeq: 3, ...args });
  const out: HostileCase[] = [];
  const add = (
    name: string,
    c: Omit<HostileCase, 'name' | 'route' | 'method' | 'path' | 'as'> & { method?: string; as?: Caller },
  ) => out.push({ name: `MCP: ${name}`, route: 'mcp', method: 'POST', path: '/v1/mcp', as: 'acme', ...c });
  const tool = (name: string, body: unknown, message: RegExp) =>
    add(name, { body: jsonText(body), mcp: { kind: 'tool-error', message } });

  add('jsonrpc "1.0"', {
    body: jsonText({ ...rpc('tools/list'), jsonrpc: '1.0' }),
    mcp: { kind: 'rpc-error' },
  });
  add('no jsonrpc', { body: jsonText({ id: 1, method: 'tools/list' }), mcp: { kind: 'rpc-error' } });
  add('an unknown method', { body: jsonText(rpc('tools/explode')), mcp: { kind: 'rpc-error' } });
  add('an id that is an object', {
    body: jsonText(rpc('tools/list', undefined, { a: 1 })),
    mcp: { kind: 'rpc-error' },
  });
  add('params a string', { body: jsonText(rpc('tools/call', 'recall_search')), mcp: { kind: 'rpc-error' } });
  add('an unknown tool', {
    body: jsonText(call('recall_everything', {})),
    mcp: { kind: 'tool-error', message: /recall_everything/ },
  });
  add('a batch of two bad calls', {
    body: jsonText([search({ query: 5 }), read({ fromSeq: -1 })]),
    mcp: { kind: 'rpc-error' },
  });
  tool('recall_search: query a number', search({ query: 5 }), /query/);
  tool('recall_search: no sessionId', call('recall_search', { query: 'x' }), /sessionId/);
  tool('recall_search: sessionId with a space', search({ sessionId: 'a b' }), /sessionId/);
  tool('recall_search: sessionId with a NUL', search({ sessionId: 'a\u0000b' }), /sessionId/);
  tool('recall_search: sessionId with a .. segment', search({ sessionId: '../other' }), /sessionId/);
  tool('recall_search: limit 0', search({ limit: 0 }), /limit/);
  tool('recall_search: limit 51', search({ limit: 51 }), /limit/);
  tool('recall_search: limit 1.5', search({ limit: 1.5 }), /limit/);
  tool('recall_search: scope "all"', search({ scope: 'all' }), /scope/);
  tool('recall_search: an unknown argument', search({ hostile: true }), /hostile|unrecognized/i);
  tool('recall_search: a NUL in the query', search({ query: 'a\u0000b' }), /query/);
  tool('recall_search: an unpaired surrogate in the query', search({ query: 'a\uD800b' }), /query/);
  tool('recall_search: a query of 501 characters', search({ query: 'x'.repeat(501) }), /query/);
  tool('recall_search: an empty query', search({ query: '  ' }), /query/);
  tool("recall_search: another tenant's session", search({ sessionId: t.otherTenantSession }), /not found/);
  tool('recall_read: fromSeq -1', read({ fromSeq: -1 }), /fromSeq/);
  tool('recall_read: toSeq below fromSeq', read({ fromSeq: 5, toSeq: 1 }), /toSeq/);
  tool('recall_read: 1,001 seqs', read({ fromSeq: 0, toSeq: 1000 }), /toSeq/);
  tool('recall_read: maxBytes 0', read({ maxBytes: 0 }), /maxBytes/);
  tool('recall_read: fromSeq a string', read({ fromSeq: '0' }), /fromSeq/);
  tool('recall_read: toSeq past the safe integers', read({ toSeq: Number.MAX_SAFE_INTEGER * 2 }), /toSeq/);
  add('recall_read: toSeq 1e400', {
    body: jsonText(read({ toSeq: new RawJson('1e400') })),
    mcp: { kind: 'tool-error', message: /toSeq/ },
  });
  tool("recall_read: another tenant's session", read({ sessionId: t.otherTenantSession }), /not found/);

  const good = jsonText(search({}));
  add('not JSON', { body: '{"jsonrpc":', mcp: { kind: 'refused', status: [400] } });
  add('an empty body', { body: '', mcp: { kind: 'refused', status: [400] } });
  add('5,000 nested arrays', {
    body: nestedArrays(5_000),
    mcp: { kind: 'refused', status: [400], message: /128 levels/ },
  });
  add('a body of 3.9 MB nested 1,300,000 deep', {
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${'['.repeat(1_300_000)}${']'.repeat(1_300_000)}}`,
    mcp: { kind: 'refused', status: [400], message: /128 levels/ },
  });
  add('larger than the body limit', {
    body: jsonText(search({ query: 'x'.repeat(t.maxBodyBytes) })),
    mcp: { kind: 'refused', status: [413] },
  });
  add('sent as text/plain', {
    body: good,
    contentType: 'text/plain',
    mcp: { kind: 'refused', status: [415] },
  });
  add('without accepting JSON', {
    body: good,
    headers: { accept: 'text/html' },
    mcp: { kind: 'refused', status: [406] },
  });
  add('a GET', { method: 'GET', mcp: { kind: 'any' } });
  add('a DELETE', { method: 'DELETE', mcp: { kind: 'any' } });
  for (const [what, bad] of INVALID_UTF8.slice(0, 2)) {
    const at = good.indexOf('"rollout"') + 1;
    const offset = enc.encode(good.slice(0, at)).byteLength;
    add(`invalid UTF-8 in the query: ${what}`, {
      body: bytes(good.slice(0, at), bad, good.slice(at)),
      mcp: { kind: 'refused', status: [400], message: new RegExp(`\\b${offset}\\b`) },
    });
  }
  add('Content-Encoding gzip', {
    body: gzipSync(enc.encode(jsonText(search({ limit: 0 })))),
    headers: { 'content-encoding': 'gzip' },
    mcp: { kind: 'tool-error', message: /limit/ },
  });
  add('Content-Encoding x-hostile', {
    body: good,
    headers: { 'content-encoding': 'x-hostile' },
    mcp: { kind: 'refused', status: [415] },
  });
  add('a gzip bomb', {
    body: gzipBomb(),
    headers: { 'content-encoding': 'gzip' },
    mcp: { kind: 'refused', status: [413, 415] },
  });
  add('no credentials', { body: good, as: 'nobody', mcp: { kind: 'refused', status: [401] } });
  return out;
}
