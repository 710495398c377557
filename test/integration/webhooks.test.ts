/**
 * Signed webhooks end to end on real Redis, Postgres, BullMQ and HTTP: a receiver (node:http on a
 * free port of 127.0.0.1, which the operator's allow-list of this file lets webhooks reach, over
 * http) that checks each delivery with `verifyWebhookSignature` as a tenant's service would;
 * compactions applied by the worker; deliveries by the webhook worker, retried by BullMQ with the
 * small backoff this file configures, and every attempt in `webhook_deliveries`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import {
  verifyWebhookSignature,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WebhookSignatureError,
} from '../../producer/webhook-signature.ts';
import { WEBHOOKS_QUEUE, webhookMessageId } from '../../shared/contract/webhooks.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf, SESSION_EVENTS_QUEUE, sessionCompactedEventSchema } from '../../shared/protocol/events.ts';
import { webhookAgents } from '../../worker/outbound/webhook-targets.ts';
import { watchWebhookPresence } from '../../worker/postgres/webhook-presence.ts';
import { deliveriesOf, removeWebhook, setWebhook } from '../../worker/postgres/webhooks.ts';
import { postWebhook } from '../../worker/queue/webhooks/webhook-delivery.ts';
import { createWebhookEnqueuer } from '../../worker/queue/webhooks/webhook-queue.ts';
import { startWebhookWorker } from '../../worker/queue/webhooks/webhook-worker.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

/** The operator's allow-list for this file's local receiver (as COMPACTOR_WEBHOOK_* spell it). */
const targets = { allowedHosts: ['127.0.0.1'], allowHttp: true };
const ctx = useIntegration({ config: { webhookBackoffMs: 100, webhookTargets: targets } });
/** The CLI's environment with the same allow-list. */
const cliEnv = () => ({
  ...ctx.cliEnv,
  COMPACTOR_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  COMPACTOR_WEBHOOK_ALLOW_HTTP: 'true',
});

/** One request the receiver got: the raw body, its headers, and what verification said. */
interface Received {
  path: string;
  body: string;
  headers: IncomingMessage['headers'];
  /** `ok`, or the reason the signature was refused. */
  verdict: string;
  status: number;
}

const received: Received[] = [];
/** The secret the receiver verifies each path's deliveries with (its tenant's). */
const secrets = new Map<string, string>();
let base = '';
let queue: Queue;

/**
 * The receiver: `/ok` answers 204; `/flaky` answers 503 to its first two requests, then 200;
 * `/slow` never answers. A delivery whose signature does not verify gets 400.
 */
function receive(request: IncomingMessage, response: ServerResponse) {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const path = request.url ?? '';
    if (path === '/slow') return;
    const body = Buffer.concat(chunks).toString('utf8');
    let verdict = 'ok';
    try {
      verifyWebhookSignature(body, request.headers, secrets.get(path) ?? '');
    } catch (error) {
      verdict = error instanceof WebhookSignatureError ? error.reason : String(error);
    }
    const earlier = received.filter((r) => r.path === path).length;
    const status =
      verdict !== 'ok' ? 400 : path === '/flaky' && earlier < 2 ? 503 : path === '/flaky' ? 200 : 204;
    received.push({ path, body, headers: request.headers, verdict, status });
    response.writeHead(status).end();
  });
}

beforeAll(async () => {
  const server = createServer(receive);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const worker = startWebhookWorker(ctx.services());
  queue = ctx.queue(WEBHOOKS_QUEUE);
  ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
  ctx.onTeardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  ctx.onTeardown(() => worker.close());
});

/** Seeds a session and compacts it through the worker; returns the applied compaction's id. */
async function compacted(tenantId: string, sessionId: string): Promise<string> {
  const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  const outcome = await ctx.producer.compactNow(
    { tenantId, sessionId, strategy: { type: 'slidingWindow', maxMessages: 10 } },
    { timeoutMs: 20_000 },
  );
  if (
    outcome.state !== 'settled' ||
    outcome.result.ledgerStatus !== 'applied' ||
    !outcome.result.compactionId
  ) {
    throw new Error(`compaction not applied: ${JSON.stringify(outcome)}`);
  }
  return outcome.result.compactionId;
}

/** Waits until the delivery job of tenant `tenantId`'s `eventId` has completed; returns its result. */
async function delivered(tenantId: string, eventId: string) {
  return waitFor(async () => {
    const job = await queue.getJob(jobIdOf(tenantId, eventId));
    if (job?.failedReason && job.attemptsMade >= (job.opts.attempts ?? 1)) throw new Error(job.failedReason);
    return (await job?.isCompleted()) ? job?.returnvalue : undefined;
  });
}

describe('webhooks', () => {
  it('delivers each applied compaction once, signed over the session.compacted body', async () => {
    const set = await runCli(['webhook', 'set', '--tenant', 'hooked', '--url', `${base}/ok`], cliEnv());
    expect(set.code, set.stderr).toBe(0);
    const stored = JSON.parse(set.stdout);
    expect(stored).toMatchObject({ tenantId: 'hooked', url: `${base}/ok`, enabled: true });
    expect(stored.secret).toMatch(/^whsec_/);
    expect(set.stderr).toContain('shown this once');
    secrets.set('/ok', stored.secret);

    const id = await compacted('hooked', 'h1');
    expect(await delivered('hooked', id)).toEqual({ delivered: true, attempt: 1, statusCode: 204 });

    const got = received.filter((r) => r.path === '/ok');
    expect(got).toHaveLength(1);
    const [delivery] = got as [Received];
    expect(delivery.verdict).toBe('ok');
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers[WEBHOOK_ID_HEADER]).toBe(webhookMessageId('hooked', id));
    expect(delivery.headers[WEBHOOK_TIMESTAMP_HEADER]).toMatch(/^\d+$/);
    expect(delivery.headers[WEBHOOK_SIGNATURE_HEADER]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(delivery.headers['compactor-signature']).toBeUndefined();
    // The body is the session.compacted event a BullMQ consumer gets on session-events.
    const event = sessionCompactedEventSchema.parse(JSON.parse(delivery.body));
    const published = ctx.queue(SESSION_EVENTS_QUEUE);
    try {
      expect((await published.getJob(jobIdOf('hooked', id)))?.data).toEqual(event);
    } finally {
      await published.close();
    }
    expect(event).toMatchObject({
      compactionId: id,
      tenantId: 'hooked',
      sessionId: 'h1',
      strategy: 'slidingWindow',
    });

    // A tampered body, or a signature replayed later, does not verify.
    const tampered = delivery.body.replace('"sessionId":"h1"', '"sessionId":"h2"');
    expect(tampered).not.toBe(delivery.body);
    expect(() => verifyWebhookSignature(tampered, delivery.headers, stored.secret)).toThrow(
      expect.objectContaining({ reason: 'mismatch' }),
    );
    const t = Number(delivery.headers[WEBHOOK_TIMESTAMP_HEADER]);
    expect(() =>
      verifyWebhookSignature(delivery.body, delivery.headers, stored.secret, { now: (t + 301) * 1000 }),
    ).toThrow(expect.objectContaining({ reason: 'stale' }));

    // Telling the same event again adds no second job.
    const enqueuer = createWebhookEnqueuer(ctx.queues, ctx.tdb.database.db, { backoffMs: 100 });
    try {
      expect(await enqueuer.enqueue(event)).toBe(true);
    } finally {
      await enqueuer.close();
    }
    expect((await queue.getJob(jobIdOf('hooked', id)))?.attemptsMade).toBe(1);
    expect(await queue.getJobCounts('waiting', 'active', 'delayed')).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
    });

    const rows = await deliveriesOf(ctx.tdb.database.db, 'hooked', { eventId: id });
    expect(rows).toMatchObject([
      { attempt: 1, statusCode: 204, delivered: true, error: null, url: `${base}/ok` },
    ]);
    const show = await runCli(['webhook', 'show', '--tenant', 'hooked'], cliEnv());
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).not.toContain(stored.secret);
    expect(JSON.parse(show.stdout)).toMatchObject({
      url: `${base}/ok`,
      recentDeliveries: [{ eventId: id, attempt: 1, statusCode: 204, delivered: true }],
    });
  });

  it('retries a failing receiver: delivered on attempt 3, every attempt recorded', async () => {
    const secret = `whsec_${Buffer.from('flaky-receiver-secret-0123456789').toString('base64')}`;
    secrets.set('/flaky', secret);
    const { generatedSecret } = await setWebhook(
      ctx.tdb.database.db,
      'flaky',
      { url: `${base}/flaky`, secret },
      { targets },
    );
    expect(generatedSecret).toBeNull();

    const id = await compacted('flaky', 'f1');
    expect(await delivered('flaky', id)).toEqual({ delivered: true, attempt: 3, statusCode: 200 });

    const got = received.filter((r) => r.path === '/flaky');
    expect(got.map((r) => [r.verdict, r.status])).toEqual([
      ['ok', 503],
      ['ok', 503],
      ['ok', 200],
    ]);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    expect(new Set(got.map((r) => r.headers[WEBHOOK_ID_HEADER]))).toEqual(
      new Set([webhookMessageId('flaky', id)]),
    );
    const rows = await deliveriesOf(ctx.tdb.database.db, 'flaky', { eventId: id });
    expect(rows.reverse()).toMatchObject([
      { attempt: 1, statusCode: 503, delivered: false, error: 'HTTP 503 Service Unavailable' },
      { attempt: 2, statusCode: 503, delivered: false, error: 'HTTP 503 Service Unavailable' },
      { attempt: 3, statusCode: 200, delivered: true, error: null },
    ]);
  });

  it('enqueues nothing for a tenant without a webhook, or with a disabled one', async () => {
    const none = await compacted('silent', 's1');
    const disabled = await runCli(
      ['webhook', 'set', '--tenant', 'paused', '--url', `${base}/ok`, '--disable'],
      cliEnv(),
    );
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ enabled: false });
    const paused = await compacted('paused', 'p1');
    // compactNow settled after the worker told the compaction: session.compacted went out, no delivery.
    const published = ctx.queue(SESSION_EVENTS_QUEUE);
    try {
      for (const [tenant, id] of [
        ['silent', none],
        ['paused', paused],
      ] as const) {
        expect(await published.getJob(jobIdOf(tenant, id))).toBeDefined();
        expect(await queue.getJob(jobIdOf(tenant, id))).toBeUndefined();
      }
    } finally {
      await published.close();
    }
    expect(await deliveriesOf(ctx.tdb.database.db, 'silent')).toEqual([]);
    expect(await deliveriesOf(ctx.tdb.database.db, 'paused')).toEqual([]);

    const removed = await runCli(['webhook', 'remove', '--tenant', 'paused'], cliEnv());
    expect(removed.code, removed.stderr).toBe(0);
    const again = await runCli(['webhook', 'remove', '--tenant', 'paused'], cliEnv());
    expect([again.code, again.stderr]).toEqual([
      1,
      'compactor webhook remove: no webhook for tenant "paused"; nothing deleted\n',
    ]);
  });

  it('counts a timeout and a refused connection as failed attempts, with what happened', async () => {
    const agents = webhookAgents(targets);
    ctx.onTeardown(async () => agents.destroy());
    const attempt = {
      secret: 'x'.repeat(16),
      messageId: webhookMessageId('t', randomUUID()),
      body: '{}',
      targets: { policy: targets, agents },
    };
    expect(await postWebhook({ ...attempt, url: `${base}/slow`, timeoutMs: 200 })).toMatchObject({
      delivered: false,
      statusCode: null,
      error: 'timed out: no response within 200 ms',
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(
      await postWebhook({ ...attempt, url: `http://127.0.0.1:${port}/`, timeoutMs: 5_000 }),
    ).toMatchObject({
      delivered: false,
      statusCode: null,
      error: expect.stringMatching(/^connection failed: ECONNREFUSED/),
    });
  });

  it('a worker sees a webhook set, disabled or removed at once, though it caches the answer', async () => {
    const presence = watchWebhookPresence(ctx.tdb.database.db, ctx.tdb.database.sql);
    ctx.onTeardown(() => presence.close());
    const tenant = `presence-${randomUUID().slice(0, 8)}`;
    expect(await presence.has(tenant)).toBe(false);
    // Cached now; the change is told by NOTIFY when the writing statement commits.
    await setWebhook(ctx.tdb.database.db, tenant, { url: 'https://hooks.example/a' });
    await waitFor(async () => (await presence.has(tenant)) || undefined);
    await setWebhook(ctx.tdb.database.db, tenant, { url: 'https://hooks.example/a', enabled: false });
    await waitFor(async () => !(await presence.has(tenant)) || undefined);
    await setWebhook(ctx.tdb.database.db, tenant, { url: 'https://hooks.example/b' });
    await waitFor(async () => (await presence.has(tenant)) || undefined);
    await removeWebhook(ctx.tdb.database.db, tenant);
    await waitFor(async () => !(await presence.has(tenant)) || undefined);
    // Another tenant's answer is its own.
    expect(await presence.has(`${tenant}-other`)).toBe(false);
  });
});
