/**
 * A dashboard for one test file: its own database and BullMQ prefix, `compactor dashboard`'s
 * server on a free loopback port with admin and two tenants' credentials, an in-process worker to
 * make real compactions (extractive summarizer, or with `anthropic: true` the anthropic one talking
 * to a fake Messages API the test scripts), and fetch helpers per credential.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createProducer, createSession, type Producer } from '../../producer/index.ts';
import type { NewMessage } from '../../producer/sessions.ts';
import type { RunCompletedInput } from '../../shared/protocol/events.ts';
import { type Dashboard, startDashboard } from '../../worker/http/dashboard/index.ts';
import type { Leases } from '../../worker/pipeline/ports.ts';
import { PostgresLeases } from '../../worker/postgres/lease.ts';
import { type CompactionWorker, startWorker } from '../../worker/queue/compaction/worker.ts';
import { LeaseManager } from '../../worker/redis/lease.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { REDIS_URL } from './env.ts';
import { type FakeAnthropicHandle, FakeAnthropicServer } from './fake-anthropic.ts';
import {
  cleanRedis,
  createTestDatabase,
  loadCorpusSession,
  silentLogger,
  type TestDatabase,
  testConfig,
  testPrefix,
  waitFor,
} from './fixtures.ts';

export const ADMIN_TOKEN = 'admin-token-4f1c9e2b7a6d';
export const ADMIN_USER = 'operator';
export const ADMIN_PASSWORD = 'operator-password-93b1';
/** Two tenants and their tokens. */
export const TENANT_TOKENS = {
  acme: 'acme-token-5e8a1f0c3b9d',
  globex: 'globex-token-c27d84e16fa0',
} as const;
export type Who = 'admin' | keyof typeof TENANT_TOKENS | 'nobody';

export interface DashboardFixture {
  tdb: TestDatabase;
  prefix: string;
  dashboard: Dashboard;
  producer: Producer;
  /** The queue backend the fixture runs on. */
  backend: 'redis' | 'postgres';
  /** Per-session leases on the fixture's queue backend (to hold a session as a worker would). */
  leases: Leases;
  /** The fake Messages API the worker summarizes with, when started with `anthropic: true`. */
  fake: FakeAnthropicServer | undefined;
  /** Creates a session from a corpus transcript, plus `extra` messages after it. */
  seed(
    tenantId: string,
    sessionId: string,
    corpus?: string,
    extra?: Array<Omit<NewMessage, 'seq'>>,
  ): Promise<void>;
  /** Enqueues an event with `strategy` and waits until its job settles; returns the job's state. */
  compact(
    tenantId: string,
    sessionId: string,
    strategy: RunCompletedInput['strategy'],
  ): Promise<{ jobId: string; state: string }>;
  /** `fetch` on the dashboard as `who` (a bearer token; `nobody` sends none). */
  request(who: Who, path: string, init?: RequestInit): Promise<Response>;
  /** Stops the worker and the dashboard, drops the database, cleans Redis. */
  close(): Promise<void>;
}

/** The `Authorization` header of `who`. */
export function authorization(who: Who): Record<string, string> {
  if (who === 'nobody') return {};
  const token = who === 'admin' ? ADMIN_TOKEN : TENANT_TOKENS[who];
  return { authorization: `Bearer ${token}` };
}

/** Starts the fixture. */
export async function startDashboardFixture(
  options: { readOnly?: boolean; anthropic?: boolean } = {},
): Promise<DashboardFixture> {
  const tdb = await createTestDatabase();
  const prefix = testPrefix();
  const fake = options.anthropic ? new FakeAnthropicServer() : undefined;
  const fakeHandle: FakeAnthropicHandle | undefined = await fake?.start();
  const config = testConfig(tdb.url, prefix, {
    ...(fakeHandle ? { anthropicApiKey: 'test-key', anthropicBaseUrl: fakeHandle.url } : {}),
    dashboard: {
      port: 0,
      host: '127.0.0.1',
      adminToken: ADMIN_TOKEN,
      adminUser: ADMIN_USER,
      adminPassword: ADMIN_PASSWORD,
      tenantTokens: Object.entries(TENANT_TOKENS).map(([tenantId, token]) => ({ tenantId, token })),
    },
  });
  const dashboard = await startDashboard(openServices(config, silentLogger, { poolSize: 3 }), {
    port: 0,
    host: '127.0.0.1',
    readOnly: options.readOnly ?? false,
    insecure: false,
  });
  const worker: CompactionWorker = startWorker(openServices(config, silentLogger, { poolSize: 3 }), {
    concurrency: 2,
  });
  const producer = createProducer({
    ...(config.queueBackend === 'postgres' ? { postgres: tdb.url } : { redisUrl: REDIS_URL }),
    prefix,
    db: tdb.database.db,
  });
  const redis = config.queueBackend === 'postgres' ? null : new Redis(REDIS_URL);
  const leases: Leases = redis ? new LeaseManager(redis, { prefix }) : new PostgresLeases(tdb.database.db);
  return {
    tdb,
    prefix,
    dashboard,
    producer,
    backend: config.queueBackend === 'postgres' ? 'postgres' : 'redis',
    leases,
    fake,
    async seed(tenantId, sessionId, corpus = 'sweagent__ctf-rev-rock', extra = []) {
      const messages = await loadCorpusSession(corpus);
      let seq = messages.length;
      const more = extra.map((m) => ({ ...m, seq: seq++ }));
      await createSession(tdb.database.db, { tenantId, sessionId, messages: [...messages, ...more] });
    },
    async compact(tenantId, sessionId, strategy) {
      const eventId = randomUUID();
      const { jobId } = await producer.runCompleted({ eventId, tenantId, sessionId, strategy });
      const state = await waitFor(async () => {
        const s = await producer.queue.getJobState(jobId);
        return s === 'completed' || s === 'failed' ? s : undefined;
      });
      return { jobId, state };
    },
    request(who, path, init = {}) {
      const headers = { ...authorization(who), ...(init.headers as Record<string, string> | undefined) };
      return fetch(`${dashboard.url}${path}`, { ...init, headers, redirect: 'manual' });
    },
    async close() {
      await worker.close();
      await producer.close();
      await redis?.quit();
      await dashboard.close();
      await fakeHandle?.close();
      await cleanRedis(prefix);
      await tdb.drop();
    },
  };
}
