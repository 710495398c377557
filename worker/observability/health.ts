/**
 * Readiness: does this process reach Redis (PING; on a Redis Cluster, `CLUSTER INFO` saying
 * `cluster_state:ok`) and Postgres (`select 1`), each within a short timeout. On the `postgres`
 * queue backend there is no Redis: the queues live in Postgres, and its check is the only one.
 * Liveness needs no check: a process that answers HTTP is up.
 */
import type postgres from 'postgres';
import { duplicateConnection, isCluster, type RedisConnection } from '../../producer/redis/redis.ts';
import { pingPostgres } from '../postgres/queries/health.ts';

/** One dependency's answer: whether it replied in time, how long it took (ms), and why not. */
export interface ReadinessCheck {
  ok: boolean;
  ms: number;
  error?: string;
}

/** The readiness report served by `/readyz` (HTTP 200 when `ready`, else 503). */
export interface Readiness {
  ready: boolean;
  /** `redis` only on the `redis` queue backend. */
  checks: { redis?: ReadinessCheck; postgres: ReadinessCheck };
}

/** A readiness probe and the connection it owns. */
export interface ReadinessProbe {
  check(): Promise<Readiness>;
  /** Quits the probe's own Redis connection. Memoized. */
  close(): Promise<void>;
}

/** Default time a dependency has to answer, ms. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * A probe on `redis` (null: the `postgres` queue backend, Postgres alone; else duplicated into a connection of its own that fails fast while Redis is down,
 * instead of queueing commands) and the postgres.js pool `sql`. On a cluster, a PING would reach
 * one node and say nothing of the slots: the probe asks a node for `CLUSTER INFO` instead, which
 * is `cluster_state:ok` only while every slot has a reachable primary (Redis Cluster
 * specification); while a failed primary's replica is being promoted it is `fail`, and the probe
 * answers not ready.
 */
export function readinessProbe(
  redis: RedisConnection | null,
  sql: postgres.Sql,
  timeoutMs = READINESS_TIMEOUT_MS,
): ReadinessProbe {
  if (!redis) {
    return {
      async check() {
        const postgresCheck = await timed(() => pingPostgres(sql), timeoutMs);
        return { ready: postgresCheck.ok, checks: { postgres: postgresCheck } };
      },
      close: async () => {},
    };
  }
  const own = duplicateConnection(redis, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: true,
  });
  own.on('error', () => {
    // Reported by the probe's answer; avoid an unhandled 'error' event.
  });
  let closing: Promise<void> | undefined;
  return {
    async check() {
      const [redisCheck, postgresCheck] = await Promise.all([
        timed(async () => {
          if (own.status === 'wait') await own.connect();
          if (!isCluster(own)) {
            await own.ping();
            return;
          }
          const state = /cluster_state:(\w+)/.exec(await own.cluster('INFO'))?.[1];
          if (state !== 'ok') throw new Error(`Redis Cluster state ${state ?? 'unknown'}`);
        }, timeoutMs),
        timed(() => pingPostgres(sql), timeoutMs),
      ]);
      return {
        ready: redisCheck.ok && postgresCheck.ok,
        checks: { redis: redisCheck, postgres: postgresCheck },
      };
    },
    close: () => {
      closing ??=
        own.status === 'ready'
          ? own.quit().then(
              () => undefined,
              () => own.disconnect(),
            )
          : Promise.resolve(own.disconnect());
      return closing;
    },
  };
}

async function timed(run: () => Promise<unknown>, timeoutMs: number): Promise<ReadinessCheck> {
  const started = performance.now();
  try {
    await withTimeout(run(), timeoutMs);
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    return {
      ok: false,
      ms: Math.round(performance.now() - started),
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/**
 * `promise`, or a rejection after `ms`. The promise keeps running; its late result is ignored.
 * @throws {Error} `timed out after N ms`.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
