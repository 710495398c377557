/**
 * Fault injection: Redis restarted (its own redis-server with an append-only file fsynced on every
 * write). Events accepted before the restart are processed after it; a worker running across the
 * restart keeps going; every event applies exactly once.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { faultSuite, logged, RedisServer, SUMMARIZE, until } from './harness.ts';

const suite = faultSuite();

describe('a Redis restart', () => {
  it('events accepted before the restart are processed after it', async () => {
    const redis = await RedisServer.create();
    await redis.start();
    const s = await suite.scenario({ redis });
    const sessions = ['a', 'b', 'c', 'd'];
    const events = [];
    for (const id of sessions) {
      await s.seed(id);
      const eventId = randomUUID();
      const result = await s.producer.runCompleted({
        eventId,
        tenantId: s.tenantId,
        sessionId: id,
        strategy: SUMMARIZE,
      });
      expect(result).toEqual({ jobId: s.job(eventId), coalesced: false });
      events.push(eventId);
    }

    await redis.stop('SHUTDOWN');
    await redis.start();
    expect(await s.queue.getJobCounts('prioritized')).toEqual({ prioritized: 4 });

    s.startWorker({ concurrency: 2 });
    for (const e of events) {
      expect((await s.completed(s.job(e))).ledgerStatus).toBe('applied');
      expect((await s.rowsFor(e)).map((r) => r.status)).toEqual(['applied']);
    }
    expect(s.llmCalls()).toBe(4);
    await s.expectInvariants();
  });

  it.each([
    ['a quick restart', 0],
    ['an outage longer than the job locks and leases (2 s)', 3_000],
  ])('a worker running across %s keeps going; every event applies once', async (_, outageMs) => {
    const redis = await RedisServer.create();
    await redis.start();
    const s = await suite.scenario({ redis });
    const sessions = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const id of sessions) await s.seed(id);
    const w = s.startWorker({ concurrency: 2 });
    const send = async (sessionId: string) => {
      const eventId = randomUUID();
      await s.producer.runCompleted({ eventId, tenantId: s.tenantId, sessionId, strategy: SUMMARIZE });
      return eventId;
    };
    s.gate.hold(2);
    const before = [];
    for (const id of sessions.slice(0, 3)) before.push(await send(id));
    await until(() => s.gate.held === 2); // two jobs in their LLM call, one waiting

    await redis.stop('SIGTERM');
    await logged(w, 'Redis connection error; retrying');
    await new Promise((r) => setTimeout(r, outageMs));
    await redis.start();
    s.gate.release();
    const after = [];
    for (const id of sessions.slice(3)) after.push(await send(id));

    for (const e of [...before, ...after]) {
      expect((await s.completed(s.job(e))).ledgerStatus).toBe('applied');
      expect((await s.rowsFor(e)).map((r) => r.status)).toEqual(['applied']);
    }
    expect(w.exitCode).toBeNull();
    expect(w.rawStderr()).toEqual([]);
    console.info(`worker across ${_}: ${s.llmCalls()} LLM calls for 6 events`);
    await s.expectInvariants();
  });
});
