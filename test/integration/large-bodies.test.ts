/**
 * Large request bodies, which the API reads in a worker thread (worker/http/api/json-body.ts), are
 * answered exactly as small ones: stored byte for byte, refused with the same errors (not JSON,
 * nested too deep, not sent as JSON), nothing written when refused; and a tenant's small requests
 * are answered while another's large ones are read. Over real HTTP on the file's own database.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { OFF_THREAD_BYTES } from '../../worker/http/api/json-body.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { serveApi } from '../support/api-server.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const TOKENS = { big: 'large-bodies-big-token-3e8f1a', small: 'large-bodies-small-token-7c2d9b' };
let server: Listening;

beforeAll(async () => {
  server = await serveApi(ctx, TOKENS, { maxBodyBytes: 8 * 1024 * 1024 });
  const sql = ctx.tdb.database.sql;
  await sql`insert into sessions (tenant_id, id) values ('big', 's1'), ('small', 's1')`;
});

/** A POST of `body` (text, sent as is) as `tenant`; the answer's status and JSON. */
async function post(
  tenant: keyof typeof TOKENS,
  path: string,
  body: string,
  contentType = 'application/json',
) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS[tenant]}`, 'content-type': contentType },
    body,
  });
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  return { status: response.status, body: (await response.json()) as any };
}

/** The messages stored in the tenant's session s1, as the context read returns them. */
async function storedMessages(tenant: keyof typeof TOKENS): Promise<unknown[]> {
  const response = await fetch(`${server.url}/v1/sessions/s1/context`, {
    headers: { authorization: `Bearer ${TOKENS[tenant]}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: unknown[] }).messages;
}

/** Text of at least `bytes` UTF-8 bytes, with characters of every UTF-8 length. */
function textOf(bytes: number): string {
  return 'ab é € 𝄞 '.repeat(Math.ceil(bytes / 16));
}

describe('a body larger than the API reads on its event loop', () => {
  it('is appended and read back exactly, blocks and characters as sent', async () => {
    const messages = [
      { role: 'user', content: textOf(OFF_THREAD_BYTES * 2) },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading it.' },
          {
            type: 'tool_use',
            id: 'toolu_big1',
            name: 'read',
            input: { path: '/a', nested: [[{ n: -0.5 }]] },
          },
        ],
      },
    ];
    const body = JSON.stringify({ messages });
    expect(Buffer.byteLength(body)).toBeGreaterThan(OFF_THREAD_BYTES);
    const appended = await post('big', '/v1/sessions/s1/messages', body);
    expect(appended).toMatchObject({ status: 200, body: { seqs: [0, 1] } });
    expect(await storedMessages('big')).toEqual(messages);
  });

  it('is refused 400 when it is not JSON, and nothing is written', async () => {
    const before = (await storedMessages('big')).length;
    const body = `{"messages":[{"role":"user","content":"${'x'.repeat(OFF_THREAD_BYTES)}"}]`;
    const refused = await post('big', '/v1/sessions/s1/messages', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      type: 'invalid_request_error',
      message: 'body: not valid JSON',
    });
    expect(await storedMessages('big')).toHaveLength(before);
  });

  it('is refused 400 when it nests deeper than the limit, before it is parsed', async () => {
    const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
    const body = `{"pad":"${'x'.repeat(OFF_THREAD_BYTES)}","messages":${deep}}`;
    const refused = await post('big', '/v1/sessions/s1/messages', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^body: .*nest/);
  });

  it('is refused 415 when it is not sent as JSON', async () => {
    const body = JSON.stringify({ messages: [{ role: 'user', content: textOf(OFF_THREAD_BYTES) }] });
    const refused = await post('big', '/v1/sessions/s1/messages', body, 'text/plain');
    expect(refused.status).toBe(415);
  });

  it("serves another tenant's small appends, each stored once, while large ones are read", async () => {
    const large = JSON.stringify({ messages: [{ role: 'user', content: textOf(4 * 1024 * 1024) }] });
    const larges = Array.from({ length: 4 }, () => post('big', '/v1/sessions/s1/messages', large));
    const smalls = Array.from({ length: 8 }, (_, i) =>
      post(
        'small',
        '/v1/sessions/s1/messages',
        JSON.stringify({ messages: [{ role: 'user', content: `turn ${i}` }] }),
      ),
    );
    const answers = await Promise.all([...larges, ...smalls]);
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    const sql = ctx.tdb.database.sql;
    const stored = await sql<{ content: string }[]>`
      select content from messages where tenant_id = 'small' and session_id = 's1' order by content`;
    expect(stored.map((m) => m.content)).toEqual(Array.from({ length: 8 }, (_, i) => `turn ${i}`));
  });
});
