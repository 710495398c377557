/**
 * A Redis outage as a worker process sees it (its own redis-server, stopped and started again):
 * every line the worker writes to stderr is a JSON log line, and the outage is told once per change
 * of state (lost, restored), not once per reconnection attempt. The shared Redis is never touched.
 */
import { describe, expect, it } from 'vitest';
import { faultSuite, logged, RedisServer } from '../faults/harness.ts';
import { freePort } from '../support/ports.ts';

const suite = faultSuite();

describe('a Redis outage seen by a worker', () => {
  it('logs one structured line when the connection is lost and one when it is back, no raw dumps', async () => {
    const redis = await RedisServer.create();
    await redis.start();
    const s = await suite.scenario({ redis });
    const w = s.startWorker({
      env: { COMPACTOR_SWEEP_EVERY_MS: '60000', COMPACTOR_METRICS_PORT: String(await freePort()) },
    });
    await logged(w, 'worker started');
    await redis.stop('SIGTERM');
    // Long enough for many reconnection attempts (ioredis retries every 50-2000 ms).
    await new Promise((r) => setTimeout(r, 4_000));
    await redis.start();
    const restored = await logged(w, 'Redis connection restored');
    expect(restored).toMatchObject({ state: 'restored', redis: redis.url });
    expect(restored.errors).toBeGreaterThan(1); // many failed attempts, told once
    expect(w.rawStderr()).toEqual([]);
    const states = w
      .logs()
      .filter((l) => l.level >= 40)
      .map((l) => `${l.msg} ${String(l.state)}`);
    expect(states).toEqual(['Redis connection error; retrying lost']);
  });
});
