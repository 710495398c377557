import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, jobIdOf } from '../../producer/index.ts';
import { createKey, revokeKey } from '../../worker/postgres/api-keys.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type DashboardFixture,
  startDashboardFixture,
  TENANT_TOKENS,
} from '../support/dashboard-fixture.ts';
import { waitFor } from '../support/fixtures.ts';

let f: DashboardFixture;
const HOSTILE = '<script>alert("owned")</script><img src=x onerror=alert(1)> & "quotes"';

beforeAll(async () => {
  f = await startDashboardFixture({ anthropic: true });
  for (const id of ['a-1', 'a-2', 'a-3', 'a-4', 'a-5', 'busy']) await f.seed('acme', id);
  await createSession(f.tdb.database.db, {
    tenantId: 'acme',
    sessionId: 'long',
    messages: Array.from({ length: 250 }, (_, seq) => ({
      seq,
      role: seq % 2 === 0 ? 'user' : 'assistant',
      kind: 'message',
      content: seq === 249 ? HOSTILE : `message ${seq}`,
    })),
  });
  await createSession(f.tdb.database.db, {
    tenantId: 'acme',
    sessionId: 'tiny',
    messages: ['hello', 'hi there', 'bye'].map((content, seq) => ({
      seq,
      role: seq % 2 === 0 ? 'user' : 'assistant',
      kind: 'message',
      content,
    })),
  });
  await f.seed('globex', 'g-1');
  await f.seed('acme', 'hostile', 'minisweagent__astropy-12907');
  expect((await f.compact('acme', 'a-1', { type: 'slidingWindow', maxMessages: 4 })).state).toBe('completed');
  expect((await f.compact('acme', 'hostile', { type: 'summarize', keepRecent: 1 })).state).toBe('completed');
  // Session content is untrusted: hostile markup in the checkpoint and the agent id.
  await f.tdb.database.sql`
    update sessions set agent_id = ${HOSTILE}, checkpoint = jsonb_set(checkpoint, '{goal}', to_jsonb(${HOSTILE}::text))
    where tenant_id = 'acme' and id = 'hostile'`;
  await f.tdb.database.sql`
    update compactions set summary = ${HOSTILE}, model = ${HOSTILE}
    where tenant_id = 'acme' and session_id = 'hostile'`;
  await f.tdb.database.sql`
    update archived_messages set content = ${HOSTILE.repeat(20)}
    where tenant_id = 'acme' and session_id = 'hostile'
      and seq = (select min(seq) from archived_messages where session_id = 'hostile')`;
});

afterAll(async () => {
  await f?.close();
});

/** A JSON answer, loosely typed: the assertions check its shape. */
// biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field by the tests
type Json = Record<string, any>;

async function json(response: Response) {
  return { status: response.status, body: (await response.json()) as Json };
}

const post = (body: unknown = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('authentication', () => {
  it('refuses a request without credentials or with wrong ones, as JSON with a challenge', async () => {
    const none = await f.request('nobody', '/api/sessions');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm="compactor"/);
    expect(await none.json()).toEqual({
      error: { type: 'authentication_error', message: 'credentials required' },
    });
    const wrong = await f.request('nobody', '/api/sessions', { headers: { authorization: 'Bearer nope' } });
    expect(await json(wrong)).toEqual({
      status: 401,
      body: { error: { type: 'authentication_error', message: 'invalid credentials' } },
    });
    expect((await f.request('nobody', '/queues')).status).toBe(401);
    expect((await f.request('nobody', '/metrics')).status).toBe(401);
    expect((await f.request('nobody', '/sessions')).status).toBe(401);
  });

  it('accepts basic auth: the admin user, or a tenant id with its token', async () => {
    const basic = (user: string, password: string) => ({
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });
    expect((await f.request('nobody', '/queues/api/queues', basic(ADMIN_USER, ADMIN_PASSWORD))).status).toBe(
      200,
    );
    const tenant = await f.request('nobody', '/api/sessions', basic('acme', TENANT_TOKENS.acme));
    expect(tenant.status).toBe(200);
    // Another tenant's token under this tenant's name is no credential at all.
    expect((await f.request('nobody', '/api/sessions', basic('acme', TENANT_TOKENS.globex))).status).toBe(
      401,
    );
  });

  it('accepts an issued key within its scopes, and refuses it once revoked', async () => {
    const db = f.tdb.database.db;
    const reader = await createKey(db, {
      tenantId: 'acme',
      name: 'acme dashboard viewer',
      scopes: ['context:read'],
    });
    const bearer = (key: string, init: RequestInit = {}) => ({
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` },
    });
    const sessions = await json(await f.request('nobody', '/api/sessions', bearer(reader.secret)));
    expect(sessions.status).toBe(200);
    const compact = await json(
      await f.request('nobody', '/api/sessions/a-1/compact', bearer(reader.secret, post())),
    );
    expect(compact).toEqual({
      status: 403,
      body: {
        error: { type: 'permission_error', message: 'this credential lacks the scope "sessions:compact"' },
      },
    });
    expect((await f.request('nobody', '/queues/api/queues', bearer(reader.secret))).status).toBe(403);
    const admin = await createKey(db, { tenantId: null, name: 'platform on-call' });
    expect((await f.request('nobody', '/queues/api/queues', bearer(admin.secret))).status).toBe(200);
    // The admin scope alone opens Bull Board and /metrics, not the tenants' sessions.
    const operator = await createKey(db, { tenantId: null, name: 'metrics scraper', scopes: ['admin'] });
    expect((await f.request('nobody', '/metrics', bearer(operator.secret))).status).toBe(200);
    expect((await f.request('nobody', '/api/sessions?tenant=acme', bearer(operator.secret))).status).toBe(
      403,
    );
    await revokeKey(db, reader.key.id);
    expect((await f.request('nobody', '/api/sessions', bearer(reader.secret))).status).toBe(401);
  });

  it('keeps Bull Board and /metrics for the admin', async () => {
    expect(await json(await f.request('acme', '/queues/api/queues'))).toEqual({
      status: 403,
      body: { error: { type: 'permission_error', message: 'this needs the admin credential' } },
    });
    expect((await f.request('acme', '/metrics')).status).toBe(403);
    const metrics = await f.request('admin', '/metrics');
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toMatch(/compactor_queue_depth\{queue="compaction",state="completed"\} \d+/);
    expect(text).toMatch(/compactor_dashboard_auth_failures_total\{reason="missing"\} \d+/);
  });

  it('answers the health checks without credentials', async () => {
    expect(await json(await f.request('nobody', '/healthz'))).toEqual({
      status: 200,
      body: { status: 'ok' },
    });
    const ready = await json(await f.request('nobody', '/readyz'));
    expect(ready.status).toBe(200);
    // The queue's dependency is checked: Redis on the redis backend; on postgres, Postgres alone.
    expect(ready.body).toMatchObject({
      ready: true,
      checks:
        f.backend === 'redis' ? { redis: { ok: true }, postgres: { ok: true } } : { postgres: { ok: true } },
    });
    if (f.backend === 'postgres') expect(ready.body.checks).not.toHaveProperty('redis');
  });
});

describe('ledger API', () => {
  it('lists only the caller tenant sessions, page by page, with size and last compaction', async () => {
    const seen: Json[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await json(await f.request('acme', `/api/sessions?limit=2${query}`));
      expect(page.status).toBe(200);
      expect(page.body.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.sessions);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.map((s) => s.id)).toEqual([
      'a-1',
      'a-2',
      'a-3',
      'a-4',
      'a-5',
      'busy',
      'hostile',
      'long',
      'tiny',
    ]);
    const a1 = seen.find((s) => s.id === 'a-1');
    expect(a1).toMatchObject({
      compactionCount: 1,
      lastCompaction: { status: 'applied', strategy: 'slidingWindow' },
    });
    expect(a1?.messageCount).toBeGreaterThan(0);
    expect(seen.find((s) => s.id === 'a-2')?.lastCompaction).toBeNull();
  });

  it('answers 400 naming the field for bad input', async () => {
    const tooMany = await json(await f.request('acme', '/api/sessions?limit=201'));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/^query\.limit: /);
    expect(tooMany.body.error).toMatchObject({ type: 'invalid_request_error', field: 'query.limit' });
    const cursor = await json(await f.request('acme', '/api/sessions?cursor=not-a-cursor'));
    expect(cursor).toMatchObject({
      status: 400,
      body: { error: { message: expect.stringMatching(/^query\.cursor/) } },
    });
    const id = await json(await f.request('acme', '/api/sessions/a-1/compactions/12'));
    expect(id.body.error.message).toMatch(/^path\.compactionId: /);
    const body = await json(
      await f.request('acme', '/api/sessions/a-2/compact', post({ strategy: { type: 'magic' } })),
    );
    expect(body.status).toBe(400);
    expect(body.body.error.message).toMatch(/^body\.strategy/);
    const extra = await json(await f.request('acme', '/api/sessions/a-2/compact', post({ strateg: 'typo' })));
    expect(extra.body.error.message).toMatch(/^body/);
    const notJson = await f.request('acme', '/api/sessions/a-2/compact', { method: 'POST', body: '{}' });
    expect(notJson.status).toBe(415);
  });

  it('reads a POST body by the rules of the API: size, UTF-8, nesting, encoding; nothing is enqueued when refused', async () => {
    const waitingBefore = await f.producer.queue.getJobCountByTypes(
      'waiting',
      'active',
      'completed',
      'failed',
    );
    const send = async (body: string | Uint8Array, headers: Record<string, string> = {}) =>
      json(
        await f.request('acme', '/api/sessions/a-3/compact', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        }),
      );
    const large = await send(
      JSON.stringify({ strategy: { type: 'slidingWindow' }, pad: 'x'.repeat(100_000) }),
    );
    expect(large.status).toBe(413);
    const invalid = await send(
      Uint8Array.from([...new TextEncoder().encode('{"waitMs":'), 0xff, 0x30, 0x7d]),
    );
    expect(invalid).toMatchObject({ status: 400, body: { error: { field: 'body' } } });
    expect(invalid.body.error.message).toMatch(/^body: not valid UTF-8 at byte offset 10 \(0xff\)/);
    const deep = await send(`{"strategy":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect(deep.status).toBe(400);
    expect(deep.body.error.message).toMatch(/^body: nests deeper than 128 levels/);
    const coded = await send('{}', { 'content-encoding': 'compress' });
    expect(coded.status).toBe(415);
    expect(await f.producer.queue.getJobCountByTypes('waiting', 'active', 'completed', 'failed')).toBe(
      waitingBefore,
    );
  });

  it('answers an unknown and a foreign session alike (404)', async () => {
    const foreign = await json(await f.request('acme', '/api/sessions/g-1'));
    const unknown = await json(await f.request('acme', '/api/sessions/g-2'));
    expect(foreign).toEqual({
      status: 404,
      body: { error: { type: 'not_found_error', message: 'session "g-1" not found' } },
    });
    expect(unknown).toEqual({
      status: 404,
      body: { error: { type: 'not_found_error', message: 'session "g-2" not found' } },
    });
    expect((await f.request('acme', '/api/sessions/g-1/compactions')).status).toBe(404);
    expect((await f.request('acme', '/sessions/g-1')).status).toBe(404);
    expect((await f.request('globex', '/api/sessions/g-1')).status).toBe(200);
  });

  it('lets the admin name a tenant, and never a tenant another one', async () => {
    const missing = await json(await f.request('admin', '/api/sessions'));
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toMatch(/^query\.tenant: /);
    const globex = await json(await f.request('admin', '/api/sessions?tenant=globex'));
    expect(globex.body.sessions.map((s: { id: string }) => s.id)).toEqual(['g-1']);
    expect((await f.request('acme', '/api/sessions?tenant=globex')).status).toBe(403);
    expect((await f.request('acme', '/api/sessions?tenant=acme')).status).toBe(200);
  });

  it('shows a session ledger and one compaction with what it archived, content only when asked', async () => {
    const ledger = await json(await f.request('acme', '/api/sessions/a-1/compactions'));
    expect(ledger.body.compactions).toHaveLength(1);
    const row = ledger.body.compactions[0];
    expect(row).toMatchObject({ status: 'applied', strategy: 'slidingWindow', trigger: 'event' });
    expect(row).not.toHaveProperty('summary');
    // The payback predicted before it; the measurement's bookkeeping stays out of the JSON.
    expect(row.paybackRatio).toEqual(expect.any(Number));
    expect(row.paybackInputs).toMatchObject({ horizon: 'history', summaryUsd: 0 });
    expect(row.measuredRequests).toBeNull();
    expect(row).not.toHaveProperty('measuredEventIds');

    const detail = await json(await f.request('acme', `/api/sessions/a-1/compactions/${row.id}?limit=3`));
    expect(detail.status).toBe(200);
    expect(detail.body.archived.totalMessages).toBe(row.messagesArchived);
    expect(detail.body.archived.totalTokens).toBe(row.tokensBefore - row.tokensAfter);
    expect(detail.body.archived.messages).toHaveLength(Math.min(3, row.messagesArchived));
    const first = detail.body.archived.messages[0];
    expect(Object.keys(first).sort()).toEqual(
      ['createdAt', 'kind', 'pinned', 'role', 'seq', 'tokenCount', 'toolCallId', 'toolName'].sort(),
    );
    expect(first).toMatchObject({ seq: expect.any(Number), tokenCount: expect.any(Number), pinned: false });
    // Every archived message, page by page, in seq order.
    const seqs: number[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await json(await f.request('acme', `/api/sessions/a-1/compactions/${row.id}?limit=4${q}`));
      seqs.push(...page.body.archived.messages.map((m: { seq: number }) => m.seq));
      cursor = page.body.archived.nextCursor;
    } while (cursor);
    expect(seqs).toHaveLength(row.messagesArchived);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);

    const withContent = await json(
      await f.request('acme', `/api/sessions/a-1/compactions/${row.id}?limit=1&content=true`),
    );
    expect(typeof withContent.body.archived.messages[0].content).toBe('string');
    const other = await json(await f.request('globex', `/api/sessions/a-1/compactions/${row.id}`));
    expect(other.status).toBe(404);
  });

  it('compacts now and answers what happened: applied, with the sizes before and after', async () => {
    const answer = await json(
      await f.request(
        'acme',
        '/api/sessions/a-2/compact',
        post({ strategy: { type: 'slidingWindow', maxMessages: 5 } }),
      ),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      eventId: expect.any(String),
      jobId: jobIdOf('acme', answer.body.eventId),
      coalesced: false,
      state: 'completed',
      outcome: 'applied',
      result: { ledgerStatus: 'applied' },
      compaction: { status: 'applied', trigger: 'manual' },
    });
    const { compaction } = answer.body;
    expect(answer.body.result).toMatchObject({
      compactionId: compaction.id,
      messagesBefore: compaction.messagesBefore,
      messagesAfter: compaction.messagesAfter,
    });
    expect(compaction.messagesAfter).toBeLessThan(compaction.messagesBefore);
    expect(answer.body.message).toBe(
      `applied: messages ${compaction.messagesBefore} → ${compaction.messagesAfter}, tokens ${compaction.tokensBefore.toLocaleString('en-US')} → ${compaction.tokensAfter.toLocaleString('en-US')}`,
    );
    const job = await f.producer.queue.getJob(answer.body.jobId);
    expect(job?.data).toMatchObject({ tenantId: 'acme', sessionId: 'a-2', trigger: 'manual' });
    const ledger = await json(await f.request('acme', '/api/sessions/a-2/compactions'));
    expect(ledger.body.compactions).toMatchObject([
      { id: compaction.id, status: 'applied', trigger: 'manual' },
    ]);
    expect((await f.request('globex', '/api/sessions/a-2/compact', post())).status).toBe(404);
  });

  it('says a skip and its reason', async () => {
    const answer = await json(
      await f.request(
        'acme',
        '/api/sessions/tiny/compact',
        post({ strategy: { type: 'slidingWindow', maxMessages: 5 } }),
      ),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      state: 'completed',
      outcome: 'skipped',
      result: { ledgerStatus: 'skipped', reason: expect.any(String) },
      compaction: { status: 'skipped', trigger: 'manual' },
    });
    expect(answer.body.message).toBe(`skipped: ${answer.body.result.reason}`);
  });

  it('says a failure and its error', async () => {
    // The LLM refuses the request as sent (400): retrying cannot help, the job fails for good.
    f.fake?.enqueue({ status: 400, message: 'max_tokens: too large for this model' });
    const answer = await json(
      await f.request(
        'acme',
        '/api/sessions/a-4/compact',
        post({ strategy: { type: 'summarize', keepRecent: 4 } }),
      ),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ state: 'failed', outcome: 'failed', error: expect.any(String) });
    expect(answer.body.error).toContain('max_tokens: too large for this model');
    expect(answer.body.message).toBe(`failed: ${answer.body.error}`);
    const [row] = (await json(await f.request('acme', '/api/sessions/a-4/compactions'))).body.compactions;
    expect(row).toMatchObject({ status: 'failed', trigger: 'manual' });
  });

  it('answers 202 when the job is still running when the wait ends, and waits not at all when told', async () => {
    {
      // A worker holds the session: the summary job goes back to delayed until it is let go.
      const lease = await f.leases.acquire('acme', 'busy');
      expect(lease).not.toBeNull();
      const answer = await json(
        await f.request(
          'acme',
          '/api/sessions/busy/compact',
          post({ strategy: { type: 'summarize', keepRecent: 4 }, waitMs: 300 }),
        ),
      );
      expect(answer.status).toBe(202);
      expect(answer.body).toMatchObject({
        state: 'running',
        outcome: 'running',
        jobId: jobIdOf('acme', answer.body.eventId),
      });
      expect(answer.body.message).toMatch(
        /^still running after [\d.]+ s \(job (waiting|active|delayed)\); the ledger will show the outcome$/,
      );
      await lease?.release();
      const job = await waitFor(async () => {
        const j = await f.producer.queue.getJob(answer.body.jobId);
        return j?.finishedOn ? j : undefined;
      });
      expect(job.returnvalue).toMatchObject({ ledgerStatus: 'applied' });
    }
    const queued = await json(await f.request('acme', '/api/sessions/busy/compact', post({ waitMs: 0 })));
    expect(queued).toMatchObject({ status: 202, body: { state: 'queued', message: 'enqueued' } });
    await waitFor(async () => (await f.producer.queue.getJob(queued.body.jobId))?.finishedOn);
    const tooLong = await json(
      await f.request('acme', '/api/sessions/busy/compact', post({ waitMs: 60_000 })),
    );
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toMatch(/^body\.waitMs: /);
  });

  it('restores a compaction, waits for a running compaction (409), and refuses what cannot be restored', async () => {
    const [row] = (await json(await f.request('acme', '/api/sessions/a-1/compactions'))).body.compactions;
    const path = `/api/sessions/a-1/compactions/${row.id}/restore`;
    {
      // Another holder of the session's lease: a compaction is running.
      const lease = await f.leases.acquire('acme', 'a-1');
      expect(lease).not.toBeNull();
      const busy = await json(await f.request('acme', path, post()));
      expect(busy.status).toBe(409);
      expect(busy.body.error.message).toMatch(/being compacted right now/);
      await lease?.release();
    }
    const dry = await json(await f.request('acme', path, post({ dryRun: true })));
    expect(dry.body).toMatchObject({ status: 'dry-run' });
    expect(dry.body.restoredSeqs).toHaveLength(row.messagesArchived);
    const done = await json(await f.request('acme', path, post()));
    expect(done).toMatchObject({
      status: 200,
      body: { status: 'restored', compaction: { status: 'restored' } },
    });
    const again = await json(await f.request('acme', path, post()));
    expect(again.body.status).toBe('already-restored');
    expect(violations(await audit(f.tdb.database.db, 'acme', 'a-1'))).toEqual([]);

    const skipped = await f.compact('acme', 'a-3', { type: 'none' });
    expect(skipped.state).toBe('completed');
    const [none] = (await json(await f.request('acme', '/api/sessions/a-3/compactions'))).body.compactions;
    const refused = await json(
      await f.request('acme', `/api/sessions/a-3/compactions/${none.id}/restore`, post()),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/skipped/);
  });

  it('refuses a write sent from another site', async () => {
    const response = await f.request('acme', '/api/sessions/a-4/compact', {
      ...post(),
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
    });
    expect(response.status).toBe(403);
  });
});

describe('Bull Board', () => {
  it('retrying a completed job has no second effect: the ledger key absorbs it', async () => {
    const { jobId, state } = await f.compact('acme', 'a-5', { type: 'slidingWindow', maxMessages: 6 });
    expect(state).toBe('completed');
    const before = await f.tdb.database
      .sql`select * from compactions where tenant_id = 'acme' and session_id = 'a-5'`;
    const live = await f.tdb.database.sql`select count(*)::int as n from messages where session_id = 'a-5'`;
    const retry = await f.request('admin', `/queues/api/queues/compaction/${jobId}/retry`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(retry.status).toBe(204);
    const job = await waitFor(async () => {
      const j = await f.producer.queue.getJob(jobId);
      return j && (await j.getState()) === 'completed' && j.returnvalue?.status === 'duplicate'
        ? j
        : undefined;
    });
    expect(job.returnvalue).toMatchObject({ status: 'duplicate', ledgerStatus: 'applied' });
    const after = await f.tdb.database
      .sql`select * from compactions where tenant_id = 'acme' and session_id = 'a-5'`;
    expect(after).toEqual(before);
    expect(
      await f.tdb.database.sql`select count(*)::int as n from messages where session_id = 'a-5'`,
    ).toEqual(live);
    expect(violations(await audit(f.tdb.database.db, 'acme', 'a-5'))).toEqual([]);
  });

  it("links a session's job to its session page", async () => {
    const list = await json(
      await f.request('admin', '/queues/api/queues?activeQueue=compaction&status=completed'),
    );
    const queue = list.body.queues.find((q: { name: string }) => q.name === 'compaction');
    const job = queue.jobs.find((j: { data: { sessionId: string } }) => j.data.sessionId === 'a-1');
    expect(job.externalUrl).toEqual({ displayText: 'Session page', href: '/sessions/a-1?tenant=acme' });
    expect((await f.request('admin', job.externalUrl.href)).status).toBe(200);
  });
});

describe('session page', () => {
  it('renders the chart, the checkpoint and the ledger, with session content escaped', async () => {
    const response = await f.request('acme', '/sessions/hostile');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    expect(html).toContain('<svg class="chart" data-compactions="1"');
    expect(html).toContain('class="ledger"');
    expect(html).toContain(
      '&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>alert');
    // The only script is the page's own, under the nonce.
    const nonce = /script-src 'nonce-([^']+)'/.exec(
      response.headers.get('content-security-policy') ?? '',
    )?.[1];
    expect(html.match(/<script\b[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
  });

  it('lists the sessions with links, and asks the admin for a tenant', async () => {
    const html = await (await f.request('acme', '/sessions')).text();
    expect(html).toContain('<a href="/sessions/a-1">a-1</a>');
    expect(html).not.toContain('g-1');
    const prompt = await (await f.request('admin', '/sessions')).text();
    expect(prompt).toContain('name="tenant"');
    const admin = await (await f.request('admin', '/sessions?tenant=acme')).text();
    expect(admin).toContain('<a href="/sessions/a-1?tenant=acme">a-1</a>');
  });

  it("serves a compaction's page: scoped, validated, every value escaped, no script", async () => {
    const [row] = (await json(await f.request('acme', '/api/sessions/hostile/compactions'))).body.compactions;
    const path = `/sessions/hostile/compactions/${row.id}`;
    const response = await f.request('acme', path);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await response.text();
    expect(html).toContain(
      '<h1>Compaction <span class="status-applied">applied</span> of session hostile</h1>',
    );
    expect(html).toContain('<a class="back" href="/sessions/hostile#c-');
    expect(html).toContain(`<p class="archived-total">${row.messagesArchived} messages,`);
    // The hostile summary, model and archived message, escaped (and the message clipped).
    expect(html).toContain('<pre class="summary">&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
    expect(html).toContain('<th scope="row">model</th><td>&lt;script&gt;');
    expect(html).toMatch(
      /<td class="preview">(&lt;script&gt;.*?){3}<span class="muted">… \([\d,]+ characters\)<\/span><\/td>/,
    );
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toMatch(/<script\b/);

    const admin = await f.request('admin', `${path}?tenant=acme`);
    expect(admin.status).toBe(200);
    expect(await admin.text()).toContain(`href="/sessions/hostile?tenant=acme#c-${row.id}"`);
    expect((await f.request('globex', path)).status).toBe(404);
    expect((await f.request('acme', '/sessions/hostile/compactions/12')).status).toBe(400);
    expect(await (await f.request('acme', '/sessions/hostile/compactions/12')).text()).toContain(
      'path.compactionId: ',
    );
    const unknown = await f.request(
      'acme',
      '/sessions/hostile/compactions/00000000-0000-4000-8000-000000000000',
    );
    expect(unknown.status).toBe(404);
    const cursor = await f.request('acme', `${path}?cursor=nope`);
    expect(cursor.status).toBe(400);
    expect(await cursor.text()).toContain('query.cursor: ');
  });

  it('links each ledger row to its page', async () => {
    const [row] = (await json(await f.request('acme', '/api/sessions/a-1/compactions'))).body.compactions;
    const html = await (await f.request('acme', '/sessions/a-1')).text();
    expect(html).toContain(`<a href="/sessions/a-1/compactions/${row.id}">details</a>`);
    expect(html).toContain(`<td class="num">predicted ${Number(row.paybackRatio).toFixed(2)}×</td>`);
    const details = await (await f.request('acme', `/sessions/a-1/compactions/${row.id}`)).text();
    expect(details).toContain('<th scope="row">payback predicted</th>');
    expect(details).toContain('no run reported since');
  });

  it('lists the live context: the last messages of a long session, the totals of all, content escaped', async () => {
    const html = await (await f.request('acme', '/sessions/long')).text();
    const [totals] = await f.tdb.database.sql<{ tokens: number }[]>`
      select sum(token_count)::int as tokens from messages where session_id = 'long'`;
    expect(html).toContain(
      `<p class="context-total"><b>${totals?.tokens.toLocaleString('en-US')} tokens</b> in <b>250 messages</b> <span class="muted context-shown">showing the last 200 of 250 messages</span></p>`,
    );
    const seqs = [...html.matchAll(/<tr class="context-message">\n<td class="num">([\d,]+)<\/td>/g)].map(
      (m) => Number(m[1]?.replaceAll(',', '')),
    );
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => 50 + i));
    expect(html).toContain('<td class="preview">&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('context-drift');
  });

  it("says when the session's counters disagree with its rows", async () => {
    await f.tdb.database.sql`update sessions set token_count = token_count + 7 where id = 'a-3'`;
    try {
      const html = await (await f.request('acme', '/sessions/a-3')).text();
      expect(html).toMatch(
        /<p class="status-failed context-drift">the session's counters say [\d,]+ messages and [\d,]+ tokens<\/p>/,
      );
    } finally {
      await f.tdb.database.sql`update sessions set token_count = token_count - 7 where id = 'a-3'`;
    }
  });
});

describe('landing page', () => {
  /** Each tenant's totals as the ledger and the sessions hold them. */
  async function expectedTotals() {
    return f.tdb.database.sql<
      { tenant_id: string; sessions: number; tokens: number; compactions: number; failures: number }[]
    >`
      select s.tenant_id, s.sessions, s.tokens, coalesce(c.compactions, 0)::int as compactions,
             coalesce(c.failures, 0)::int as failures
      from (select tenant_id, count(*)::int as sessions, sum(token_count)::int as tokens
            from sessions group by tenant_id) s
      left join (select tenant_id, (count(*) filter (where status in ('applied', 'restored')))::int as compactions,
                        (count(*) filter (where status = 'failed'))::int as failures
                 from compactions group by tenant_id) c using (tenant_id)
      order by s.tokens desc`;
  }

  it("shows the admin every tenant's totals, the biggest and the failing sessions, linked", async () => {
    const response = await f.request('admin', '/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await response.text();
    const expected = await expectedTotals();
    const tenants = [...html.matchAll(/<tr class="tenant-row" data-tenant="([^"]+)">([\s\S]*?)<\/tr>/g)];
    expect(tenants.map((m) => m[1])).toEqual(expected.map((t) => t.tenant_id));
    for (const [i, t] of expected.entries()) {
      const cells = [...(tenants[i]?.[2] ?? '').matchAll(/<td class="num[^"]*">([^<]*)<\/td>/g)].map(
        (m) => m[1],
      );
      expect(cells[0]).toBe(String(t.sessions));
      expect(cells[2]).toBe(t.tokens.toLocaleString('en-US'));
      expect(cells[3]).toBe(String(t.compactions));
      expect(cells[4]).toBe(String(t.failures));
      expect(cells[5]).toMatch(/^\$\d+\.\d{4}$/);
    }
    expect(html).toContain('<a class="tenant" href="/?tenant=acme">acme</a>');
    expect(html).toContain('<a href="/sessions?tenant=globex">sessions</a>');
    // The biggest session of all, first, linked with its tenant.
    const [biggest] = await f.tdb.database.sql<{ tenant_id: string; id: string }[]>`
      select tenant_id, id from sessions order by token_count desc, tenant_id, id limit 1`;
    expect(html).toMatch(
      new RegExp(
        `<tr class="big-session"><td>${biggest?.tenant_id}</td>\\n<td><a href="/sessions/${biggest?.id}\\?tenant=${biggest?.tenant_id}">`,
      ),
    );
    // a-4's summary failed (the "compact now" test): it is listed, with its error and its row's page.
    const [failed] = await f.tdb.database.sql<{ id: string }[]>`
      select id from compactions where session_id = 'a-4' and status = 'failed'`;
    expect(html).toContain('<td><a href="/sessions/a-4?tenant=acme">a-4</a></td>');
    expect(html).toContain(`<a href="/sessions/a-4/compactions/${failed?.id}?tenant=acme">details</a>`);
    expect(html).toContain('max_tokens: too large for this model');
    // Session content is untrusted: the hostile agent id is escaped.
    expect(html).toContain('&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;');
    expect(html).not.toMatch(/<script\b/);
  });

  it('shows a tenant its own sessions only, and the admin a tenant it names', async () => {
    const html = await (await f.request('globex', '/')).text();
    expect(html).toContain('<h1>Overview of globex</h1>');
    expect(html).toContain('<tr class="tenant-row" data-tenant="globex">');
    expect(html).toContain('<a href="/sessions/g-1">g-1</a>');
    expect(html).not.toContain('acme');
    expect(html).toMatch(/<table class="failing">[\s\S]*<td colspan="5" class="muted">none<\/td>/);
    const acme = await (await f.request('acme', '/')).text();
    expect(acme).toContain('<td><a href="/sessions/a-4">a-4</a></td>');
    expect(acme).not.toContain('g-1');
    expect((await f.request('globex', '/?tenant=acme')).status).toBe(403);
    const named = await (await f.request('admin', '/?tenant=globex')).text();
    expect(named).toContain('<h1>Overview of globex</h1>');
    expect(named).toContain('<a href="/sessions/g-1?tenant=globex">g-1</a>');
    expect((await f.request('nobody', '/')).status).toBe(401);
  });
});
