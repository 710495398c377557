/**
 * Test fixtures: each test file gets its own database (cloned from the migrated template) and its
 * own BullMQ prefix, and leaves nothing behind. Dropping the database without FORCE doubles as a
 * leak check: it fails while a connection is still open. Integration test files get all of this,
 * opened and closed in order, from `useIntegration` (integration.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import postgres from 'postgres';
import { inject } from 'vitest';
import { type Database, DEFAULT_SCHEMA, openDatabase } from '../../producer/postgres/db.ts';
import { parseTranscript, type TranscriptMessage } from '../../shared/contract/transcript.ts';
import { DEFAULT_QUEUE_SCHEMA } from '../../shared/protocol/queue-backend.ts';
import type { Config } from '../../worker/config/config.ts';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL, testQueueBackend } from './env.ts';
import { describeDeadline, patient } from './patience.ts';

/** The corpus of real transcripts shipped with the repository (`corpus/sessions`). */
export const CORPUS_DIR = fileURLToPath(new URL('../../corpus/sessions', import.meta.url));

/** A logger that prints nothing (set TEST_LOG=debug to see the worker's logs). */
export const silentLogger = pino({ level: process.env.TEST_LOG ?? 'silent' });

export interface TestDatabase {
  name: string;
  url: string;
  database: Database;
  /** Closes the pool and drops the database; fails if a connection leaked. */
  drop(): Promise<void>;
}

/** A fresh migrated database for one test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `compactor_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}" template "${inject('templateDatabase')}"`);
  } finally {
    await admin.end();
  }
  const url = databaseUrlFor(name);
  const database = openDatabase(url, { max: 5 });
  return {
    name,
    url,
    database,
    async drop() {
      await database.close();
      const dropper = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
      try {
        // A backend exits a moment after its client closed the socket (later on a loaded machine):
        // a connection still listed after a grace period is one the test left open.
        const open = async () =>
          (
            await dropper<{ n: number }[]>`
              select count(*)::int as n from pg_stat_activity where datname = ${name}`
          )[0]?.n ?? 0;
        let n = await open();
        for (let waited = 0; n > 0 && waited < LEAK_GRACE_MS; waited += 100) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          n = await open();
        }
        await dropper.unsafe(`drop database "${name}" with (force)`);
        if (n > 0) throw new Error(`test leaked ${n} connection(s) to ${name}`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** How long a test database's connections may take to go once closed, ms. */
const LEAK_GRACE_MS = 3_000;

/** A unique BullMQ prefix for one test file. */
export function testPrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/** Deletes every Redis key under `prefix`. */
export async function cleanRedis(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}

/** A config for a test file's database and prefix. */
export function testConfig(databaseUrl: string, prefix: string, overrides: Partial<Config> = {}): Config {
  return {
    databaseUrl,
    databaseSchema: DEFAULT_SCHEMA,
    queueBackend: testQueueBackend(),
    queueSchema: DEFAULT_QUEUE_SCHEMA,
    redisUrl: REDIS_URL,
    queuePrefix: prefix,
    anthropicApiKey: undefined,
    anthropicBaseUrl: undefined,
    model: 'claude-haiku-4-5',
    maxInputTokens: 100_000,
    sweepEveryMs: 0,
    batchPollMs: 60_000,
    leaseTtlMs: 30_000,
    lockDurationMs: 30_000,
    stalledIntervalMs: 30_000,
    webhookTimeoutMs: 10_000,
    webhookBackoffMs: 10_000,
    logLevel: 'silent',
    metrics: { port: null, host: '127.0.0.1' },
    dashboard: {
      port: 0,
      host: '127.0.0.1',
      adminToken: undefined,
      adminUser: undefined,
      adminPassword: undefined,
      tenantTokens: [],
    },
    ...overrides,
  };
}

/** Reads one corpus session. */
export async function loadCorpusSession(name: string): Promise<TranscriptMessage[]> {
  const file = path.join(CORPUS_DIR, `${name}.jsonl`);
  return parseTranscript(await readFile(file), file);
}

/**
 * Polls `check` every 25 ms until it returns a truthy value. `timeoutMs` is what the wait needs on
 * an idle machine: the deadline is that times the slowdown measured in this run (`patient`,
 * patience.ts), worked out again at every poll, so a machine that gets slower during the wait
 * gives it longer. Rejects naming the deadline and what it was made of.
 */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const began = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - began > patient(timeoutMs))
      throw new Error(`waitFor: condition not met within ${describeDeadline(timeoutMs)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Runs one statement on the admin database (create or drop a database, say), on a connection of its own. */
export async function adminStatement(statement: string): Promise<void> {
  const sql = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}
