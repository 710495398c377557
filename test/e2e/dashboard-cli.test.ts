/**
 * `compactor dashboard` and `compactor worker`'s metrics server as real processes: the refusal to
 * start without credentials, `--insecure` on loopback only, `--read-only`, health checks, and a
 * clean exit on SIGTERM. The refusals, which only print and exit, run in-process (see `runCli`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { REDIS_URL } from '../support/env.ts';
import {
  cleanRedis,
  createTestDatabase,
  type TestDatabase,
  testPrefix,
  waitFor,
} from '../support/fixtures.ts';
import { type Child, killAllChildren, startCompactor } from '../support/processes.ts';

let tdb: TestDatabase;
let prefix: string;
const TOKEN = 'cli-admin-token-7d3e91a0';

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'info',
    COMPACTOR_SWEEP_EVERY_MS: '0',
    ...extra,
  };
}

/** The `url` of the first log line with `msg`, once the child printed it. */
async function listeningUrl(child: Child, msg: string): Promise<string> {
  return waitFor(async () => {
    for (const line of child.output().stderr.split('\n')) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === msg && entry.url) return entry.url;
    }
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${child.output().stderr}`);
    return undefined;
  }, 20_000);
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = testPrefix();
});

afterAll(async () => {
  await killAllChildren();
  await cleanRedis(prefix);
  await tdb?.drop();
});

// Each test starts its own process on a port of its own and enqueues nothing: they run side by
// side, so the processes' start-ups overlap.
describe.concurrent('compactor dashboard', () => {
  it('refuses to start without credentials, and --insecure off loopback', async () => {
    const none = await runCli(['dashboard', '--port', '0'], env());
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no dashboard credentials: set COMPACTOR_DASHBOARD_TOKEN/);
    const open = await runCli(['dashboard', '--insecure', '--host', '0.0.0.0', '--port', '0'], env());
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/--insecure is only allowed on a loopback host/);
    const usage = await runCli(['dashboard', '--port', 'eighty'], env({ COMPACTOR_DASHBOARD_TOKEN: TOKEN }));
    expect(usage.code).toBe(2);
  });

  it('runs without authentication when told --insecure on loopback, and exits 0 on SIGTERM', async () => {
    const child = startCompactor(['dashboard', '--insecure', '--port', '0'], env());
    const url = await listeningUrl(child, 'dashboard listening');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const sessions = await fetch(`${url}/api/sessions?tenant=acme`);
    expect(await sessions.json()).toEqual({ sessions: [], nextCursor: null });
    child.kill('SIGTERM');
    expect((await child.done).code).toBe(0);
  });

  it('with --read-only, Bull Board and the API refuse writes', async () => {
    const child = startCompactor(
      ['dashboard', '--read-only', '--port', '0'],
      env({ COMPACTOR_DASHBOARD_TOKEN: TOKEN }),
    );
    const url = await listeningUrl(child, 'dashboard listening');
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const queues = (await (await fetch(`${url}/queues/api/queues`, { headers })).json()) as {
      queues: Array<{ name: string; readOnlyMode: boolean }>;
    };
    expect(queues.queues.map((q) => [q.name, q.readOnlyMode])).toEqual([
      ['compaction', true],
      ['compaction-sweep', true],
      ['webhooks', true],
    ]);
    const pause = await fetch(`${url}/queues/api/queues/compaction/pause`, { method: 'PUT', headers });
    expect(pause.status).toBe(405); // Bull Board's own answer for a read-only queue
    const retry = await fetch(`${url}/queues/api/queues/compaction/some-job/retry`, {
      method: 'PUT',
      headers,
    });
    expect(retry.status).toBe(405);
    const compact = await fetch(`${url}/api/sessions/x/compact?tenant=acme`, {
      method: 'POST',
      headers,
      body: '{}',
    });
    expect(await compact.json()).toEqual({
      error: { type: 'permission_error', message: 'the dashboard is read-only' },
    });
    child.kill('SIGTERM');
    expect((await child.done).code).toBe(0);
  });
});

describe.concurrent('compactor worker', () => {
  it('serves /metrics, /healthz and /readyz when COMPACTOR_METRICS_PORT is set', async () => {
    const child = startCompactor(
      ['worker', '--concurrency', '1'],
      env({ COMPACTOR_METRICS_PORT: '0', COMPACTOR_METRICS_HOST: '127.0.0.1' }),
    );
    const url = await listeningUrl(child, 'metrics, /healthz and /readyz listening');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ ready: true });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    for (const name of [
      'compactor_jobs_total',
      'compactor_compaction_duration_seconds',
      'compactor_llm_latency_seconds',
      'compactor_tokens_saved_total',
      'compactor_llm_tokens_total',
      'compactor_llm_cost_usd_total',
      'compactor_queue_depth',
      'compactor_lease_conflicts_total',
      'compactor_fence_rejections_total',
    ]) {
      expect(metrics).toContain(`# TYPE ${name} `);
    }
    child.kill('SIGTERM');
    expect((await child.done).code).toBe(0);
  });
});
