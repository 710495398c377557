/** Where the tests find Postgres and Redis (the machine's local services unless overridden). */
import { inject } from 'vitest';

/** A database the tests can connect to for CREATE/DROP DATABASE. */
export const ADMIN_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Which queue backend the tests of this vitest project run on (`provide`d by vitest.config.ts). */
export type TestQueueBackend = 'redis' | 'postgres';

/**
 * The queue backend of the running test file: its vitest project's `queueBackend` (the `postgres`
 * project runs the files that touch the queue a second time, on BullMQ's PostgreSQL backend);
 * outside vitest (the tsx scripts) `COMPACTOR_TEST_QUEUE_BACKEND`, default `redis`.
 */
export function testQueueBackend(): TestQueueBackend {
  let provided: unknown;
  try {
    provided = inject('queueBackend');
  } catch {
    provided = process.env.COMPACTOR_TEST_QUEUE_BACKEND;
  }
  return provided === 'postgres' ? 'postgres' : 'redis';
}

/** The admin URL pointed at another database. */
export function databaseUrlFor(name: string): string {
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
