/**
 * The `compactor` command as a user runs it: real processes, real Redis and Postgres, the real
 * Anthropic SDK against the fake Messages API server.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducer, type Producer } from '../../producer/index.ts';
import { CompactionStore } from '../../worker/postgres/store.ts';
import { REDIS_URL } from '../support/env.ts';
import { type FakeAnthropicHandle, FakeAnthropicServer } from '../support/fake-anthropic.ts';
import {
  CORPUS_DIR,
  cleanRedis,
  createTestDatabase,
  type TestDatabase,
  testPrefix,
  waitFor,
} from '../support/fixtures.ts';
import { killAllChildren, runCompactor, startCompactor } from '../support/processes.ts';

const SESSIONS = ['sweagent__ctf-rev-rock', 'openhands__runtime-basic_gui_mode', 'minisweagent__pvlib-1854'];

let tdb: TestDatabase;
let prefix: string;
let dir: string;
let fake: FakeAnthropicServer;
let fakeHandle: FakeAnthropicHandle;
let producer: Producer;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'warn',
    ...extra,
  };
}

const start = (args: string[], extra: Record<string, string> = {}) => startCompactor(args, env(extra));
const run = (args: string[], extra: Record<string, string> = {}) => runCompactor(args, env(extra));

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = testPrefix();
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-cli-'));
  for (const s of SESSIONS) await copyFile(path.join(CORPUS_DIR, `${s}.jsonl`), path.join(dir, `${s}.jsonl`));
  fake = new FakeAnthropicServer();
  fakeHandle = await fake.start();
  producer = createProducer({ redisUrl: REDIS_URL, prefix });
});

afterAll(async () => {
  await killAllChildren();
  await producer?.close();
  await fakeHandle?.close();
  await cleanRedis(prefix);
  await tdb?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('compactor demo', () => {
  it('compacts every session once, loses nothing, and succeeds when run again', async () => {
    for (let i = 0; i < 2; i++) {
      const result = await run(['demo', dir]);
      expect(result.stderr).toContain('imported 3 sessions');
      expect(result.code, result.stdout + result.stderr).toBe(0);
      for (const s of SESSIONS) expect(result.stdout).toContain(s);
      expect(result.stdout).toMatch(
        /nothing lost: \d+ live \+ \d+ archived = (\d+) of \1 imported messages; all invariants hold/,
      );
      expect(result.stdout).not.toContain('CHECK FAILED');
    }
  });
});

describe('compactor import, compact, history', () => {
  it('imports, previews without writing, compacts, and shows the ledger', async () => {
    const file = path.join(dir, 'sweagent__ctf-rev-rock.jsonl');
    const imported = await run(['import', file, '--tenant', 'cli', '--session', 'rock']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/imported rock: 37 messages/);

    const again = await run(['import', file, '--tenant', 'cli', '--session', 'rock']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('session "rock" already exists for tenant "cli"; not imported again');

    const preview = await run([
      'compact',
      '--tenant',
      'cli',
      '--session',
      'rock',
      '--strategy',
      'slidingWindow:10',
      '--dry-run',
    ]);
    expect(preview.code, preview.stderr).toBe(0);
    const { plan, stays } = JSON.parse(preview.stdout);
    expect(plan.action).toBe('compact');
    expect(stays).toContainEqual({ seq: 0, reason: 'pinned' }); // the system prompt, pinned on import
    expect(plan.notes[0]).toContain('window: newest 10 messages stay');
    expect(plan.leavingSeqs.length).toBeGreaterThan(20);
    expect((await run(['history', '--tenant', 'cli', '--session', 'rock'])).stdout).toBe('');

    const compacted = await run([
      'compact',
      '--tenant',
      'cli',
      '--session',
      'rock',
      '--strategy',
      'slidingWindow:10',
    ]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const row = JSON.parse(compacted.stdout);
    expect(row).toMatchObject({
      status: 'applied',
      messagesBefore: 37,
      messagesArchived: plan.leavingSeqs.length,
    });

    const history = await run(['history', '--tenant', 'cli', '--session', 'rock']);
    const lines = history.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0].id).toBe(row.id);
  });

  it('names the bad variable and stops when the environment is wrong', async () => {
    const result = await run(['history', '--tenant', 'x', '--session', 'y'], { REDIS_URL: 'localhost:6379' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('REDIS_URL: must be a URL starting with redis: or rediss:');
  });

  it('refuses bad usage with exit code 2', async () => {
    const result = await run(['compact', '--tenant', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--session is required');
    const strategy = await run([
      'compact',
      '--tenant',
      'x',
      '--session',
      'y',
      '--strategy',
      'slidingWindow:zero',
    ]);
    expect(strategy.code).toBe(2);
    expect(strategy.stderr).toContain('strategy');
  });
});

describe('compactor worker', () => {
  it('summarizes with the anthropic summarizer and finishes the active job on SIGTERM', async () => {
    const file = path.join(dir, 'minisweagent__pvlib-1854.jsonl');
    expect((await run(['import', file, '--tenant', 'llm', '--session', 'pvlib'])).code).toBe(0);
    fake.enqueue({ delayMs: 1_500 });
    const worker = start(['worker', '--concurrency', '2'], {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fakeHandle.url,
    });
    const eventId = randomUUID();
    const requestsBefore = fake.requests.length;
    await producer.runCompleted({
      eventId,
      tenantId: 'llm',
      sessionId: 'pvlib',
      strategy: { type: 'summarize', keepRecent: 12 },
    });
    await waitFor(async () => fake.requests.length > requestsBefore, 20_000);
    worker.kill('SIGTERM');
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(0);
    expect(await producer.queue.getJobState(eventId)).toBe('completed');

    const [row] = await new CompactionStore(tdb.database.db).history('llm', 'pvlib');
    expect(row).toMatchObject({ status: 'applied', summarizer: 'anthropic', model: 'claude-haiku-4-5' });
    expect(row?.inputTokens).toBeGreaterThan(0);
    expect(row?.outputTokens).toBeGreaterThan(0);
    expect(row?.summary).toContain('Working set');
    const request = fake.requests[requestsBefore];
    expect(JSON.stringify(request?.body)).toContain('record_checkpoint');
  });
});
