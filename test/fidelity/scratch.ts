/**
 * What a fidelity script runs compactions on: a database of its own (created, migrated, dropped
 * after), a Redis key prefix of its own for the leases, and the fake Messages API.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { openDatabase } from '../../producer/postgres/db.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { systemClock } from '../../worker/pipeline/clock.ts';
import { type CompactionOutcome, type PipelineDeps, runCompaction } from '../../worker/pipeline/pipeline.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { PostgresReads } from '../../worker/postgres/reads.ts';
import { PostgresWrites } from '../../worker/postgres/writes.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { cleanRedis, silentLogger } from '../support/fixtures.ts';

/** The parts a fidelity run uses. */
export interface Scratch {
  database: ReturnType<typeof openDatabase>;
  fake: FakeAnthropicServer;
  /** The fake API's base URL. */
  llmUrl: string;
  /**
   * One manual compaction through the real pipeline, under a fresh idempotency key.
   * @throws {Error} when the outcome is batched (a manual compaction never is).
   */
  compact(request: ScratchCompaction): Promise<CompactionOutcome>;
}

/** What {@link Scratch.compact} compacts, and with which summarizers. */
export interface ScratchCompaction {
  tenantId: string;
  sessionId: string;
  strategy: Strategy;
  summarizers: PipelineDeps['summarizers'];
}

/**
 * Runs `work` on a fresh scratch stack named after `label`, and removes everything after it,
 * whether `work` succeeds or throws.
 */
export async function withScratch<T>(label: string, work: (scratch: Scratch) => Promise<T>): Promise<T> {
  const name = `compactor_${label}_${randomBytes(5).toString('hex')}`;
  const prefix = `${label.slice(0, 3)}${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = databaseUrlFor(name);
  const database = openDatabase(url, { max: 4 });
  const redis = new Redis(REDIS_URL);
  const fake = new FakeAnthropicServer();
  const llm = await fake.start();
  try {
    await migrateDatabase(url);
    const reads = new PostgresReads(database.db);
    const writes = new PostgresWrites(database.db, reads);
    const leases = new LeaseManager(redis, { prefix });
    const compact = async ({ tenantId, sessionId, strategy, summarizers }: ScratchCompaction) => {
      const outcome = await runCompaction(
        {
          reads,
          writes,
          leases,
          summarizers,
          clock: systemClock,
          logger: silentLogger,
        },
        {
          tenantId,
          sessionId,
          strategy,
          trigger: 'manual',
          idempotencyKey: `${label}:${randomBytes(8).toString('hex')}`,
          eventId: null,
        },
      );
      if (outcome.row === null) throw new Error('a manual compaction is never batched');
      return outcome;
    };
    return await work({ database, fake, llmUrl: llm.url, compact });
  } finally {
    await llm.close();
    await redis.quit();
    await cleanRedis(prefix);
    await database.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}
