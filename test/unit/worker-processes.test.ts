/**
 * The pure rules of `compactor worker --processes N`: how many processes `--processes` asks for,
 * when the primary restarts a worker process and when it gives up, and how the processes'
 * readiness becomes the primary's /readyz.
 */
import { describe, expect, it } from 'vitest';
import { opsRoutes } from '../../worker/http/ops.ts';
import type { Readiness } from '../../worker/observability/health.ts';
import { mergeReadiness } from '../../worker/observability/processes-readiness.ts';
import { parseProcessCount } from '../../worker/runtime/processes/process-count.ts';
import {
  decideRestart,
  MAX_RESTART_DELAY_MS,
  MAX_RESTARTS_PER_WINDOW,
  pruneRestarts,
  RESTART_WINDOW_MS,
} from '../../worker/runtime/processes/restart-policy.ts';

describe('--processes', () => {
  it('is 1 when absent, the core count for auto, and a positive integer otherwise', () => {
    expect(parseProcessCount(undefined, 8)).toBe(1);
    expect(parseProcessCount('auto', 8)).toBe(8);
    expect(parseProcessCount('AUTO', 0)).toBe(1);
    expect(parseProcessCount('4', 2)).toBe(4);
    for (const bad of ['0', '-1', '1.5', 'two', '']) expect(parseProcessCount(bad, 2)).toBeNull();
  });
});

describe('restarting a worker process', () => {
  it('doubles the delay with each restart in the last minute, up to a cap', () => {
    const now = 1_000_000;
    const delays: number[] = [];
    const restarts: number[] = [];
    for (let i = 0; i < MAX_RESTARTS_PER_WINDOW; i++) {
      const decision = decideRestart(restarts, now + i);
      if (decision.action !== 'restart') throw new Error(`gave up after ${i} restarts`);
      delays.push(decision.delayMs);
      restarts.push(now + i);
    }
    expect(delays).toEqual([250, 500, 1_000, 2_000, 4_000]);
    expect(Math.max(...delays)).toBeLessThanOrEqual(MAX_RESTART_DELAY_MS);
  });

  it('gives up on the exit after the fifth restart within a minute, not on restarts spread wider', () => {
    const now = 10 * RESTART_WINDOW_MS;
    const inWindow = Array.from({ length: MAX_RESTARTS_PER_WINDOW }, (_, i) => now - 1_000 * (i + 1));
    expect(decideRestart(inWindow, now)).toEqual({ action: 'give-up', recent: MAX_RESTARTS_PER_WINDOW });
    const spread = inWindow.map((t, i) => (i === 0 ? t : t - RESTART_WINDOW_MS));
    expect(decideRestart(spread, now)).toEqual({ action: 'restart', delayMs: 500, recent: 1 });
    expect(pruneRestarts(spread, now)).toEqual([inWindow[0]]);
  });
});

describe("the primary's readiness", () => {
  const ok = (ms: number): Readiness => ({
    ready: true,
    checks: { redis: { ok: true, ms }, postgres: { ok: true, ms } },
  });

  it('is ready when every process answered ready, with the slowest answer', () => {
    expect(mergeReadiness(2, [ok(3), ok(7)])).toEqual({
      ready: true,
      checks: { redis: { ok: true, ms: 7 }, postgres: { ok: true, ms: 7 }, processes: { ok: true, ms: 0 } },
    });
  });

  it('is not ready when a process is missing or a dependency fails in any of them', () => {
    const missing = mergeReadiness(2, [ok(3), null]);
    expect(missing.ready).toBe(false);
    expect(missing.checks.processes.error).toBe('1 of 2 worker processes not running or not answering');
    const down: Readiness = {
      ready: false,
      checks: {
        redis: { ok: false, ms: 2_000, error: 'timed out after 2000 ms' },
        postgres: { ok: true, ms: 1 },
      },
    };
    const merged = mergeReadiness(2, [ok(3), down]);
    expect(merged.ready).toBe(false);
    expect(merged.checks.redis).toEqual({ ok: false, ms: 2_000, error: 'timed out after 2000 ms' });
    expect(merged.checks.processes.ok).toBe(true);
  });

  it('names no dependency as failing before any process has answered', () => {
    expect(mergeReadiness(2, [null, null]).checks).toEqual({
      processes: { ok: false, ms: 0, error: '2 of 2 worker processes not running or not answering' },
    });
  });

  it('has no redis check on the postgres queue backend', () => {
    const postgresOnly: Readiness = { ready: true, checks: { postgres: { ok: true, ms: 2 } } };
    expect(mergeReadiness(1, [postgresOnly]).checks).not.toHaveProperty('redis');
  });
});

describe("the primary's /metrics", () => {
  it('answers 503 for a scrape a worker process did not answer in time, and logs it', async () => {
    const warned: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warned.push(args) } as unknown as Parameters<
      typeof opsRoutes
    >[0]['logger'];
    const app = opsRoutes({
      // prom-client's AggregatorRegistry.clusterMetrics rejects so after 5 s without every answer.
      registry: {
        metrics: () => Promise.reject(new Error('Operation timed out.')),
        contentType: 'text/plain',
      },
      ready: async () => ({ ready: true, checks: {} }),
      logger,
    });
    const answer = await app.request('/metrics');
    expect(answer.status).toBe(503);
    expect(await answer.text()).toBe('metrics unavailable for this scrape; try again\n');
    expect(warned).toHaveLength(1);
  });
});
