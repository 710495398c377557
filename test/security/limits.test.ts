/**
 * Limits that keep tenants apart, over real HTTP on the file's own database and Redis prefix: a
 * noisy tenant over its request rate gets 429 with retry-after while a quiet one is served; an
 * append past the session size is refused naming the limit and writes nothing, also when appends
 * race and when a library caller appends, and past what a read returns (no session is stored that
 * no read could serve); a context over its size cap is refused whole before it is read, a tenant's context reads at once are capped, and a context under the cap streams back
 * exactly; limits set by a tenant's policy win over the defaults.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendMessages, loadContext, SessionLimitError } from '../../producer/index.ts';
import { DEFAULT_LIMITS, type Limits } from '../../shared/policy/limits.ts';
import { createApiApp } from '../../worker/http/api/index.ts';
import { TenantLimits } from '../../worker/http/api/tenant-limits.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { PolicyCache } from '../../worker/postgres/policy-cache.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

const TOKENS = {
  noisy: 'limits-noisy-token-5d1c8e2f7a',
  quiet: 'limits-quiet-token-0b9a4f3e6d',
  small: 'limits-small-token-8e2d7c1b4a',
  brief: 'limits-brief-token-6f0e3d9c2b',
  sloppy: 'limits-sloppy-token-3a7c9e1d5f',
  tidy: 'limits-tidy-token-9d2b6f4a8c',
} as const;
type Tenant = keyof typeof TOKENS;

/** The process-wide defaults of the app under test: the built-in ones, but a small session size. */
const DEFAULTS: Limits = { ...DEFAULT_LIMITS, maxSessionMessages: 50 };

let server: Listening;

beforeAll(async () => {
  const db = ctx.tdb.database.db;
  const strategy = { type: 'slidingWindow', maxMessages: 10 };
  // noisy: a tight rate and one context read at once; small: tiny sessions and contexts; brief:
  // short contexts.
  await setPolicy(db, 'noisy', null, {
    strategy,
    limits: {
      requestsPerSecond: 1,
      burst: 0,
      maxConcurrentContextReads: 1,
      maxContextTokens: 10_000_000,
      maxSessionTokens: 10_000_000,
    },
  });
  await setPolicy(db, 'small', null, {
    strategy,
    limits: { maxSessionMessages: 5, maxSessionTokens: 1_000, maxContextBytes: 2_048 },
  });
  await setPolicy(db, 'brief', null, { strategy, limits: { maxContextTokens: 1_000 } });
  // sloppy and tidy: one request a second and a burst of 25 in ten seconds each.
  for (const tenant of ['sloppy', 'tidy']) {
    await setPolicy(db, tenant, null, { strategy, limits: { requestsPerSecond: 1, burst: 25 } });
  }
  const app = createApiApp(
    {
      db,
      producer: ctx.producer,
      limits: new TenantLimits({
        policies: new PolicyCache(db),
        defaults: DEFAULTS,
        ...(ctx.backend === 'redis' ? { redis: ctx.redis } : { postgres: db }),
        prefix: ctx.prefix,
      }),
    },
    {
      credentials: {
        adminToken: undefined,
        adminUser: undefined,
        adminPassword: undefined,
        tenantTokens: Object.entries(TOKENS).map(([tenantId, token]) => ({ tenantId, token })),
      },
    },
  );
  server = await listen(app, 0, '127.0.0.1');
  ctx.onTeardown(() => server.close());
});

/** `fetch` as `tenant`; the answer's body parsed as JSON. */
async function call(tenant: Tenant, method: string, path: string, body?: unknown) {
  const response = await send(tenant, method, path, body);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers are read field by field.
    body: (text ? JSON.parse(text) : null) as any,
  };
}

/** `fetch` as `tenant`, the response unread. */
function send(tenant: Tenant, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKENS[tenant]}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A session of `tenantId` with `messages`, written directly (no API request spent). */
async function seedSession(tenantId: string, id: string, messages: Array<{ role: string; content: string }>) {
  const sql = ctx.tdb.database.sql;
  await sql`insert into sessions (tenant_id, id) values (${tenantId}, ${id})`;
  if (messages.length > 0) await appendMessages(ctx.tdb.database.db, tenantId, id, messages as never);
}

/** 40 messages of about 250 KB each: a response of 10 MB, more than a socket buffers unread. */
function bigMessages() {
  return Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `${i} ${randomUUID()} `.repeat(6_000),
  }));
}

/** Live rows and the session's counters. */
async function stored(tenantId: string, id: string) {
  const sql = ctx.tdb.database.sql;
  const [rows] = await sql<{ n: number }[]>`
    select count(*)::int as n from messages where tenant_id = ${tenantId} and session_id = ${id}`;
  const [session] = await sql<{ messages: number; tokens: number; last_seq: number }[]>`
    select message_count as messages, token_count::int as tokens, last_seq::int
    from sessions where tenant_id = ${tenantId} and id = ${id}`;
  return { rows: rows?.n ?? 0, ...session };
}

describe('request rate per tenant', () => {
  it('answers a noisy tenant over its rate 429 with retry-after, and serves a quiet tenant meanwhile', async () => {
    await seedSession('noisy', 'rate', [{ role: 'user', content: 'hello' }]);
    await seedSession('quiet', 'rate', [{ role: 'user', content: 'hello' }]);
    const append = (tenant: Tenant, i: number) =>
      call(tenant, 'POST', '/v1/sessions/rate/messages', { messages: [{ role: 'user', content: `m${i}` }] });
    const noisy = await Promise.all(Array.from({ length: 6 }, (_, i) => append('noisy', i)));
    const quiet = [];
    for (let i = 0; i < 6; i++) quiet.push(await append('quiet', i));
    const refused = noisy.filter((a) => a.status === 429);
    // One a second, no burst: six at once cannot all pass, even across a second's boundary.
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(noisy.filter((a) => a.status !== 429).every((a) => a.status === 200)).toBe(true);
    for (const answer of refused) {
      expect(answer.body.error.type).toBe('rate_limit_error');
      expect(answer.body.error.message).toContain('requestsPerSecond 1');
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // The quiet tenant has no policy: the default rate (100/s) lets all six through.
    expect(quiet.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('counts a request whose body is refused as ten requests against its own tenant only', async () => {
    await seedSession('sloppy', 'rate', [{ role: 'user', content: 'hello' }]);
    await seedSession('tidy', 'rate', [{ role: 'user', content: 'hello' }]);
    const valid = (tenant: Tenant) =>
      call(tenant, 'POST', '/v1/sessions/rate/messages', { messages: [{ role: 'user', content: 'next' }] });
    const malformed = () =>
      fetch(`${server.url}/v1/sessions/rate/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS.sloppy}`, 'content-type': 'application/json' },
        body: '{"messages": [',
      }).then((r) => r.status);
    // REFUSED_BODY_COST is 10: three refused bodies count 30 against sloppy's 1 + 25: its valid requests are then refused
    // 429 (at most one a second gets through on its rate, however slowly they are sent).
    const refused = [await malformed(), await malformed(), await malformed()];
    expect(refused.slice(0, 2)).toEqual([400, 400]);
    const after = [];
    for (let i = 0; i < 4; i++) after.push(await valid('sloppy'));
    expect(after.filter((a) => a.status === 429).length).toBeGreaterThanOrEqual(2);
    expect(after.find((a) => a.status === 429)?.body.error.message).toContain(
      'requestsPerSecond 1, burst 25',
    );
    // The same number of requests, with bodies that are accepted, stays within the same limits.
    const tidy = [];
    for (let i = 0; i < 7; i++) tidy.push((await valid('tidy')).status);
    expect(tidy).toEqual([200, 200, 200, 200, 200, 200, 200]);
  });

  it('counts the rate where the queues are (Redis, or Postgres), so API processes share it', async () => {
    const keys =
      ctx.backend === 'redis'
        ? await ctx.redis.keys(`${ctx.prefix}:limits:*`)
        : (await ctx.tdb.database.sql<{ key: string }[]>`select key from rate_limits`).map((r) => r.key);
    expect(keys.some((k) => k.endsWith(':noisy'))).toBe(true);
  });
});

describe('session size per tenant', () => {
  it('refuses an append past maxSessionMessages with 413 naming the limit, writing nothing', async () => {
    await seedSession('small', 'full', [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
    ]);
    const fits = await call('small', 'POST', '/v1/sessions/full/messages', {
      messages: [
        { role: 'user', content: 'three' },
        { role: 'assistant', content: 'four' },
        { role: 'user', content: 'five' },
      ],
    });
    expect(fits.status, JSON.stringify(fits.body)).toBe(200);
    const before = await stored('small', 'full');
    const over = await call('small', 'POST', '/v1/sessions/full/messages', {
      messages: [{ role: 'assistant', content: 'six' }],
    });
    expect(over.status).toBe(413);
    expect(over.body.error.type).toBe('session_limit_error');
    expect(over.body.error.message).toContain('maxSessionMessages of 5');
    expect(await stored('small', 'full')).toEqual(before);
  });

  it('refuses an append past maxSessionTokens naming it', async () => {
    await seedSession('small', 'tokens', []);
    const over = await call('small', 'POST', '/v1/sessions/tokens/messages', {
      messages: [{ role: 'user', content: 'x'.repeat(8_000) }],
    });
    expect(over.status).toBe(413);
    expect(over.body.error.message).toContain('maxSessionTokens of 1000');
    expect(await stored('small', 'tokens')).toMatchObject({ rows: 0, messages: 0, tokens: 0 });
  });

  it('lets concurrent appends fill a session exactly to its limit, never past it', async () => {
    await seedSession('small', 'race', []);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('small', 'POST', '/v1/sessions/race/messages', {
          messages: [{ role: 'user', content: `message ${i}` }],
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 413)).toHaveLength(7);
    expect(await stored('small', 'race')).toMatchObject({ rows: 5, messages: 5, last_seq: 4 });
  });

  it("holds a library caller's append to the same limit", async () => {
    await seedSession('small', 'library', []);
    const six = Array.from({ length: 6 }, (_, i) => ({ role: 'user' as const, content: `m${i}` }));
    const refused = await appendMessages(ctx.tdb.database.db, 'small', 'library', six).catch((e) => e);
    expect(refused).toBeInstanceOf(SessionLimitError);
    expect(refused.message).toContain('maxSessionMessages of 5');
    expect(await stored('small', 'library')).toMatchObject({ rows: 0, messages: 0 });
  });

  it('refuses a new session whose messages pass the limit, and creates nothing', async () => {
    const messages = Array.from({ length: 6 }, (_, i) => ({ role: 'user', content: `m${i}` }));
    const over = await call('small', 'POST', '/v1/sessions', { id: 'born-too-big', messages });
    expect(over.status).toBe(413);
    expect(over.body.error.message).toContain('maxSessionMessages of 5');
    const [row] = await ctx.tdb.database.sql`
      select 1 from sessions where tenant_id = 'small' and id = 'born-too-big'`;
    expect(row).toBeUndefined();
  });

  it("takes the process's default where the tenant's policy sets none", async () => {
    await seedSession('quiet', 'default-size', []);
    const answers = [];
    for (let i = 0; i < 6; i++) {
      const messages = Array.from({ length: 10 }, (_, j) => ({ role: 'user', content: `m${i}.${j}` }));
      answers.push((await call('quiet', 'POST', '/v1/sessions/default-size/messages', { messages })).status);
    }
    expect(answers).toEqual([200, 200, 200, 200, 200, 413]);
    expect(await stored('quiet', 'default-size')).toMatchObject({ rows: 50 });
  });
});

describe('context reads', () => {
  it('refuses a context over maxContextBytes whole, naming the limit, with 422', async () => {
    await seedSession('small', 'wide', [
      { role: 'user', content: 'a'.repeat(1_500) },
      { role: 'assistant', content: 'b'.repeat(1_500) },
    ]);
    const over = await call('small', 'GET', '/v1/sessions/wide/context');
    expect(over.status).toBe(422);
    expect(over.body.error.type).toBe('context_limit_error');
    expect(over.body.error.message).toContain('maxContextBytes of 2048');
  });

  it('refuses a context over maxContextTokens naming it: a session that grew before the limit was lowered', async () => {
    await setPolicy(ctx.tdb.database.db, 'brief', null, {
      strategy: { type: 'slidingWindow', maxMessages: 10 },
      limits: { maxContextTokens: 10_000 },
    });
    await seedSession('brief', 'long', [{ role: 'user', content: 'c'.repeat(4_400) }]);
    await setPolicy(ctx.tdb.database.db, 'brief', null, {
      strategy: { type: 'slidingWindow', maxMessages: 10 },
      limits: { maxContextTokens: 1_000 },
    });
    const over = await call('brief', 'GET', '/v1/sessions/long/context');
    expect(over.status).toBe(422);
    expect(over.body.error.message).toContain('maxContextTokens of 1000');
    // It cannot grow further either: every append names the read limit.
    const append = await call('brief', 'POST', '/v1/sessions/long/messages', {
      messages: [{ role: 'assistant', content: 'ok' }],
    });
    expect(append.status).toBe(413);
    expect(append.body.error.message).toContain('maxContextTokens of 1000');
  });

  it('never stores a session past what a read returns: the append is refused, what was stored reads', async () => {
    // brief's policy sets only maxContextTokens: its session limit, the default, is far higher.
    await seedSession('brief', 'readable', [{ role: 'user', content: 'd'.repeat(2_000) }]);
    const over = await call('brief', 'POST', '/v1/sessions/readable/messages', {
      messages: [{ role: 'assistant', content: 'e'.repeat(2_400) }],
    });
    expect(over.status).toBe(413);
    expect(over.body.error.type).toBe('session_limit_error');
    expect(over.body.error.message).toContain(
      'maxContextTokens of 1000 estimated tokens (the largest context a read returns)',
    );
    const read = await call('brief', 'GET', '/v1/sessions/readable/context');
    expect(read.status).toBe(200);
    expect(read.body.messages).toHaveLength(1);
  });

  it('streams a context under the cap back exactly as loadContext renders it', async () => {
    await seedSession('small', 'narrow', [
      { role: 'user', content: 'What breaks on "empty" input?\n' },
      { role: 'assistant', content: 'The tokenizer drops the last line.' },
    ]);
    const answer = await call('small', 'GET', '/v1/sessions/narrow/context');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const expected = await loadContext(ctx.tdb.database.db, { tenantId: 'small', sessionId: 'narrow' });
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it("caps a tenant's context reads at once (429), while another tenant reads", async () => {
    await seedSession('noisy', 'big', bigMessages());
    await seedSession('quiet', 'small-read', [{ role: 'user', content: 'hello' }]);
    // Wait out noisy's one request a second, then hold one read open: its body is left unread.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const held = await send('noisy', 'GET', '/v1/sessions/big/context');
    expect(held.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const second = await call('noisy', 'GET', '/v1/sessions/big/context');
    expect(second.status).toBe(429);
    expect(second.body.error.message).toContain('maxConcurrentContextReads');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call('quiet', 'GET', '/v1/sessions/small-read/context')).status).toBe(200);
    // Read to its end, the held read ends, and the tenant may read again.
    const context = JSON.parse(await held.text());
    expect(context.messages).toHaveLength(40);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await call('noisy', 'GET', '/v1/sessions/big/context')).status).toBe(200);
  });
});

describe('context reads, abandoned', () => {
  it('ends a read whose client went away, so it no longer counts against the tenant', async () => {
    // noisy may have one read under way; this one is abandoned with its body unread.
    await seedSession('noisy', 'abandoned', bigMessages());
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const abort = new AbortController();
    const held = await fetch(`${server.url}/v1/sessions/abandoned/context`, {
      headers: { authorization: `Bearer ${TOKENS.noisy}` },
      signal: abort.signal,
    });
    expect(held.status).toBe(200);
    abort.abort();
    await held.text().catch(() => undefined);
    // Served again once the server has seen the connection close (429 until then, never a leak).
    let status = 429;
    while (status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const answer = await send('noisy', 'GET', '/v1/sessions/abandoned/context');
      status = answer.status;
      await answer.arrayBuffer();
    }
    expect(status).toBe(200);
  });
});

describe('limits in policies', () => {
  it('refuses a session limit above the read limit, naming both', async () => {
    const refused = await setPolicy(ctx.tdb.database.db, 'quiet', null, {
      strategy: { type: 'none' },
      limits: { maxSessionTokens: 2_000_000, maxContextTokens: 1_000_000 },
    }).catch((e) => e);
    expect(refused.message).toContain('policy.limits.maxSessionTokens: must be at most maxContextTokens');
  });

  it('refuses limits on an agent policy, naming the field', async () => {
    const refused = await setPolicy(ctx.tdb.database.db, 'quiet', 'bot', {
      strategy: { type: 'none' },
      limits: { requestsPerSecond: 5 },
    }).catch((e) => e);
    expect(refused.message).toContain('policy.limits');
  });
});
