/**
 * The surfaces a process opens on its own machine, as a hostile web page or a neighbour on the
 * network would try them: `compactor api` and `compactor dashboard` with `--insecure` (no
 * credentials, loopback) reached by DNS rebinding (a foreign `Host`, and a forged Host/Origin
 * pair), and the worker's metrics server (its bind address, its token, and what `/readyz` tells).
 * Real servers on 127.0.0.1, real Redis and Postgres; the rebinding is played by sending the
 * `Host` and `Origin` a browser would send after the attacker's name resolved to 127.0.0.1.
 */
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import pino from 'pino';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../worker/config/config.ts';
import { createApiApp } from '../../worker/http/api/app.ts';
import { startApi } from '../../worker/http/api/server.ts';
import { startDashboard } from '../../worker/http/dashboard/server.ts';
import { startMetricsServer } from '../../worker/http/metrics-server.ts';
import { type Listening, opsRoutes } from '../../worker/http/ops.ts';
import { readinessProbe } from '../../worker/observability/health.ts';
import { createWorkerMetrics } from '../../worker/observability/metrics.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { silentLogger } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

/** An HTTP request to 127.0.0.1:`port` with the headers a browser would send (Host included). */
function send(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

let api: Listening;
let dashboard: Listening;

beforeAll(async () => {
  // The test config has no credentials: both run as `--insecure` on loopback would.
  api = await startApi(ctx.services(), { port: 0, host: '127.0.0.1', insecure: true });
  ctx.onTeardown(() => api.close());
  dashboard = await startDashboard(ctx.services(), {
    port: 0,
    host: '127.0.0.1',
    readOnly: false,
    insecure: true,
  });
  ctx.onTeardown(() => dashboard.close());
});

describe('--insecure servers and DNS rebinding', () => {
  const servers = () => [
    { name: 'api', port: api.port, read: '/v1/openapi.json', write: '/v1/sessions' },
    {
      name: 'dashboard',
      port: dashboard.port,
      read: '/api/sessions?tenant=acme',
      write: '/api/sessions/x/compact?tenant=acme',
    },
  ];

  it('answer only a loopback Host: localhost, 127.x, [::1], with the port', async () => {
    for (const { name, port, read } of servers()) {
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `[::1]:${port}`,
        `127.3.2.1:${port}`,
        'localhost',
      ]) {
        expect((await send(port, read, { host })).status, `${name} ${host}`).toBe(200);
      }
      for (const host of [
        `attacker.example:${port}`,
        'attacker.example',
        `127.0.0.1.nip.example:${port}`,
        `10.0.0.1:${port}`,
      ]) {
        const refused = await send(port, read, { host });
        expect(refused.status, `${name} ${host}`).toBe(403);
        expect(refused.body, name).toMatch(/answers only Host localhost, 127\.0\.0\.1 or \[::1\]/);
      }
      // Even the health check: a rebound page learns nothing.
      expect((await send(port, '/healthz', { host: `attacker.example:${port}` })).status).toBe(403);
    }
  });

  it('refuse the forged pair (Host and Origin both the attacker) and a foreign Origin on a write', async () => {
    for (const { name, port, write } of servers()) {
      const json = { 'content-type': 'application/json' };
      const forged = await send(
        port,
        write,
        { ...json, host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` },
        'POST',
        JSON.stringify({ id: 'rebound' }),
      );
      expect(forged.status, name).toBe(403);
      const foreign = await send(
        port,
        write,
        { ...json, host: `127.0.0.1:${port}`, origin: 'http://attacker.example' },
        'POST',
        JSON.stringify({ id: 'rebound' }),
      );
      expect(foreign.status, name).toBe(403);
      expect(foreign.body, name).toMatch(/cross-site request refused/);
      // Another local origin (another port) is another site too.
      const otherPort = await send(
        port,
        write,
        { ...json, host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port + 1}` },
        'POST',
        JSON.stringify({ id: 'rebound' }),
      );
      expect(otherPort.status, name).toBe(403);
    }
    // Nothing was written by any of them.
    const [row] = await ctx.tdb.database.sql<{ n: number }[]>`select count(*)::int as n from sessions`;
    expect(row?.n).toBe(0);
    // The server's own page may write.
    const own = await send(
      api.port,
      '/v1/sessions',
      {
        'content-type': 'application/json',
        host: `127.0.0.1:${api.port}`,
        origin: `http://127.0.0.1:${api.port}`,
        'compactor-tenant': 'acme',
      },
      'POST',
      JSON.stringify({ id: 'own-page' }),
    );
    expect(own.status, own.body).toBe(201);
  });
});

describe("an API mounted behind its host app's own authentication", () => {
  it("is not --insecure: it answers the host app's public Host", async () => {
    // The file's config has no credentials at all.
    const app = createApiApp(
      { db: ctx.tdb.database.db, producer: ctx.producer },
      { credentials: ctx.config.dashboard },
    );
    const answer = await app.request('/v1/openapi.json', { headers: { host: 'agents.example.com' } });
    expect(answer.status).toBe(200);
  });
});

describe('the metrics server', () => {
  it('binds loopback by default, and refuses another address without a token', async () => {
    expect(loadConfig({}).metrics).toMatchObject({ host: '127.0.0.1' });
    const metrics = createWorkerMetrics();
    await expect(startMetricsServer(ctx.services(), metrics, { port: 0, host: '0.0.0.0' })).rejects.toThrow(
      /COMPACTOR_METRICS_HOST "0\.0\.0\.0" is not a loopback address: set COMPACTOR_METRICS_TOKEN/,
    );
  });

  it('asks for the token on /metrics and for /readyz details when it has one', async () => {
    const token = 'metrics-token-8d1e4b7a2c';
    const server = await startMetricsServer(ctx.services(), createWorkerMetrics(), {
      port: 0,
      host: '127.0.0.1',
      token,
    });
    ctx.onTeardown(() => server.close());
    const bearer = { authorization: `Bearer ${token}` };
    const refused = await fetch(`${server.url}/metrics`);
    expect(refused.status).toBe(401);
    // The HTTP API's one error shape, on this surface too.
    expect(await refused.json()).toEqual({
      error: {
        type: 'authentication_error',
        message: 'a bearer token (COMPACTOR_METRICS_TOKEN) is required',
      },
    });
    expect(
      (await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-000000' } }))
        .status,
    ).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: bearer })).status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({
      status: 'ready',
      ready: true,
      checks: { redis: { ok: true }, postgres: { ok: true } },
    });
    expect(await (await fetch(`${server.url}/readyz`, { headers: bearer })).json()).toMatchObject({
      checks: { redis: { ok: true, ms: expect.any(Number) }, postgres: { ok: true, ms: expect.any(Number) } },
    });
  });
});

describe('/readyz', () => {
  it('tells anyone which dependency is down, never its error; logs the error once per change', async () => {
    // Nothing listens on port 1: both connections are refused.
    const deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: null });
    const deadSql = postgres('postgres://postgres@127.0.0.1:1/postgres', { max: 1, connect_timeout: 1 });
    const probe = readinessProbe(deadRedis, deadSql, 1_000);
    ctx.onTeardown(async () => {
      await probe.close();
      deadRedis.disconnect();
      await deadSql.end({ timeout: 1 });
    });
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString('utf8')));
          done();
        },
      }),
    );
    const app = opsRoutes({ registry: createWorkerMetrics().registry, ready: () => probe.check(), logger });
    for (let i = 0; i < 3; i++) {
      const answer = await app.request('/readyz');
      expect(answer.status).toBe(503);
      const text = await answer.text();
      expect(JSON.parse(text)).toEqual({
        status: 'not ready',
        ready: false,
        checks: { redis: { ok: false }, postgres: { ok: false } },
      });
      expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|:1\b|error/);
    }
    const failures = lines.filter((l) => l.msg === 'readiness check failed');
    expect(failures.map((l) => l.dependency).sort()).toEqual(['postgres', 'redis']);
    expect(failures.every((l) => typeof l.err === 'string' && l.err.length > 0)).toBe(true);
  });

  it("gives the dashboard's admin the details, and no one else", async () => {
    const adminToken = 'dashboard-admin-token-5c9e';
    const services = openServices(
      { ...ctx.config, dashboard: { ...ctx.config.dashboard, adminToken } },
      silentLogger,
      { poolSize: 2 },
    );
    const guarded = await startDashboard(services, {
      port: 0,
      host: '127.0.0.1',
      readOnly: true,
      insecure: false,
    });
    ctx.onTeardown(() => guarded.close());
    const open = (await (await fetch(`${guarded.url}/readyz`)).json()) as { checks: Record<string, object> };
    expect(open.checks).toEqual({ redis: { ok: true }, postgres: { ok: true } });
    const admin = await fetch(`${guarded.url}/readyz`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(await admin.json()).toMatchObject({ checks: { redis: { ok: true, ms: expect.any(Number) } } });
  });
});
