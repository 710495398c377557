/**
 * Fault injection: a Redis Cluster (3 primaries, 3 replicas, the test's own redis-server
 * processes) loses the primary that owns the queue prefix's hash slot in the middle of a run
 * (SIGKILL), and its replica takes over. Two `compactor worker` processes and the producer run
 * against the cluster through its seed nodes, with the hash-tagged prefix `{t…}`.
 *
 * What it shows: every session is compacted exactly once, under its event's idempotency key or,
 * for an event whose job the failover lost, under the key of the sweep that found the session
 * still over its trigger; no idempotency key applies twice; the audit finds no violation; no job
 * is left failed; every key compactor wrote is in the prefix's one slot; the sweep scheduler
 * survives the failover; `/readyz` answers ready once the cluster is whole again.
 *
 * Redis replication is asynchronous: writes a primary acknowledged and had not yet sent to its
 * replica when it died are gone after the failover (a job added, a job moved to completed, a
 * lease taken). A job that reappears as waiting or active is run again and finds its idempotency
 * key in the ledger (outcome `duplicate`); a lease lost lets a second worker in, and the Postgres
 * fence still applies one compaction per session version; a job lost outright is the sweep's.
 *
 * A second test runs `compactor dashboard` and `compactor api` on a cluster: Bull Board lists the
 * queues, compact-now waits for its job through QueueEvents, a restore takes the session's lease;
 * then the CLI's `enqueue`, `compact` and `restore` against the same cluster.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { SWEEP_SCHEDULER_ID } from '../../worker/queue/sweeps/sweep.ts';
import { runCli } from '../support/cli.ts';
import { describeDeadline, patient } from '../support/patience.ts';
import { freePort } from '../support/ports.ts';
import { type Child, startCompactor } from '../support/processes.ts';
import { RedisCluster } from '../support/redis-cluster.ts';
import { fastTimings, faultSuite, logged, type Scenario, SUMMARIZE, until } from './harness.ts';

const suite = faultSuite();

/** A cluster and a scenario on it; the cluster is destroyed when the scenario cannot start. */
async function clusterScenario(
  options?: Parameters<typeof RedisCluster.start>[0],
): Promise<{ cluster: RedisCluster; s: Scenario }> {
  const cluster = await RedisCluster.start(options);
  try {
    return { cluster, s: await suite.scenario({ cluster }) };
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
}

/** Sessions, each with one event that needs a compaction. */
const SESSIONS = 48;
/** Jobs held in their LLM call when the primary dies: active jobs with locks and leases. */
const HELD = 4;

describe('a Redis Cluster primary killed mid-run', () => {
  it('its replica takes over; nothing lost, nothing applied twice', {
    timeout: patient(90_000),
  }, async () => {
    const started = Date.now();
    const lap = (what: string) => console.info(`cluster test: ${what} at ${Date.now() - started} ms`);
    const { cluster, s } = await clusterScenario({ nodeTimeoutMs: 1_500 });
    lap('cluster formed');
    const sweepQueue = new Queue('compaction-sweep', { connection: s.redis, prefix: s.prefix });
    sweepQueue.on('error', () => {});
    s.onCleanup(() => sweepQueue.close());

    // A trigger a session of the corpus (163 messages) is over, and one compaction brings it under:
    // what a sweep acts on.
    await setPolicy(s.tdb.database.db, s.tenantId, null, {
      strategy: SUMMARIZE,
      triggers: { maxMessages: 100 },
    });
    // Sweeps on, at a cadence that never comes round during the test: the scheduler is upserted
    // on the cluster, and its first (immediate) sweep runs before there are sessions.
    const metricsPort = await freePort();
    const env = { ...fastTimings(), COMPACTOR_SWEEP_EVERY_MS: '600000', COMPACTOR_BATCH_POLL_MS: '600000' };
    const workers = [
      s.startWorker({
        concurrency: 4,
        env: { ...env, COMPACTOR_METRICS_PORT: String(metricsPort), COMPACTOR_METRICS_HOST: '127.0.0.1' },
      }),
      s.startWorker({ concurrency: 4, env }),
    ];
    for (const w of workers) await logged(w, 'worker started', () => true, 30_000);
    await until(() => workers.some((w) => w.logs().some((l) => l.msg === 'sweep done')), 20_000);
    expect((await sweepQueue.getJobSchedulers()).map((j) => j.key)).toContain(SWEEP_SCHEDULER_ID);
    lap('workers started');

    const sessions = Array.from({ length: SESSIONS }, (_, i) => `s${i}`);
    for (let i = 0; i < sessions.length; i += 8)
      await Promise.all(sessions.slice(i, i + 8).map((id) => s.seed(id)));
    lap('sessions seeded');

    // An agent service retries an enqueue that failed (the producer fails fast while a slot has
    // no primary) with the same eventId: BullMQ takes it as the same job.
    const eventOf = new Map<string, string>();
    let enqueueRetries = 0;
    const send = async (sessionId: string) => {
      const eventId = randomUUID();
      eventOf.set(sessionId, eventId);
      const deadline = Date.now() + patient(20_000);
      for (;;) {
        try {
          await s.producer.runCompleted({ eventId, tenantId: s.tenantId, sessionId, strategy: SUMMARIZE });
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          enqueueRetries++;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };

    const half = SESSIONS / 2;
    s.gate.hold(HELD);
    for (const id of sessions.slice(0, half)) await send(id);
    await until(() => s.gate.held === HELD, 20_000);
    await waitApplied(s, 8);
    lap('first half enqueued, some applied, 4 held in their LLM call');

    const slot = await cluster.slotOf(s.prefix);
    const owner = await cluster.ownerOf(slot);
    if (!owner) throw new Error(`no primary serves slot ${slot}`);
    const killedAt = Date.now();
    await cluster.kill(owner.port);
    // The second half is enqueued while the slot has no primary, and after.
    const late = (async () => {
      for (const id of sessions.slice(half)) await send(id);
    })();
    const promoted = await cluster.waitFailedOver(slot, owner.port);
    const failoverMs = Date.now() - killedAt;
    lap(`primary ${owner.port} killed; replica ${promoted.port} promoted after ${failoverMs} ms`);
    s.gate.release();
    await late;
    lap(`second half enqueued (${enqueueRetries} enqueue attempts retried)`);

    // Every event's job completes, or is gone (a write the dead primary had not replicated).
    const states = await waitFor(
      async () => {
        const seen = await Promise.all(
          sessions.map(async (id) => s.queue.getJobState(s.job(eventOf.get(id) as string))),
        );
        return seen.every((st) => st === 'completed' || st === 'failed' || st === 'unknown')
          ? seen
          : undefined;
      },
      45_000,
      () => s.logTail(),
    );
    const lost = sessions.filter((_, i) => states[i] === 'unknown');
    lap(`events settled: ${states.filter((x) => x === 'completed').length} completed, ${lost.length} lost`);
    expect(states.filter((x) => x === 'failed')).toEqual([]);
    // How the jobs ended: `duplicate` is a job run again (its lock lapsed while the slot had no
    // primary, or its move to completed was lost) that found its key in the ledger.
    const outcomes = new Map<string, number>();
    let stalled = 0;
    for (const id of sessions) {
      const job = await s.queue.getJob(s.job(eventOf.get(id) as string));
      if (!job) continue;
      const status = String((job.returnvalue as { status?: string } | null)?.status);
      outcomes.set(status, (outcomes.get(status) ?? 0) + 1);
      if (job.stalledCounter > 0 || job.attemptsMade > 1) stalled++;
    }
    lap(
      `job outcomes: ${[...outcomes].map(([k, n]) => `${n} ${k}`).join(', ')}; ${stalled} run more than once`,
    );
    expect([...outcomes.keys()].filter((k) => k !== 'applied' && k !== 'duplicate')).toEqual([]);

    // A session whose event never reached a job, as one the failover lost outright would be.
    await s.seed('lost');
    sessions.push('lost');
    lost.push('lost');

    // The sweep: a session whose event's job was lost is still over its trigger; a sweep finds it
    // and enqueues a job of its own (run here once, as `compactor sweep`, rather than waiting).
    const sweep = await runCli(['sweep'], {
      DATABASE_URL: s.tdb.url,
      REDIS_URL: '',
      COMPACTOR_REDIS_CLUSTER_NODES: cluster.seed,
      COMPACTOR_QUEUE_PREFIX: s.prefix,
      COMPACTOR_LOG_LEVEL: 'warn',
    });
    expect(sweep.code, sweep.stderr).toBe(0);
    const summary = JSON.parse(sweep.stdout.trim().split('\n').at(-1) as string) as { due: number };
    lap(`sweep after the failover: ${summary.due} sessions due`);
    expect(summary.due).toBe(lost.length);
    await waitFor(
      async () => {
        const counts = await s.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).every((n) => n === 0);
      },
      30_000,
      () => s.logTail(),
    );

    // Exactly one applied compaction per session; per event key at most one; the audit is clean.
    const ledger = await s.ledger();
    const applied = ledger.filter((r) => r.status === 'applied');
    const perSession = new Map<string, number>();
    for (const r of applied) perSession.set(r.sessionId, (perSession.get(r.sessionId) ?? 0) + 1);
    expect(
      sessions.filter((id) => perSession.get(id) !== 1),
      'sessions not applied exactly once',
    ).toEqual([]);
    for (const id of sessions) {
      const rows = applied.filter((r) => r.sessionId === id);
      const expectedKey = lost.includes(id) ? undefined : s.key(eventOf.get(id) as string);
      if (expectedKey)
        expect(
          rows.map((r) => r.idempotencyKey),
          id,
        ).toEqual([expectedKey]);
      else
        expect(
          rows.map((r) => r.trigger),
          id,
        ).toEqual(['sweep']);
    }
    const byStatus = new Map<string, number>();
    for (const r of ledger) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    const statuses = [...byStatus].map(([status, n]) => `${n} ${status}`);
    expect(await s.queue.getJobCounts('failed')).toEqual({ failed: 0 });
    await s.expectInvariants();
    lap(`ledger: ${statuses.join(', ')}; ${s.llmCalls()} LLM calls for ${sessions.length} sessions`);

    // Every key compactor wrote carries the prefix and lives in its slot.
    const keys: string[] = [];
    for (const n of cluster.living) {
      let cursor = '0';
      do {
        const [next, found] = (await cluster.command(n.port, 'SCAN', cursor, 'COUNT', '1000')) as [
          string,
          string[],
        ];
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
    }
    expect(keys.length).toBeGreaterThan(SESSIONS);
    expect(keys.filter((k) => !k.startsWith(`${s.prefix}:`))).toEqual([]);
    expect(new Set(await Promise.all(keys.slice(0, 50).map((k) => cluster.slotOf(k))))).toEqual(
      new Set([slot]),
    );

    // The scheduler survived; the workers kept running; /readyz says ready on the cluster.
    expect((await sweepQueue.getJobSchedulers()).map((j) => j.key)).toContain(SWEEP_SCHEDULER_ID);
    for (const w of workers) expect(w.exitCode).toBeNull();
    const ready = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => null);
      return res?.status === 200 ? ((await res.json()) as { ready: boolean }) : undefined;
    }, 15_000);
    expect(ready.ready).toBe(true);
    lap('done');
  });
});

describe('the dashboard and the HTTP API on a Redis Cluster', () => {
  it('Bull Board lists the queues, compact-now settles, a restore takes the lease, /readyz is ready; the CLI enqueues, compacts and restores', async () => {
    const { cluster, s } = await clusterScenario();
    await s.seed('by-dashboard');
    await s.seed('by-api');
    s.startWorker({ concurrency: 2 });
    const token = 'cluster-admin-token-0f3a';
    const env = {
      DATABASE_URL: s.tdb.url,
      REDIS_URL: '',
      COMPACTOR_REDIS_CLUSTER_NODES: cluster.seed,
      COMPACTOR_QUEUE_PREFIX: s.prefix,
      COMPACTOR_LOG_LEVEL: 'info',
      COMPACTOR_SWEEP_EVERY_MS: '0',
      COMPACTOR_DASHBOARD_TOKEN: token,
    };
    const children: Child[] = [];
    s.onCleanup(async () => {
      for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
      await Promise.all(children.map((c) => c.done));
    });
    const serve = async (command: 'dashboard' | 'api'): Promise<string> => {
      const child = startCompactor([command, '--port', '0'], env);
      children.push(child);
      return waitFor(async () => {
        if (child.exitCode !== null) throw new Error(`${command} exited: ${child.output().stderr}`);
        const line = child
          .output()
          .stderr.split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg?: string; url?: string })
          .find((l) => l.msg === `${command} listening` && l.url);
        return line?.url;
      }, 30_000);
    };
    const [dashboard, api] = await Promise.all([serve('dashboard'), serve('api')]);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const ready = await fetch(`${dashboard}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: { redis: { ok: boolean } } }).checks.redis.ok).toBe(true);

    const compact = await fetch(`${dashboard}/api/sessions/by-dashboard/compact?tenant=${s.tenantId}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ strategy: SUMMARIZE, waitMs: 20_000 }),
    });
    const compacted = (await compact.json()) as {
      state: string;
      compaction?: { id: string; status: string };
    };
    expect(compact.status, JSON.stringify(compacted)).toBe(200);
    expect(compacted).toMatchObject({ state: 'completed', compaction: { status: 'applied' } });

    const queues = (await (await fetch(`${dashboard}/queues/api/queues`, { headers })).json()) as {
      queues: Array<{ name: string; counts: Record<string, number> }>;
    };
    expect(queues.queues.map((q) => q.name)).toEqual(['compaction', 'compaction-sweep', 'webhooks']);
    expect(queues.queues[0]?.counts.completed).toBe(1);

    const restore = await fetch(
      `${dashboard}/api/sessions/by-dashboard/compactions/${compacted.compaction?.id}/restore?tenant=${s.tenantId}`,
      { method: 'POST', headers, body: '{}' },
    );
    expect(restore.status, await restore.clone().text()).toBe(200);

    const viaApi = await fetch(`${api}/v1/sessions/by-api/compact?wait=20000`, {
      method: 'POST',
      headers: { ...headers, 'compactor-tenant': s.tenantId },
      body: JSON.stringify({ strategy: SUMMARIZE }),
    });
    expect(viaApi.status, await viaApi.clone().text()).toBe(200);

    // The CLI on the cluster: `enqueue` (the worker applies its job), `compact` in-process under the
    // session's lease, `restore` of that compaction.
    await s.seed('by-cli-enqueue');
    await s.seed('by-cli-compact');
    const cli = (...args: string[]) => runCli(args, { ...env, COMPACTOR_LOG_LEVEL: 'warn' });
    const session = (id: string) => ['--tenant', s.tenantId, '--session', id];
    const enqueued = await cli('enqueue', ...session('by-cli-enqueue'), '--strategy', 'slidingWindow:10');
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await waitFor(
      async () => (await s.ledger()).some((r) => r.sessionId === 'by-cli-enqueue' && r.status === 'applied'),
      30_000,
      () => s.logTail(),
    );
    const compactedByCli = await cli(
      'compact',
      ...session('by-cli-compact'),
      '--strategy',
      'slidingWindow:10',
    );
    expect(compactedByCli.code, compactedByCli.stderr).toBe(0);
    const row = JSON.parse(compactedByCli.stdout) as { id: string; status: string };
    expect(row.status).toBe('applied');
    const restoredByCli = await cli('restore', ...session('by-cli-compact'), '--compaction', row.id);
    expect(restoredByCli.code, restoredByCli.stderr).toBe(0);

    for (const c of children) c.kill('SIGTERM');
    for (const c of children) expect((await c.done).code).toBe(0);
    expect((await s.ledger()).map((r) => [r.sessionId, r.status]).sort()).toEqual([
      ['by-api', 'applied'],
      ['by-cli-compact', 'restored'],
      ['by-cli-enqueue', 'applied'],
      ['by-dashboard', 'restored'],
    ]);
  });
});

/** Waits until the tenant's ledger has `n` applied rows. */
async function waitApplied(s: Scenario, n: number): Promise<void> {
  await waitFor(
    async () => (await s.ledger()).filter((r) => r.status === 'applied').length >= n,
    30_000,
    () => s.logTail(),
  );
}

/**
 * Polls `check` every 100 ms until it returns a value; `timeoutMs` is the idle machine's deadline,
 * scaled by the measured slowdown (patience.ts). The error carries `context()`.
 */
async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs: number,
  context?: () => string,
): Promise<T> {
  const began = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - began > patient(timeoutMs))
      throw new Error(`not met within ${describeDeadline(timeoutMs)}\n${context?.() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
