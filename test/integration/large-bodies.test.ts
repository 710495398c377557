/**
 * Large requests, which the API handles in worker threads (worker/http/api/offload.ts), are
 * answered exactly as small ones: stored byte for byte, refused with the same errors (not JSON,
 * nested too deep, not sent as JSON, no such session, over a limit), nothing written when refused;
 * a large context is read back as a small one is; and a tenant's small requests are answered while
 * another's large ones are handled. Each case runs twice: on an API mounted without a database URL
 * (its threads only read bodies) and on one whose threads append and read contexts themselves, as
 * `compactor api` runs. Over real HTTP on the file's own database.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { OFF_THREAD_BYTES, OFF_THREAD_CONTEXT_BYTES } from '../../worker/http/api/offload.ts';
import type { Listening } from '../../worker/http/ops.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { serveApi } from '../support/api-server.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const TOKENS = { big: 'large-bodies-big-token-3e8f1a', small: 'large-bodies-small-token-7c2d9b' };
const servers: Record<'loop' | 'threads', Listening | undefined> = { loop: undefined, threads: undefined };

beforeAll(async () => {
  servers.loop = await serveApi(ctx, TOKENS, { maxBodyBytes: 8 * 1024 * 1024 });
  servers.threads = await serveApi(ctx, TOKENS, { maxBodyBytes: 8 * 1024 * 1024, threads: true });
  const sql = ctx.tdb.database.sql;
  await sql`insert into sessions (tenant_id, id)
    values ('big', 'loop'), ('small', 'loop'), ('big', 'threads'), ('small', 'threads')`;
  // The big tenant's session takes appends of megabytes, case after case: past the default 1M
  // tokens a session may hold (and a read may return), which this file is not about.
  await setPolicy(ctx.tdb.database.db, 'big', null, {
    strategy: { type: 'none' },
    limits: { maxContextTokens: 20_000_000, maxSessionTokens: 20_000_000 },
  });
});

/** Text of at least `bytes` UTF-8 bytes, with characters of every UTF-8 length. */
function textOf(bytes: number): string {
  return 'ab é € 𝄞 '.repeat(Math.ceil(bytes / 15)); // 15 bytes each
}

describe.each(['loop', 'threads'] as const)('on the API whose large requests go to %s', (variant) => {
  const url = () => (servers[variant] as Listening).url;
  /** The variant's own session of each tenant. */
  const s1 = `/v1/sessions/${variant}`;

  /** A POST of `body` (text, sent as is) as `tenant`; the answer's status and JSON. */
  async function post(
    tenant: keyof typeof TOKENS,
    path: string,
    body: string,
    contentType = 'application/json',
  ) {
    const response = await fetch(`${url()}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS[tenant]}`, 'content-type': contentType },
      body,
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
    return { status: response.status, body: (await response.json()) as any };
  }

  /** The messages stored in the tenant's session, as the context read returns them. */
  async function storedMessages(tenant: keyof typeof TOKENS): Promise<unknown[]> {
    const response = await fetch(`${url()}${s1}/context`, {
      headers: { authorization: `Bearer ${TOKENS[tenant]}` },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { messages: unknown[] }).messages;
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
      const appended = await post('big', `${s1}/messages`, body);
      expect(appended).toMatchObject({ status: 200, body: { seqs: [0, 1] } });
      expect(await storedMessages('big')).toEqual(messages);
    });

    it('is refused 400 when it is not JSON, and nothing is written', async () => {
      const before = (await storedMessages('big')).length;
      const body = `{"messages":[{"role":"user","content":"${'x'.repeat(OFF_THREAD_BYTES)}"}]`;
      const refused = await post('big', `${s1}/messages`, body);
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
      const refused = await post('big', `${s1}/messages`, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/^body: .*nest/);
    });

    it('is refused 415 when it is not sent as JSON', async () => {
      const body = JSON.stringify({ messages: [{ role: 'user', content: textOf(OFF_THREAD_BYTES) }] });
      const refused = await post('big', `${s1}/messages`, body, 'text/plain');
      expect(refused.status).toBe(415);
    });

    it('is refused as a small one is: no such session 404, a tool_use id taken 409; nothing written', async () => {
      const before = await storedMessages('big');
      const unknown = await post(
        'big',
        '/v1/sessions/nobody/messages',
        JSON.stringify({ messages: [{ role: 'user', content: textOf(OFF_THREAD_BYTES) }] }),
      );
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatchObject({
        type: 'not_found_error',
        message: 'session "nobody" not found',
      });
      const taken = await post(
        'big',
        `${s1}/messages`,
        JSON.stringify({
          messages: [
            {
              role: 'assistant',
              content: [
                { type: 'text', text: textOf(OFF_THREAD_BYTES) },
                { type: 'tool_use', id: 'toolu_big1', name: 'read', input: {} },
              ],
            },
          ],
        }),
      );
      expect(taken.status).toBe(409);
      expect(taken.body.error.type).toBe('conflict_error');
      expect(await storedMessages('big')).toEqual(before);
    });

    it('is written once under an Idempotency-Key; the retry gets the same seqs, marked replayed', async () => {
      const body = JSON.stringify({ messages: [{ role: 'user', content: textOf(OFF_THREAD_BYTES) }] });
      const send = () =>
        fetch(`${url()}${s1}/messages`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKENS.small}`,
            'content-type': 'application/json',
            'idempotency-key': `large-${variant}`,
          },
          body,
        });
      const first = await send();
      const retry = await send();
      expect(first.status).toBe(200);
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await retry.json()).toEqual(await first.json());
      const sql = ctx.tdb.database.sql;
      const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from messages
      where tenant_id = 'small' and session_id = ${variant} and octet_length(content_blocks::text) > ${OFF_THREAD_BYTES}`;
      expect(row?.n).toBe(1);
    });
    it("serves another tenant's small appends, each stored once, while large ones are read", async () => {
      const large = JSON.stringify({ messages: [{ role: 'user', content: textOf(4 * 1024 * 1024) }] });
      const larges = Array.from({ length: 4 }, () => post('big', `${s1}/messages`, large));
      const smalls = Array.from({ length: 8 }, (_, i) =>
        post(
          'small',
          `${s1}/messages`,
          JSON.stringify({ messages: [{ role: 'user', content: `turn ${i}` }] }),
        ),
      );
      const answers = await Promise.all([...larges, ...smalls]);
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
      const sql = ctx.tdb.database.sql;
      const stored = await sql<{ content: string }[]>`
        select content from messages
      where tenant_id = 'small' and session_id = ${variant} and content like 'turn %' order by content`;
      expect(stored.map((m) => m.content)).toEqual(Array.from({ length: 8 }, (_, i) => `turn ${i}`));
    });
  });
});

describe('a context larger than the API reads on its event loop', () => {
  it('is read back as the event loop renders it, byte for byte', async () => {
    const read = async (server: Listening, sessionId: string) => {
      const response = await fetch(`${server.url}/v1/sessions/${sessionId}/context`, {
        headers: { authorization: `Bearer ${TOKENS.big}` },
      });
      expect(response.status).toBe(200);
      return response.text();
    };
    const threads = servers.threads as Listening;
    const loop = servers.loop as Listening;
    const created = await fetch(`${threads.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.big}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'wide',
        messages: [
          { role: 'system', content: 'You review code.' },
          { role: 'user', content: textOf(OFF_THREAD_CONTEXT_BYTES / 2) },
          { role: 'assistant', content: [{ type: 'text', text: textOf(OFF_THREAD_CONTEXT_BYTES / 2) }] },
          { role: 'user', content: [{ type: 'text', text: 'And the tests? "quoted" \\ \u2028' }] },
        ],
      }),
    });
    expect(created.status).toBe(201);
    const inThread = await read(threads, 'wide');
    expect(Buffer.byteLength(inThread)).toBeGreaterThan(OFF_THREAD_CONTEXT_BYTES);
    expect(inThread).toBe(await read(loop, 'wide'));
  });
});
