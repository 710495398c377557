/**
 * A producer whose queue no worker listens on says so, and so does `compactor doctor`: the worker
 * registry (`queue_workers`) records where each running worker listens, and both compare it with
 * their own queue. Run on both backends: the mismatched side is always the other one.
 */
import { describe, expect, it } from 'vitest';
import {
  connectionOf,
  createProducer,
  describePlace,
  liveQueueWorkers,
  type ProducerOptions,
  WORKER_STALE_AFTER_MS,
} from '../../producer/index.ts';
import { createSession } from '../../producer/sessions.ts';
import { main } from '../../worker/cli/cli.ts';
import { REDIS_URL } from '../support/env.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'acme';

/** A producer that enqueues on `options`'s queue and collects its warnings. */
async function enqueueTwice(options: ProducerOptions) {
  const warnings: string[] = [];
  const producer = createProducer({ ...options, onWarning: (line) => warnings.push(line) });
  try {
    for (const n of [1, 2])
      await producer.runCompleted({ eventId: `e-${n}-${Math.random()}`, tenantId, sessionId: 's-1' });
  } finally {
    await producer.close();
  }
  return { warnings, place: producer.queues.place };
}

/** The environment of the other backend than the worker's: no queue there has a worker. */
function otherEnvironment(): Record<string, string> {
  return ctx.backend === 'postgres'
    ? { DATABASE_URL: ctx.tdb.url, REDIS_URL, COMPACTOR_QUEUE_PREFIX: ctx.prefix }
    : { DATABASE_URL: ctx.tdb.url };
}

/** Runs `compactor doctor` in this process with `env`; its exit code and output. */
async function doctor(env: Record<string, string>) {
  let out = '';
  const sink = {
    write(t: string) {
      out += t;
      return true;
    },
  };
  const code = await main(['doctor'], { stdout: sink, stderr: sink }, env);
  return { code, lines: out.trimEnd().split('\n') };
}

describe('a queue no worker listens on', () => {
  it('is reported once by the producer and once by compactor doctor, each in one line naming both sides', async () => {
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 's-1', messages: [] });
    const worker = ctx.startWorker();
    const workerPlace = describePlace(ctx.services().queues.place);
    // The worker writes its registry row in the background as it starts: wait for it.
    while ((await liveQueueWorkers(ctx.tdb.database.db, WORKER_STALE_AFTER_MS)).length === 0)
      await new Promise((resolve) => setTimeout(resolve, 100));

    // The worker's own queue: no warning, and doctor finds the worker there.
    const same = await enqueueTwice({
      ...connectionOf(ctx.config),
      prefix: ctx.prefix,
      db: ctx.tdb.database.db,
    });
    expect(same.warnings).toEqual([]);
    const fine = await doctor(ctx.cliEnv);
    expect(fine.code, fine.lines.join('\n')).toBe(0);
    expect(fine.lines.filter((l) => l.includes('mismatch'))).toEqual([]);
    expect(fine.lines).toContain('match: the live workers take compaction jobs from this queue');

    // The other backend, chosen by the shared rule from an environment that names it.
    const other = await enqueueTwice({ environment: otherEnvironment(), db: ctx.tdb.database.db });
    expect(other.place.backend).not.toBe(ctx.backend);
    expect(other.warnings).toHaveLength(1);
    const [warning] = other.warnings as [string];
    expect(warning).not.toContain('\n');
    expect(warning).toContain(`this producer enqueues "compaction" on ${describePlace(other.place)}`);
    expect(warning).toContain(`the live workers listen on ${workerPlace} ×1`);

    const mismatched = await doctor({ ...otherEnvironment(), COMPACTOR_LOG_LEVEL: 'warn' });
    expect(mismatched.code, mismatched.lines.join('\n')).toBe(1);
    const lines = mismatched.lines.filter((l) => l.includes('mismatch'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`this environment enqueues "compaction" on ${describePlace(other.place)}`);
    expect(lines[0]).toContain(workerPlace);

    // A worker that closed gracefully leaves the registry: nothing is live any more.
    await worker.close();
    const none = await doctor(ctx.cliEnv);
    expect(none.lines).toContain('workers: none live in the last 60 s (start `compactor worker`)');
  });

  it('makes compactor doctor exit 1 naming the database when it cannot be reached', async () => {
    const down = await doctor({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    expect(down.code).toBe(1);
    expect(down.lines[0]).toMatch(
      /^database: postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere schema "compactor": unreachable/,
    );
  });
});
