/**
 * The API's one body reader, on every route that takes a body, `/v1/mcp` included, over real HTTP:
 * a body is UTF-8 (a malformed byte is refused naming its offset, never stored as U+FFFD); a
 * `Content-Encoding` of gzip, deflate or br is decoded and the body limit applies to what it decodes
 * to (a decompression bomb is 413), any other coding is 415; on `/v1/mcp` the same refusals come back
 * as JSON-RPC errors, with the status the REST routes give. Refused requests write nothing. The
 * large cases run on the event loop's API and on one whose large requests go to worker threads.
 */
import { request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { OFF_THREAD_BYTES } from '../../worker/http/api/offload.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { serveApi } from '../support/api-server.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const TOKENS = { acme: 'request-bodies-acme-4b7e21' };
const MAX_BODY = 8 * 1024 * 1024;
const servers: Record<'loop' | 'threads', Listening | undefined> = { loop: undefined, threads: undefined };
const SESSION = '/v1/sessions/bodies';
const MCP_ACCEPT = 'application/json, text/event-stream';

beforeAll(async () => {
  servers.loop = await serveApi(ctx, TOKENS, { maxBodyBytes: MAX_BODY });
  servers.threads = await serveApi(ctx, TOKENS, { maxBodyBytes: MAX_BODY, threads: true });
  await ctx.tdb.database.sql`insert into sessions (tenant_id, id) values ('acme', 'bodies')`;
});

/** A request of `body` (bytes or text, sent as they are) to `path`; its status and JSON answer. */
async function send(
  server: Listening | undefined,
  path: string,
  body: Uint8Array | string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${(server as Listening).url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKENS.acme}`,
      'content-type': 'application/json',
      ...(path === '/v1/mcp' ? { accept: MCP_ACCEPT } : {}),
      ...headers,
    },
    body,
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  return { status: response.status, body: (await response.json()) as any };
}

/** The contents of the session's stored messages, in order. */
async function stored(): Promise<unknown[]> {
  const rows = await ctx.tdb.database.sql<{ content: string }[]>`
    select content from messages where tenant_id = 'acme' and session_id = 'bodies' order by seq`;
  return rows.map((row) => row.content);
}

/** `text` as UTF-8 with `bad` (raw bytes) put in at `offset`. */
function withBytes(text: string, offset: number, bad: number[]): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  return Uint8Array.from([...bytes.subarray(0, offset), ...bad, ...bytes.subarray(offset)]);
}

const appendOf = (content: string) => JSON.stringify({ messages: [{ role: 'user', content }] });

describe('invalid UTF-8', () => {
  it.each(['loop', 'threads'] as const)(
    'is refused 400 naming the byte offset, small or large, and nothing is stored (%s)',
    async (variant) => {
      const before = await stored();
      const small = appendOf('caf_ au lait');
      const at = small.indexOf('_');
      const refused = await send(
        servers[variant],
        `${SESSION}/messages`,
        withBytes(small.replace('_', ''), at, [0xe9]),
      );
      expect(refused).toEqual({
        status: 400,
        body: {
          error: {
            type: 'invalid_request_error',
            message: `body: not valid UTF-8 at byte offset ${at} (0xe9); send JSON as UTF-8`,
            field: 'body',
          },
        },
      });
      const large = appendOf(`${'é'.repeat(OFF_THREAD_BYTES)}|`);
      const offset = Buffer.byteLength(large.slice(0, large.indexOf('|')));
      const bad = await send(servers[variant], `${SESSION}/messages`, withBytes(large, offset, [0xc0, 0xaf]));
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toBe(
        `body: not valid UTF-8 at byte offset ${offset} (0xc0); send JSON as UTF-8`,
      );
      expect(await stored()).toEqual(before);
    },
  );

  it('is refused on every route that takes a body, and on /v1/mcp as a JSON-RPC parse error', async () => {
    const routes = [
      `${SESSION}/recall/search`,
      '/v1/sessions',
      '/v1/events/run-completed',
      `${SESSION}/compact`,
    ];
    for (const path of routes) {
      const refused = await send(servers.loop, path, withBytes('{"query":"x"}', 10, [0xff]));
      expect(refused.status, path).toBe(400);
      expect(refused.body.error.message, path).toMatch(/^body: not valid UTF-8 at byte offset 10 \(0xff\)/);
    }
    const mcp = await send(
      servers.loop,
      '/v1/mcp',
      withBytes('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 1, [0x80]),
    );
    expect(mcp).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32700,
          message: 'body: not valid UTF-8 at byte offset 1 (0x80); send JSON as UTF-8',
          data: { type: 'invalid_request_error', field: 'body' },
        },
      },
    });
  });

  it('refuses a charset other than UTF-8 with 415', async () => {
    const refused = await send(servers.loop, `${SESSION}/messages`, appendOf('hi'), {
      'content-type': 'application/json; charset=iso-8859-1',
    });
    expect(refused.status).toBe(415);
    expect(refused.body.error.message).toMatch(/charset "iso-8859-1" is not supported/);
  });
});

describe('Content-Encoding', () => {
  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('%s is decoded, and the message stored as sent', async (coding, encode) => {
    const content = `compressed with ${coding}: é € 𝄞 ${'x'.repeat(1000)}`;
    const appended = await send(servers.loop, `${SESSION}/messages`, encode(Buffer.from(appendOf(content))), {
      'content-encoding': coding,
    });
    expect(appended.status).toBe(200);
    expect((await stored()).at(-1)).toBe(content);
  });

  it('a large body is decoded and read in a worker thread as a small one is', async () => {
    const content = 'y'.repeat(OFF_THREAD_BYTES * 4);
    const appended = await send(
      servers.threads,
      `${SESSION}/messages`,
      gzipSync(Buffer.from(appendOf(content))),
      {
        'content-encoding': 'gzip',
      },
    );
    expect(appended.status).toBe(200);
    expect((await stored()).at(-1)).toBe(content);
  });

  it('a decompression bomb is refused 413 on its decoded size, and nothing is stored', async () => {
    const before = await stored();
    // 64 gzip members of 16 MiB of spaces each: 1 GiB decoded from about 1 MB sent.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024, ' '), { level: 9 });
    const bomb = Buffer.concat([
      gzipSync(Buffer.from('{"messages":[{"role":"user","content":"')),
      ...Array(64).fill(member),
    ]);
    expect(bomb.byteLength).toBeLessThan(MAX_BODY);
    for (const path of [`${SESSION}/messages`, '/v1/mcp']) {
      const refused = await send(servers.threads, path, bomb, { 'content-encoding': 'gzip' });
      expect(refused.status, path).toBe(413);
      expect(refused.body.error.message).toBe(
        `request body larger than ${MAX_BODY} bytes decoded (Content-Encoding: gzip) (COMPACTOR_API_MAX_BODY_BYTES)`,
      );
    }
    expect(await stored()).toEqual(before);
  });

  it('a coding the API does not decode, or more than one, is refused 415 naming it', async () => {
    const body = appendOf('hi');
    const unknown = await send(servers.loop, `${SESSION}/messages`, body, { 'content-encoding': 'compress' });
    expect(unknown).toEqual({
      status: 415,
      body: {
        error: {
          type: 'unsupported_media_type_error',
          message:
            'Content-Encoding: "compress" is not supported; send the body as is, or with gzip, deflate or br',
          field: 'Content-Encoding',
        },
      },
    });
    const stacked = await send(servers.loop, `${SESSION}/messages`, gzipSync(gzipSync(body)), {
      'content-encoding': 'gzip, gzip',
    });
    expect(stacked.status).toBe(415);
    expect(stacked.body.error.message).toMatch(/^Content-Encoding: one coding at most/);
    const identity = await send(servers.loop, `${SESSION}/messages`, body, {
      'content-encoding': 'identity',
    });
    expect(identity.status).toBe(200);
  });

  it('a body that is not data of its coding is refused 400', async () => {
    const refused = await send(servers.loop, `${SESSION}/messages`, appendOf('not gzip'), {
      'content-encoding': 'gzip',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', field: 'body' });
    expect(refused.body.error.message).toMatch(/^body: not valid gzip data \(Content-Encoding: gzip\)/);
  });
});

describe('/v1/mcp', () => {
  /** A tools/call of recall_search whose query is `depth` arrays deep. */
  const deepCall = (depth: number) =>
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall_search","arguments":{"sessionId":"bodies","query":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;

  it.each([10_000, 1_950_000])(
    'refuses a body nested %i deep with 400 and a JSON-RPC parse error naming the limit',
    async (depth) => {
      const body = deepCall(depth);
      for (const variant of ['loop', 'threads'] as const) {
        const refused = await send(servers[variant], '/v1/mcp', body);
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, data: { type: 'invalid_request_error', field: 'body' } },
        });
        expect(refused.body.error.message).toMatch(
          /^body: nests deeper than 128 levels of objects and arrays/,
        );
      }
    },
  );

  it('answers a body nested too deep at its first level past the limit, before the sender has sent the rest', async () => {
    // The first 64 KiB of a body nested 1,950,000 deep, sent, and the rest never: the answer
    // comes all the same, and the connection is closed after it (the rest would still be on it).
    const head = deepCall(1_950_000).slice(0, 64 * 1024);
    const answer = await new Promise<{ status: number; connection: string | undefined; text: string }>(
      (resolve, reject) => {
        const url = new URL('/v1/mcp', (servers.loop as Listening).url);
        const sending = httpRequest(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKENS.acme}`,
            'content-type': 'application/json',
            accept: MCP_ACCEPT,
            'content-length': String(4 * 1024 * 1024),
          },
        });
        sending.on('error', reject);
        sending.on('response', (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, text });
            sending.destroy();
          });
        });
        sending.write(head);
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.connection).toBe('close');
    expect(JSON.parse(answer.text).error).toMatchObject({
      code: -32700,
      message: expect.stringMatching(
        /^body: nests deeper than 128 levels of objects and arrays \(the limit\) at byte offset \d+$/,
      ),
    });
  });

  it('closes the connection of a request refused before its large body is read, and keeps a small one', async () => {
    // Without a key the request is refused before its body is needed. Reading and dropping the
    // rest of a 4 MiB body to keep the connection would cost the server the whole body: it closes
    // the connection instead, and answers although the rest is never sent. A small body is read and
    // dropped, and the connection kept for the client's next request.
    const refusedWith = (declared: number, sent: Uint8Array) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const url = new URL(`${SESSION}/messages`, (servers.loop as Listening).url);
        const sending = httpRequest(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(declared) },
        });
        sending.on('error', reject);
        sending.on('response', (response) => {
          response.resume().on('end', () => {
            resolve({ status: response.statusCode ?? 0, connection: response.headers.connection });
            sending.destroy();
          });
        });
        if (sent.byteLength === declared) sending.end(sent);
        else sending.write(sent);
      });
    const small = new TextEncoder().encode(appendOf('hello'));
    expect(await refusedWith(4 * 1024 * 1024, new Uint8Array(64 * 1024).fill(0x20))).toEqual({
      status: 401,
      connection: 'close',
    });
    expect(await refusedWith(small.byteLength, small)).toEqual({ status: 401, connection: 'keep-alive' });
  });

  it('answers each refusal of a body as a JSON-RPC error with the REST status', async () => {
    const notJson = await send(servers.loop, '/v1/mcp', '{"jsonrpc":"2.0","id":1,');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatchObject({ code: -32700, message: 'body: not valid JSON' });
    const notMessage = await send(
      servers.loop,
      '/v1/mcp',
      '{"jsonrpc":"2.0","id":1,"method":["tools/list"]}',
    );
    expect(notMessage).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'method: must be a string',
          data: { type: 'invalid_request_error', field: 'method' },
        },
      },
    });
    const empty = await send(servers.loop, '/v1/mcp', '');
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe(-32700);
    const large = await send(servers.loop, '/v1/mcp', `{"jsonrpc":"2.0","pad":"${'x'.repeat(MAX_BODY)}"}`);
    expect(large.status).toBe(413);
    expect(large.body.error).toMatchObject({ code: -32600, data: { type: 'request_too_large' } });
    const text = await send(servers.loop, '/v1/mcp', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', {
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(415);
    expect(text.body.error).toMatchObject({ code: -32600, data: { type: 'unsupported_media_type_error' } });
    const coded = await send(servers.loop, '/v1/mcp', '{}', { 'content-encoding': 'zstd' });
    expect(coded.status).toBe(415);
    expect(coded.body.error.data).toEqual({
      type: 'unsupported_media_type_error',
      field: 'Content-Encoding',
    });
  });

  it('refuses a request without a key as a JSON-RPC error too', async () => {
    const response = await fetch(`${(servers.loop as Listening).url}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { type: 'authentication_error' } },
    });
  });

  it('takes a gzip body: the tools are listed', async () => {
    const listed = await send(
      servers.threads,
      '/v1/mcp',
      gzipSync('{"jsonrpc":"2.0","id":7,"method":"tools/list"}'),
      { 'content-encoding': 'gzip' },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.id).toBe(7);
    expect(listed.body.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'recall_read',
      'recall_search',
    ]);
  });
});
