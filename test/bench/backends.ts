/**
 * The queue backends the benchmark compares (parts 1 and 2): each run gets a queue of its own on
 * one backend, for the compactor worker and for the floor alike, and leaves nothing behind.
 *
 * - Redis: a fresh key prefix on REDIS_URL, BullMQ's default classes; its keys are deleted after.
 * - Postgres: a fresh schema `q_bench_<hex>` in the bench database, migrated by
 *   `migrateQueueSchema`, BullMQ's classes bound by `withBackend(createPostgresBackend)` (through
 *   `postgresQueueBackend`); the schema is dropped after. The queue's connections are backends of
 *   the bench database, so the bench's Postgres CPU reading (`databaseCpuMs`) counts them.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type postgres from 'postgres';
import {
  migrateQueueSchema,
  postgresQueueBackend,
  type QueueBackend,
  type QueueBackendKind,
  redisQueueBackend,
} from '../../producer/queue/backend.ts';
import type { Config } from '../../worker/config/config.ts';
import { REDIS_URL } from '../support/env.ts';
import { cleanRedis, testConfig } from '../support/fixtures.ts';

/** The backends a `--backends` list may name, in the order the bench runs them. */
export const BENCH_BACKENDS: readonly QueueBackendKind[] = ['redis', 'postgres'];

/**
 * Parses `--backends` ("redis,postgres", any order, no repeats).
 * @throws {Error} naming the option and the unknown or repeated name.
 */
export function parseBackends(text: string): QueueBackendKind[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new Error('--backends: give redis, postgres or both (comma-separated)');
  for (const n of names)
    if (!BENCH_BACKENDS.includes(n as QueueBackendKind))
      throw new Error(`--backends: unknown backend "${n}" (redis or postgres)`);
  if (new Set(names).size !== names.length) throw new Error(`--backends: "${text}" names a backend twice`);
  return BENCH_BACKENDS.filter((b) => names.includes(b));
}

/** The two workers parts 1 and 2 compare. */
export type BenchSide = 'floor' | 'compactor';

/**
 * The sides of `--sides` (comma-separated `floor`, `compactor`), floor first.
 * @throws {Error} naming an unknown or repeated side, or an empty list.
 */
export function parseSides(text: string): BenchSide[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const all: BenchSide[] = ['floor', 'compactor'];
  if (names.length === 0) throw new Error('--sides: give floor, compactor or both (comma-separated)');
  for (const n of names)
    if (!all.includes(n as BenchSide)) throw new Error(`--sides: unknown side "${n}" (floor or compactor)`);
  if (new Set(names).size !== names.length) throw new Error(`--sides: "${text}" names a side twice`);
  return all.filter((side) => names.includes(side));
}

/** One run's isolated queue on one backend. */
export interface RunQueues {
  readonly kind: QueueBackendKind;
  /** BullMQ's classes and connection options for this run's queue (the floor's and the bench's). */
  readonly queues: QueueBackend;
  /** A compactor config whose queues are this run's (its prefix on Redis, its schema on Postgres). */
  config(overrides?: Partial<Config>): Config;
  /** Deletes the run's queue (Redis keys or Postgres schema) and closes what it opened. Never throws. */
  cleanup(): Promise<void>;
}

/**
 * A fresh queue on `kind` for one run against the bench database `url`; on Postgres its schema is
 * created and migrated first, and `sql` (a pool on that database) drops it in `cleanup`.
 */
export async function openRunQueues(
  kind: QueueBackendKind,
  url: string,
  sql: postgres.Sql,
): Promise<RunQueues> {
  const id = randomBytes(4).toString('hex');
  const prefix = `bench${id}`;
  if (kind === 'postgres') {
    const schema = `q_bench_${id}`;
    await migrateQueueSchema({ connection: url, schema });
    return {
      kind,
      queues: postgresQueueBackend({ connection: url, schema }),
      config: (overrides = {}) =>
        testConfig(url, prefix, { queueBackend: 'postgres', queueSchema: schema, ...overrides }),
      cleanup: () =>
        sql.unsafe(`drop schema if exists "${schema}" cascade`).then(
          () => undefined,
          () => undefined,
        ),
    };
  }
  const open = () => new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const shared = open();
  return {
    kind,
    queues: redisQueueBackend({ prefix, shared, open, where: REDIS_URL }),
    config: (overrides = {}) => testConfig(url, prefix, { queueBackend: 'redis', ...overrides }),
    cleanup: async () => {
      await shared.quit().catch(() => shared.disconnect());
      await cleanRedis(prefix).catch(() => undefined);
    },
  };
}
