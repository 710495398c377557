/**
 * A hostile tenant's webhook URL: it may not point compactor at the operator's own network, when
 * it is set nor when a delivery connects (a name that resolves elsewhere by then), and the errors it
 * sees of its deliveries tell nothing of what answered. Deliveries are signed as Standard Webhooks,
 * the id included. Real Postgres, Redis, BullMQ and HTTP: the only receiver is a local server on
 * 127.0.0.1, and no request ever leaves this machine (the refused addresses are refused before any
 * connection; host names resolve through the test's own lookup).
 */
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyWebhookSignature } from '../../producer/webhook-signature.ts';
import { WEBHOOK_DELIVERY, WEBHOOKS_QUEUE, webhookMessageId } from '../../shared/contract/webhooks.ts';
import { type WebhookTargetPolicy, webhookAgents } from '../../worker/outbound/webhook-targets.ts';
import { deliveriesOf, getWebhook, setWebhook } from '../../worker/postgres/webhooks.ts';
import { postWebhook } from '../../worker/queue/webhooks/webhook-delivery.ts';
import { startWebhookWorker } from '../../worker/queue/webhooks/webhook-worker.ts';
import { runCli } from '../support/cli.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const STRICT: WebhookTargetPolicy = { allowedHosts: [], allowHttp: false };
/** What an operator with a receiver on this machine sets. */
const LOCAL: WebhookTargetPolicy = { allowedHosts: ['127.0.0.1'], allowHttp: true };

/** The worker below runs under the strict policy, apart from http (the receiver has no TLS). */
const ctx = useIntegration({ config: { webhookTargets: { allowedHosts: [], allowHttp: true } } });

/** Every request the local receiver got. */
const received: { path: string; body: string; headers: IncomingMessage['headers'] }[] = [];
let port = 0;

function receive(request: IncomingMessage, response: ServerResponse) {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    received.push({
      path: request.url ?? '',
      body: Buffer.concat(chunks).toString('utf8'),
      headers: request.headers,
    });
    response.writeHead(204).end();
  });
}

beforeAll(async () => {
  const server = createServer(receive);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  ctx.onTeardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
});

/** A resolver that answers `address` for every name (what a rebinding DNS server would say). */
function resolvesTo(address: string): LookupFunction {
  const family = address.includes(':') ? 6 : 4;
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family } satisfies LookupAddress]);
    else callback(null, address, family);
  }) as LookupFunction;
}

const db = () => ctx.tdb.database.db;

describe('setting a webhook URL', () => {
  const refused: [string, RegExp][] = [
    ['http://hooks.example.com/compactor', /must be https:\/\/ .*COMPACTOR_WEBHOOK_ALLOW_HTTP/],
    ['https://127.0.0.1/', /127\.0\.0\.1 is a loopback address/],
    ['https://127.8.9.10:8443/', /loopback/],
    ['https://[::1]/', /::1 is a loopback address/],
    ['https://10.0.0.1/', /10\.0\.0\.1 is a private address \(RFC 1918\)/],
    ['https://172.16.5.4/', /private address/],
    ['https://192.168.1.1/admin', /private address/],
    ['https://[fd00::1]/', /unique local/],
    ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address .*metadata/],
    ['https://[fe80::1]/', /link-local/],
    ['https://100.64.0.1/', /CGNAT/],
    ['https://0.0.0.0/', /unspecified/],
    ['https://[::]/', /unspecified/],
    ['https://224.0.0.1/', /multicast/],
    ['https://255.255.255.255/', /broadcast/],
    ['https://[::ffff:127.0.0.1]/', /IPv4-mapped/],
    ['https://[::ffff:169.254.169.254]/', /IPv4-mapped/],
    ['https://2130706433/', /host 2130706433 means 127\.0\.0\.1, a loopback address/],
    ['https://0x7f.1/', /host 0x7f\.1 means 127\.0\.0\.1/],
    ['https://017700000001/', /host 017700000001 means 127\.0\.0\.1/],
    ['https://127.1/', /means 127\.0\.0\.1/],
    ['https://0xa9fea9fe/', /means 169\.254\.169\.254, a link-local address/],
    [
      'https://metadata.google.internal/computeMetadata/v1/',
      /metadata\.google\.internal is a name of the local network/,
    ],
    ['https://metadata/', /local network/],
    ['https://localhost:8080/', /local network/],
    ['https://api.localhost/', /local network/],
    ['https://printer.local/', /local network/],
    ['https://LOCALHOST./', /local network/],
  ];

  it.each(refused)('refuses %s, naming why, and writes nothing', async (url, why) => {
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    await expect(setWebhook(db(), tenant, { url }, { targets: STRICT })).rejects.toThrow(why);
    await expect(setWebhook(db(), tenant, { url }, { targets: STRICT })).rejects.toMatchObject({
      name: 'WebhookTargetError',
    });
    expect(await getWebhook(db(), tenant)).toBeNull();
  });

  it('refuses a name that resolves to an internal address, even among public ones', async () => {
    const lookup = async () => [{ address: '93.184.215.14' }, { address: '10.1.2.3' }];
    await expect(
      setWebhook(db(), 'resolves', { url: 'https://hooks.attacker.example/' }, { targets: STRICT, lookup }),
    ).rejects.toThrow(/hooks\.attacker\.example resolves to 10\.1\.2\.3, a private address/);
    expect(await getWebhook(db(), 'resolves')).toBeNull();
    // A public answer passes.
    const publicOnly = async () => [{ address: '93.184.215.14' }];
    await setWebhook(
      db(),
      'resolves',
      { url: 'https://hooks.example.com/' },
      { targets: STRICT, lookup: publicOnly },
    );
    expect(await getWebhook(db(), 'resolves')).toMatchObject({ url: 'https://hooks.example.com/' });
  });

  it('refuses through the CLI with exit code 1 and the reason, unless the operator allows the host', async () => {
    const refusedRun = await runCli(
      ['webhook', 'set', '--tenant', 'cli', '--url', 'https://169.254.169.254/latest/'],
      ctx.cliEnv,
    );
    expect(refusedRun.code).toBe(1);
    expect(refusedRun.stderr).toMatch(/169\.254\.169\.254 is a link-local address/);
    const allowed = await runCli(
      ['webhook', 'set', '--tenant', 'cli', '--url', `http://127.0.0.1:${port}/in`],
      {
        ...ctx.cliEnv,
        COMPACTOR_WEBHOOK_ALLOWED_HOSTS: 'hooks.corp.example, 127.0.0.1',
        COMPACTOR_WEBHOOK_ALLOW_HTTP: 'true',
      },
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    const badList = await runCli(['webhook', 'show', '--tenant', 'cli'], {
      ...ctx.cliEnv,
      COMPACTOR_WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/99',
    });
    expect(badList.code).not.toBe(0);
    expect(badList.stderr).toMatch(/COMPACTOR_WEBHOOK_ALLOWED_HOSTS: "10\.0\.0\.0\/99" is not a host name/);
  });

  it('accepts what the allow-list names: an address, a range, a host name', async () => {
    const policy = { allowedHosts: ['10.20.0.0/16', 'hooks.corp.example', '127.0.0.1'], allowHttp: false };
    for (const url of ['https://10.20.3.4/', 'https://hooks.corp.example/', 'https://127.0.0.1:9000/']) {
      await setWebhook(db(), 'allowed', { url }, { targets: policy });
      expect((await getWebhook(db(), 'allowed'))?.url).toBe(url);
    }
    await expect(
      setWebhook(db(), 'allowed', { url: 'https://10.21.0.1/' }, { targets: policy }),
    ).rejects.toThrow(/private address/);
  });
});

describe('delivering', () => {
  const attempt = () => ({
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    messageId: webhookMessageId('t', randomUUID()),
    body: '{}',
    timeoutMs: 5_000,
  });
  const agentsFor = (policy: WebhookTargetPolicy) => {
    const agents = webhookAgents(policy);
    ctx.onTeardown(async () => agents.destroy());
    return { policy, agents };
  };

  it('refuses, as it connects, a name that resolves to 127.0.0.1 now (DNS rebinding), sending nothing', async () => {
    const before = received.length;
    const url = `http://hooks.attacker.example:${port}/rebound`;
    // Set while the name resolved to a public address...
    await setWebhook(
      db(),
      'rebind',
      { url },
      { targets: { allowedHosts: [], allowHttp: true }, lookup: async () => [{ address: '93.184.215.14' }] },
    );
    // ...then it answers 127.0.0.1 to the delivery's own lookup.
    const outcome = await postWebhook({
      ...attempt(),
      url,
      targets: agentsFor({ allowedHosts: [], allowHttp: true }),
      lookup: resolvesTo('127.0.0.1'),
    });
    expect(outcome).toMatchObject({ delivered: false, statusCode: null });
    expect(outcome.error).toMatch(/^refused by address policy: /);
    expect(received.length).toBe(before);
  });

  it('refuses an internal address stored before the policy, and lets an allowed local receiver through', async () => {
    const before = received.length;
    const url = `http://127.0.0.1:${port}/direct`;
    const refused = await postWebhook({
      ...attempt(),
      url,
      targets: agentsFor({ allowedHosts: [], allowHttp: true }),
    });
    expect(refused.error).toMatch(/^refused by address policy: /);
    const named = await postWebhook({
      ...attempt(),
      url: `http://metadata.google.internal:${port}/`,
      targets: agentsFor({ allowedHosts: [], allowHttp: true }),
      lookup: resolvesTo('127.0.0.1'),
    });
    expect(named.error).toMatch(/^refused by address policy: .*local network/);
    expect(received.length).toBe(before);

    const allowed = await postWebhook({ ...attempt(), url, targets: agentsFor(LOCAL) });
    expect(allowed).toMatchObject({ delivered: true, statusCode: 204, error: null });
    // An allowed address is checked on the resolved answer too: a name resolving into it passes.
    const byName = await postWebhook({
      ...attempt(),
      url: `http://hooks.corp.example:${port}/by-name`,
      targets: agentsFor(LOCAL),
      lookup: resolvesTo('127.0.0.1'),
    });
    expect(byName).toMatchObject({ delivered: true, statusCode: 204 });
    expect(received.slice(before).map((r) => r.path)).toEqual(['/direct', '/by-name']);
  });

  it('with an allowed address, still refuses every other internal answer, quietly', async () => {
    const warned = vi.spyOn(console, 'warn');
    try {
      for (const address of ['::1', '10.0.0.7', '169.254.169.254']) {
        const outcome = await postWebhook({
          ...attempt(),
          url: `http://hooks.corp.example:${port}/other`,
          targets: agentsFor(LOCAL),
          lookup: resolvesTo(address),
        });
        expect(outcome.error, address).toMatch(
          new RegExp(
            `^refused by address policy: DNS lookup ${address.replace(/\./g, '\\.')}.* is not allowed`,
          ),
        );
      }
      // Nothing on stderr: no stack trace per connection from comparing IPv6 with an IPv4 range.
      expect(warned).not.toHaveBeenCalled();
    } finally {
      warned.mockRestore();
    }
    expect(received.filter((r) => r.path === '/other')).toEqual([]);
  });

  it("records the detail for the operator, and shows the tenant only the failure's class", async () => {
    const queue = ctx.queue(WEBHOOKS_QUEUE);
    ctx.onTeardown(() => queue.close());
    const worker = startWebhookWorker(ctx.services(), { lookup: resolvesTo('127.0.0.1') });
    ctx.onTeardown(() => worker.close());
    // Written straight to the table, as a URL set before the address policy would be.
    await ctx.tdb.database.sql`
      insert into webhooks (tenant_id, url, secret) values
        ('scanner', ${`http://10.0.0.7:${port}/`}, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
        ('rebinder', ${`http://rebind.attacker.example:${port}/`}, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;
    for (const tenantId of ['scanner', 'rebinder']) {
      const eventId = randomUUID();
      await queue.add(WEBHOOK_DELIVERY, { tenantId, eventId, body: '{}' }, { jobId: eventId, attempts: 1 });
      await waitFor(async () => ((await deliveriesOf(db(), tenantId)).length > 0 ? true : undefined));
      const [record] = await deliveriesOf(db(), tenantId);
      expect(record?.error).toMatch(/^refused by address policy: .*(10\.0\.0\.7|127\.0\.0\.1)/);

      const show = await runCli(['webhook', 'show', '--tenant', tenantId], ctx.cliEnv);
      expect(show.code, show.stderr).toBe(0);
      const shown = JSON.parse(show.stdout) as { recentDeliveries: { error: string }[] };
      expect(shown.recentDeliveries.map((d) => d.error)).toEqual(['refused by address policy']);
      // The URL is the tenant's own; nothing else names an address, a port or a system error.
      expect(JSON.stringify(shown.recentDeliveries.map((d) => d.error))).not.toMatch(
        /127\.0\.0\.1|10\.0\.0\.7|ECONN|DNS lookup|\d{4,5}/,
      );
      const detail = await runCli(['webhook', 'show', '--tenant', tenantId, '--detail'], ctx.cliEnv);
      expect(detail.stdout).toContain(record?.error ?? 'no record');
    }
  });

  it('shows a tenant "connection failed", not the port that refused it', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const outcome = await postWebhook({
      ...attempt(),
      url: `http://127.0.0.1:${closedPort}/`,
      targets: agentsFor(LOCAL),
    });
    expect(outcome.error).toMatch(new RegExp(`^connection failed: ECONNREFUSED .*${closedPort}`));
    await ctx.tdb.database.sql`
      insert into webhooks (tenant_id, url, secret) values ('closed', 'https://hooks.example.com/', 'whsec_x')`;
    await ctx.tdb.database.sql`
      insert into webhook_deliveries (tenant_id, event_id, attempt, url, status_code, error, duration_ms, delivered)
      values ('closed', ${randomUUID()}, 1, ${`http://127.0.0.1:${closedPort}/`}, null, ${outcome.error}, 1, false)`;
    const show = await runCli(['webhook', 'show', '--tenant', 'closed'], ctx.cliEnv);
    const shown = JSON.parse(show.stdout) as { recentDeliveries: { error: string }[] };
    expect(shown.recentDeliveries[0]?.error).toBe('connection failed');
    expect(JSON.stringify(shown.recentDeliveries)).not.toMatch(/ECONNREFUSED/);
  });
});

describe('signatures', () => {
  it('verify with the standardwebhooks package and with ours; a changed id does not', async () => {
    const targets = (() => {
      const agents = webhookAgents(LOCAL);
      ctx.onTeardown(async () => agents.destroy());
      return { policy: LOCAL, agents };
    })();
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const compactionId = randomUUID();
    const body = JSON.stringify({ type: 'session.compacted', compactionId });
    const outcome = await postWebhook({
      url: `http://127.0.0.1:${port}/signed`,
      secret,
      messageId: webhookMessageId('acme', compactionId),
      body,
      timeoutMs: 5_000,
      targets,
    });
    expect(outcome.delivered).toBe(true);
    const got = received.find((r) => r.path === '/signed');
    if (!got) throw new Error('nothing received');
    const headers = got.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(webhookMessageId('acme', compactionId));
    expect(new Webhook(secret).verify(got.body, headers)).toEqual(JSON.parse(body));
    expect(verifyWebhookSignature(got.body, headers, secret).id).toBe(headers['webhook-id']);

    // The id another tenant's compaction would carry, or any other: the signature no longer holds.
    const replayed = { ...headers, 'webhook-id': webhookMessageId('evil', compactionId) };
    expect(() => new Webhook(secret).verify(got.body, replayed)).toThrow('No matching signature found');
    expect(() => verifyWebhookSignature(got.body, replayed, secret)).toThrow(
      expect.objectContaining({ reason: 'mismatch' }),
    );
  });
});
