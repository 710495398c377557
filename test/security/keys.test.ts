/**
 * A hostile tenant's keys and scopes, against the HTTP API over real HTTP (served on a loopback
 * port; each test's requests come from a loopback address of its own, 127.0.0.x, so the per-client
 * throttle of one test does not reach another): scopes refuse what a key may not do (403 naming the
 * scope, nothing written), a tenant key never reaches another tenant nor the key routes, revoked
 * and expired keys are refused at once, the database and the list hold no secret, brute force is
 * throttled per client while others go on, and the log says why a request was refused without the
 * secret.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Listening } from '../../worker/http/ops.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { startKeyedApi } from '../support/keyed-api.ts';

const ctx = useIntegration();

/** The bootstrap admin of the environment. */
const ADMIN_TOKEN = 'keys-admin-token-5d1c8e2f9a7b';

/** Every line the API logged. */
const logLines: string[] = [];
/** Every secret any test was handed, to look for in the database, the list and the logs. */
const secrets: string[] = [];

let server: Listening;
let nextClient = 2;

beforeAll(async () => {
  const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(line) });
  server = await startKeyedApi(ctx, { adminToken: ADMIN_TOKEN, logger });
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
  body: any;
}

/** A client of its own: requests from the loopback address 127.0.0.<n>. */
function newClient() {
  const localAddress = `127.0.0.${nextClient++}`;
  return (
    token: string | null,
    method: string,
    path: string,
    options: { body?: unknown; tenant?: string } = {},
  ): Promise<Answer> => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.tenant) headers['compactor-tenant'] = options.tenant;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = new URL(path, server.url);
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers, localAddress }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? JSON.parse(text) : null,
          }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  };
}

type Client = ReturnType<typeof newClient>;

/** The secret part of a key's text (`cpt_<16 hex>_<secret>`; the secret may hold `_` itself). */
function secretOf(key: string): string {
  return key.slice('cpt_'.length + 16 + 1);
}

/** Issues a key as the bootstrap admin; remembers its secret. */
async function issue(client: Client, body: Record<string, unknown>) {
  const answer = await client(ADMIN_TOKEN, 'POST', '/v1/admin/keys', { body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  secrets.push(answer.body.secret);
  return answer.body as { key: { id: string; scopes: string[] }; secret: string };
}

/** A session of `tenantId` with two messages, created with a key that may write. */
async function createSession(client: Client, key: string, id: string) {
  const created = await client(key, 'POST', '/v1/sessions', {
    body: {
      id,
      messages: [
        { role: 'user', content: 'List the files of the repository.' },
        { role: 'assistant', content: 'src/, test/ and README.md.' },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}

async function liveRows(tenantId: string, sessionId: string): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from messages where tenant_id = ${tenantId} and session_id = ${sessionId}`;
  return row?.n ?? 0;
}

describe('keys: scopes', () => {
  it('a read-only key reads the context, and every write is refused with 403 naming the scope', async () => {
    const client = newClient();
    const writer = await issue(client, { name: 'acme writer', tenantId: 'acme' });
    await createSession(client, writer.secret, 'scoped-1');
    const reader = await issue(client, { name: 'acme reader', tenantId: 'acme', scopes: ['context:read'] });
    expect(reader.secret).toMatch(/^cpt_[0-9a-f]{16}_/);

    const read = await client(reader.secret, 'GET', '/v1/sessions/scoped-1/context');
    expect(read.status).toBe(200);
    expect(read.body.messages).toHaveLength(2);

    const refused: Array<[string, string, unknown, string]> = [
      [
        'POST',
        '/v1/sessions/scoped-1/messages',
        { messages: [{ role: 'user', content: 'x' }] },
        'messages:write',
      ],
      ['POST', '/v1/sessions', { id: 'scoped-2' }, 'messages:write'],
      ['DELETE', '/v1/sessions/scoped-1', undefined, 'sessions:delete'],
      ['POST', '/v1/sessions/scoped-1/compact', undefined, 'sessions:compact'],
      [
        'POST',
        '/v1/events/run-completed',
        { eventId: 'e-1', tenantId: 'acme', sessionId: 'scoped-1', occurredAt: new Date().toISOString() },
        'events:write',
      ],
    ];
    for (const [method, path, body, scope] of refused) {
      const answer = await client(reader.secret, method, path, { body });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error.type).toBe('permission_error');
      expect(answer.body.error.message).toContain(`"${scope}"`);
    }
    expect(await liveRows('acme', 'scoped-1')).toBe(2);
    expect(await liveRows('acme', 'scoped-2')).toBe(0);
  });

  it("a tenant key never acts on another tenant's session, and cannot manage keys", async () => {
    const client = newClient();
    const globex = await issue(client, { name: 'globex service', tenantId: 'globex' });
    await createSession(client, globex.secret, 'globex-secret-plan');
    const evil = await issue(client, { name: 'evil service', tenantId: 'evil' });

    // Naming the other tenant: 403; not naming it: the key's own tenant, where no such session is.
    const named = await client(evil.secret, 'GET', '/v1/sessions/globex-secret-plan/context', {
      tenant: 'globex',
    });
    expect(named.status).toBe(403);
    for (const [method, path] of [
      ['GET', '/v1/sessions/globex-secret-plan/context'],
      ['DELETE', '/v1/sessions/globex-secret-plan'],
    ] as const) {
      expect((await client(evil.secret, method, path)).status).toBe(404);
    }
    expect(await liveRows('globex', 'globex-secret-plan')).toBe(2);

    // The key routes need the admin scope, which no tenant key can be given.
    for (const [method, path, body] of [
      ['GET', '/v1/admin/keys', undefined],
      ['POST', '/v1/admin/keys', { name: 'mine now', admin: true }],
      ['POST', '/v1/admin/keys', { name: 'globex too', tenantId: 'globex' }],
      ['DELETE', `/v1/admin/keys/${globex.key.id}`, undefined],
      ['POST', `/v1/admin/keys/${globex.key.id}/rotate`, undefined],
    ] as const) {
      const answer = await client(evil.secret, method, path, { body });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.error.message).toContain('"admin"');
    }
    const elevated = await client(ADMIN_TOKEN, 'POST', '/v1/admin/keys', {
      body: { name: 'tenant admin', tenantId: 'evil', scopes: ['admin'] },
    });
    expect(elevated.status).toBe(400);
    expect(elevated.body.error.field).toBe('scopes');
    expect((await client(globex.secret, 'GET', '/v1/sessions/globex-secret-plan/context')).status).toBe(200);
  });
});

describe('keys: revocation, expiry, rotation', () => {
  it('a revoked key is refused from the next request on', async () => {
    const client = newClient();
    const issued = await issue(client, { name: 'to revoke', tenantId: 'acme' });
    expect((await client(issued.secret, 'GET', '/v1/sessions/none/context')).status).toBe(404);
    const revoked = await client(ADMIN_TOKEN, 'DELETE', `/v1/admin/keys/${issued.key.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key.state).toBe('revoked');
    const refused = await client(issued.secret, 'GET', '/v1/sessions/none/context');
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('revoked');
    // Revoking it again finds no usable key.
    expect((await client(ADMIN_TOKEN, 'DELETE', `/v1/admin/keys/${issued.key.id}`)).status).toBe(404);
  });

  it('an expired key is refused', async () => {
    const client = newClient();
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const issued = await issue(client, { name: 'short-lived', tenantId: 'acme', expiresAt });
    expect((await client(issued.secret, 'GET', '/v1/sessions/none/context')).status).toBe(404);
    // Its hour passes.
    await ctx.tdb.database.sql`
      update api_keys set expires_at = now() - interval '1 second' where id = ${issued.key.id}`;
    const refused = await client(issued.secret, 'GET', '/v1/sessions/none/context');
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain('expired');
    const past = await client(ADMIN_TOKEN, 'POST', '/v1/admin/keys', {
      body: { name: 'born dead', tenantId: 'acme', expiresAt: '2001-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body.error.field).toBe('expiresAt');
  });

  it('rotation issues a key with the same tenant and scopes; the old one ends now, or after its grace', async () => {
    const client = newClient();
    const first = await issue(client, { name: 'rotating', tenantId: 'acme', scopes: ['context:read'] });
    const rotated = await client(ADMIN_TOKEN, 'POST', `/v1/admin/keys/${first.key.id}/rotate`, {
      body: { graceSeconds: 3600 },
    });
    expect(rotated.status).toBe(201);
    secrets.push(rotated.body.secret);
    expect(rotated.body.key).toMatchObject({ tenantId: 'acme', name: 'rotating', scopes: ['context:read'] });
    expect(rotated.body.key.rotatedFrom).toBe(first.key.id);
    // In its grace period the old key still works, as does the new one.
    for (const key of [first.secret, rotated.body.secret]) {
      expect((await client(key, 'GET', '/v1/sessions/none/context')).status).toBe(404);
    }
    // Rotated again without grace: the second key stops at once.
    const again = await client(ADMIN_TOKEN, 'POST', `/v1/admin/keys/${rotated.body.key.id}/rotate`);
    expect(again.status).toBe(201);
    secrets.push(again.body.secret);
    expect((await client(rotated.body.secret, 'GET', '/v1/sessions/none/context')).status).toBe(401);
    expect((await client(again.body.secret, 'GET', '/v1/sessions/none/context')).status).toBe(404);
  });
});

describe('keys: secrets stay secret', () => {
  it('the database holds only the SHA-256 of each secret; the list shows none, with when each was last used', async () => {
    const client = newClient();
    const issued = await issue(client, { name: 'listed', tenantId: 'initech' });
    expect((await client(issued.secret, 'GET', '/v1/sessions/none/context')).status).toBe(404);

    const rows = await ctx.tdb.database.sql<Record<string, unknown>[]>`select * from api_keys`;
    const stored = JSON.stringify(rows);
    for (const secret of secrets) {
      expect(stored).not.toContain(secretOf(secret));
    }
    const row = rows.find((r) => r.id === issued.key.id);
    expect(row?.secret_sha256).toBe(createHash('sha256').update(secretOf(issued.secret)).digest('hex'));

    const used = await waitFor(async () => {
      const list = await client(ADMIN_TOKEN, 'GET', '/v1/admin/keys?tenant=initech');
      return list.body.keys[0]?.lastUsedAt ? list : null;
    });
    expect(used.body.keys.map((k: { id: string }) => k.id)).toEqual([issued.key.id]);
    const all = await client(ADMIN_TOKEN, 'GET', '/v1/admin/keys?all=true');
    const text = JSON.stringify(all.body);
    expect(all.body.keys.length).toBeGreaterThanOrEqual(secrets.length);
    for (const secret of secrets) expect(text).not.toContain(secretOf(secret));
  });
});

describe('keys: failed authentication', () => {
  it('a client guessing keys gets 429 with retry-after after 10 failures; another client with a good key goes on', async () => {
    const attacker = newClient();
    const honest = newClient();
    const good = await issue(honest, { name: 'honest', tenantId: 'acme' });
    const id = good.key.id;
    for (let i = 0; i < 10; i++) {
      const guess = `cpt_${id}_${String(i).padStart(43, 'A')}`;
      expect((await attacker(guess, 'GET', '/v1/sessions/none/context')).status).toBe(401);
    }
    const blocked = await attacker('wrong-token-number-eleven', 'GET', '/v1/sessions/none/context');
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.type).toBe('rate_limit_error');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Blocked whatever it sends, a good key included: a success must not tell a guess from a block.
    expect((await attacker(good.secret, 'GET', '/v1/sessions/none/context')).status).toBe(429);
    expect((await honest(good.secret, 'GET', '/v1/sessions/none/context')).status).toBe(404);
  });

  it("requests without credentials (a browser's before each basic-auth challenge) do not lock a client out", async () => {
    const browser = newClient();
    const good = await issue(browser, { name: 'dashboard user', tenantId: 'acme' });
    for (let i = 0; i < 15; i++) {
      expect((await browser(null, 'GET', '/v1/sessions/none/context')).status).toBe(401);
    }
    expect((await browser(good.secret, 'GET', '/v1/sessions/none/context')).status).toBe(404);
  });

  it('each refusal is logged at info with its reason and key id, never the secret', async () => {
    const client = newClient();
    const revoked = await issue(client, { name: 'logged', tenantId: 'acme' });
    await client(ADMIN_TOKEN, 'DELETE', `/v1/admin/keys/${revoked.key.id}`);
    const reader = await issue(client, { name: 'logged reader', tenantId: 'acme', scopes: ['context:read'] });
    const wrongSecret = `cpt_${revoked.key.id}_${'B'.repeat(43)}`;
    logLines.length = 0;
    await client(null, 'GET', '/v1/sessions/none/context');
    await client('cpt_not-a-key', 'GET', '/v1/sessions/none/context');
    await client('some-token-nobody-has', 'GET', '/v1/sessions/none/context');
    await client(wrongSecret, 'GET', '/v1/sessions/none/context');
    await client(revoked.secret, 'GET', '/v1/sessions/none/context');
    await client(reader.secret, 'DELETE', '/v1/sessions/none');

    const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const refusals = entries.filter((e) => e.reason !== undefined);
    expect(refusals.map((e) => e.reason)).toEqual([
      'missing',
      'malformed',
      'unknown_key',
      'wrong_secret',
      'revoked',
      'missing_scope',
    ]);
    for (const e of refusals) expect(e.level).toBe(30);
    expect(refusals.slice(3).map((e) => e.keyId)).toEqual([revoked.key.id, revoked.key.id, reader.key.id]);
    const logged = logLines.join('\n');
    for (const secret of [...secrets, wrongSecret]) expect(logged).not.toContain(secretOf(secret));
    expect(logged).not.toContain('some-token-nobody-has');
  });
});
