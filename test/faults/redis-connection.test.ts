/**
 * Fault injection on the Redis connection: the worker's connections killed again and again while
 * jobs flow (it reconnects; every event settles once), Redis absent when the worker starts (it
 * says so and keeps retrying, then proceeds), and the producer facing an unreachable Redis (it
 * fails fast with a clear error instead of hanging).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createProducer } from '../../producer/index.ts';
import { testPrefix } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { faultSuite, logged, RedisServer } from './harness.ts';

const suite = faultSuite();

describe('Redis connection faults', () => {
  it("the worker's connections killed (CLIENT KILL ADDR) while jobs flow: it reconnects, every event settles once", async () => {
    const redis = await RedisServer.create();
    await redis.start();
    const s = await suite.scenario({ redis });
    const sessions = Array.from({ length: 8 }, (_, i) => `s${i}`);
    for (const id of sessions) await s.seed(id);
    // Every connection now open is the test's; any other one is the worker's.
    await Promise.all([s.queue.waitUntilReady(), s.producer.queue.waitUntilReady(), s.redis.ping()]);
    const ours = new Set(parseClients(await s.redis.client('LIST')).map((c) => c.id));
    const w = s.startWorker({ concurrency: 3 });
    await logged(w, 'worker started');
    s.fake.enqueue(...sessions.map(() => ({ delayMs: 300 })));

    const jobs = [];
    let killed = 0;
    for (const [i, id] of sessions.entries()) {
      jobs.push(await s.addJob(id));
      for (let round = 0; round < (i < sessions.length - 1 ? 1 : 4); round++) {
        await new Promise((r) => setTimeout(r, 250));
        for (const c of parseClients(await s.redis.client('LIST'))) {
          if (ours.has(c.id)) continue;
          killed += Number(
            await s.redis.client('KILL', 'ADDR', c.addr).then(
              () => 1,
              () => 0,
            ),
          );
        }
      }
    }
    expect(killed).toBeGreaterThan(10);

    for (const j of jobs) {
      expect((await s.completed(j.jobId)).ledgerStatus).toBe('applied');
      expect((await s.rowsFor(j.eventId)).map((r) => r.status)).toEqual(['applied']);
    }
    expect(w.exitCode).toBeNull();
    expect(w.rawStderr()).toEqual([]);
    expect(await s.queue.getJobCounts('failed', 'active', 'waiting', 'delayed')).toEqual({
      failed: 0,
      active: 0,
      waiting: 0,
      delayed: 0,
    });
    console.info(`CLIENT KILL: ${killed} worker connections killed; ${s.llmCalls()} LLM calls for 8 events`);
    await s.expectInvariants();
  });

  it('Redis down at start-up: the worker says so, keeps retrying, and proceeds once Redis appears', async () => {
    const redis = await RedisServer.create(); // not started: nothing listens on its port yet
    const s = await suite.scenario({ redis });
    await s.seed('s1');
    const w = s.startWorker();
    const line = await logged(w, 'Redis connection error; retrying');
    expect(line.redis).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(String(line.err)).toMatch(/ECONNREFUSED/);
    expect(w.exitCode).toBeNull();

    await redis.start();
    // Told once when lost and once when back, whatever the number of attempts in between.
    await logged(w, 'Redis connection restored');
    expect(w.logs().filter((l) => l.msg === 'Redis connection error; retrying')).toHaveLength(1);
    const { jobId, eventId } = await s.addJob('s1');
    expect(await s.completed(jobId)).toMatchObject({ status: 'applied' });
    expect((await s.rowsFor(eventId)).map((r) => r.status)).toEqual(['applied']);
    // Every line on stderr is a structured log line: no raw error dumps drowning the message.
    expect(w.rawStderr()).toEqual([]);
    await s.expectInvariants();
  });

  it('the producer fails fast with a clear error when Redis is unreachable', async () => {
    const port = await freePort();
    const producer = createProducer({ redisUrl: `redis://127.0.0.1:${port}`, prefix: testPrefix() });
    try {
      await expect(
        producer.runCompleted({ eventId: randomUUID(), tenantId: 't', sessionId: 's' }),
      ).rejects.toThrow(/^Redis not reachable \(status \w+\); the event was not enqueued$/);
    } finally {
      await producer.close();
    }
  });
});

/** `CLIENT LIST` lines as `{ id, addr }`. */
function parseClients(list: unknown): Array<{ id: string; addr: string }> {
  return String(list)
    .trim()
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2) as [string, string])))
    .map((c) => ({ id: c.id ?? '', addr: c.addr ?? '' }));
}
