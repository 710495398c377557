/**
 * What a fidelity script runs compactions on: a database of its own (created, migrated, dropped
 * after), a Redis key prefix of its own, the store and leases on them, and the fake Messages API.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { openDatabase } from '../../shared/postgres/db.ts';
import { migrateDatabase } from '../../worker/postgres/migrate.ts';
import { CompactionStore } from '../../worker/postgres/store.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { cleanRedis } from '../support/fixtures.ts';

/** The parts a fidelity run uses. */
export interface Scratch {
  database: ReturnType<typeof openDatabase>;
  store: CompactionStore;
  leases: LeaseManager;
  fake: FakeAnthropicServer;
  /** The fake API's base URL. */
  llmUrl: string;
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
    return await work({
      database,
      store: new CompactionStore(database.db),
      leases: new LeaseManager(redis, { prefix }),
      fake,
      llmUrl: llm.url,
    });
  } finally {
    await llm.close();
    await redis.quit();
    await cleanRedis(prefix);
    await database.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}
