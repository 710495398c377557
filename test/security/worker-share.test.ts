/**
 * One tenant's burst cannot take the workers from another: the queue serves tenants round-robin
 * (each job's priority is its rank in its tenant's backlog), and while another tenant is active (has
 * work, or sent an event within COMPACTOR_TENANT_ACTIVE_WINDOW_MS), a tenant runs at most its share
 * of jobs at once (COMPACTOR_TENANT_MAX_ACTIVE_JOBS). Alone, a tenant runs on every slot.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession, type NewMessage } from '../../producer/index.ts';
import { backlogKeysOf } from '../../producer/redis/tenant-backlog.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { textMessage } from '../support/messages.ts';

/** How long a tenant counts as active after its last event here, ms. */
const ACTIVE_WINDOW_MS = 3_000;
const ctx = useIntegration({ config: { tenantMaxActiveJobs: 1, tenantActiveWindowMs: ACTIVE_WINDOW_MS } });

/** A short chat of the tenant's. */
async function seed(tenantId: string, sessionId: string, count = 24) {
  const messages = Array.from({ length: count }, (_, seq) =>
    textMessage(seq, seq % 2 === 0 ? 'user' : 'assistant', `${tenantId} message ${seq} of ${sessionId}`),
  );
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: messages as NewMessage[] });
}

/** The tenants with jobs counted in their backlog, in the store of the file's queue backend. */
async function tenantsCounted(): Promise<number> {
  if (ctx.backend === 'redis') return ctx.redis.zcard(backlogKeysOf(ctx.prefix)[0]);
  const [row] = await ctx.tdb.database.sql<
    { n: number }[]
  >`select count(*)::int as n from tenant_backlogs where pending > 0`;
  return row?.n ?? 0;
}

async function settled(jobId: string) {
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  }, 20_000);
}

/** A gate per tenant: its summaries wait until `open()`; `held` counts those waiting. */
interface Gate {
  held: number;
  open(): void;
}

/** The extractive summarizer, held for the sessions of the given tenants until their gate opens. */
function gatedSummarizer(...tenants: string[]) {
  const inner = createExtractiveSummarizer();
  const gates = new Map<string, Gate & { opened: Promise<void> }>();
  for (const tenant of tenants) {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    gates.set(tenant, { held: 0, open, opened });
  }
  const summarizer: Summarizer = {
    name: inner.name,
    async summarize(input) {
      const gate = gates.get(input.tenantId);
      if (gate) {
        gate.held++;
        await gate.opened;
        gate.held--;
      }
      return inner.summarize(input);
    },
  };
  const gate = (tenant: string): Gate => gates.get(tenant) as Gate;
  return { summarizer, gate };
}

const summarize = { type: 'summarize', keepRecent: 4 } as const;

afterEach(() => ctx.closeWorkers());

describe('a tenant’s share of the workers', () => {
  it('takes a quiet tenant’s event before the rest of a noisy tenant’s backlog', async () => {
    const noisy = Array.from({ length: 40 }, (_, i) => `burst-${i}`);
    for (const id of noisy) await seed('noisy', id, 4);
    await seed('quiet', 'q1', 4);
    const strategy = { type: 'slidingWindow', maxMessages: 2 } as const;
    const jobs = [];
    for (const sessionId of noisy) {
      jobs.push(
        await ctx.producer.runCompleted({ eventId: randomUUID(), tenantId: 'noisy', sessionId, strategy }),
      );
    }
    const quiet = await ctx.producer.runCompleted({
      eventId: randomUUID(),
      tenantId: 'quiet',
      sessionId: 'q1',
      strategy,
    });
    ctx.startWorker({ concurrency: 1 });
    expect(await settled(quiet.jobId)).toBe('completed');
    for (const { jobId } of jobs) expect(await settled(jobId)).toBe('completed');
    const finished = await Promise.all(
      [quiet, ...jobs].map(async ({ jobId }) => (await ctx.producer.queue.getJob(jobId))?.finishedOn ?? 0),
    );
    const quietFinished = finished[0] ?? 0;
    // Round-robin: at most the noisy tenant's first job goes before the quiet one, not all 40.
    expect(finished.slice(1).filter((t) => t < quietFinished).length).toBeLessThanOrEqual(1);
    // Every finished job was counted out of its tenant's backlog.
    await waitFor(async () => ((await tenantsCounted()) === 0 ? true : undefined));
  });

  it('holds a tenant to its share of the workers while another tenant has work pending', async () => {
    for (let i = 0; i < 4; i++) await seed('noisy', `long-${i}`);
    for (let i = 0; i < 2; i++) await seed('quiet', `q-${i}`);
    const { summarizer, gate } = gatedSummarizer('noisy', 'quiet');
    const enqueue = (tenantId: string, sessionId: string) =>
      ctx.producer.runCompleted({ eventId: randomUUID(), tenantId, sessionId, strategy: summarize });
    // Interleaved as they arrive; the queue's order is noisy, quiet, noisy, quiet, noisy, noisy.
    const jobs = [];
    jobs.push(await enqueue('noisy', 'long-0'), await enqueue('quiet', 'q-0'));
    jobs.push(await enqueue('noisy', 'long-1'), await enqueue('quiet', 'q-1'));
    jobs.push(await enqueue('noisy', 'long-2'), await enqueue('noisy', 'long-3'));
    ctx.startWorker({ concurrency: 3, summarizers: { primary: summarizer } });
    await waitFor(async () => (gate('noisy').held === 1 && gate('quiet').held === 1 ? true : undefined));
    // The third slot's job was refused (its tenant runs its one share and the other has work):
    // it went back to delayed, and neither tenant took a second slot.
    await waitFor(async () => ((await ctx.producer.queue.getDelayedCount()) >= 1 ? true : undefined));
    expect([gate('noisy').held, gate('quiet').held]).toEqual([1, 1]);
    gate('quiet').open();
    gate('noisy').open();
    for (const { jobId } of jobs) expect(await settled(jobId)).toBe('completed');
  });

  it('takes a tenant’s own share from its policy’s limits.maxActiveJobs', async () => {
    await setPolicy(ctx.tdb.database.db, 'roomy', null, {
      strategy: summarize,
      limits: { maxActiveJobs: 2 },
    });
    for (let i = 0; i < 3; i++) await seed('roomy', `r-${i}`);
    for (let i = 0; i < 2; i++) await seed('quiet', `p-${i}`);
    const { summarizer, gate } = gatedSummarizer('roomy', 'quiet');
    const enqueue = (tenantId: string, sessionId: string) =>
      ctx.producer.runCompleted({ eventId: randomUUID(), tenantId, sessionId, strategy: summarize });
    const jobs = [];
    jobs.push(await enqueue('roomy', 'r-0'), await enqueue('quiet', 'p-0'));
    jobs.push(await enqueue('roomy', 'r-1'), await enqueue('quiet', 'p-1'));
    jobs.push(await enqueue('roomy', 'r-2'));
    ctx.startWorker({ concurrency: 4, summarizers: { primary: summarizer } });
    // roomy runs two (its policy's share), quiet one (the process's default of 1); the rest wait.
    await waitFor(async () => (gate('roomy').held === 2 && gate('quiet').held === 1 ? true : undefined));
    await waitFor(async () => ((await ctx.producer.queue.getDelayedCount()) >= 1 ? true : undefined));
    expect([gate('roomy').held, gate('quiet').held]).toEqual([2, 1]);
    gate('quiet').open();
    gate('roomy').open();
    for (const { jobId } of jobs) expect(await settled(jobId)).toBe('completed');
  });

  it('holds a tenant to its share while another sent an event lately, though none is pending', async () => {
    for (let i = 0; i < 3; i++) await seed('noisy', `after-${i}`);
    await seed('quiet', 'once');
    const { summarizer, gate } = gatedSummarizer('noisy');
    ctx.startWorker({ concurrency: 3, summarizers: { primary: summarizer } });
    const quiet = await ctx.producer.runCompleted({
      eventId: randomUUID(),
      tenantId: 'quiet',
      sessionId: 'once',
      strategy: summarize,
    });
    expect(await settled(quiet.jobId)).toBe('completed');
    const jobs = [];
    for (let i = 0; i < 3; i++) {
      jobs.push(
        await ctx.producer.runCompleted({
          eventId: randomUUID(),
          tenantId: 'noisy',
          sessionId: `after-${i}`,
          strategy: summarize,
        }),
      );
    }
    // The quiet tenant has nothing pending, but it was active a moment ago: one slot for the noisy.
    await waitFor(async () => (gate('noisy').held === 1 ? true : undefined));
    await waitFor(async () => ((await ctx.producer.queue.getDelayedCount()) >= 1 ? true : undefined));
    expect(gate('noisy').held).toBe(1);
    // Once the quiet tenant's window has passed, the noisy one is alone and takes every slot.
    await waitFor(async () => (gate('noisy').held === 3 ? true : undefined), ACTIVE_WINDOW_MS + 10_000);
    gate('noisy').open();
    for (const { jobId } of jobs) expect(await settled(jobId)).toBe('completed');
  });

  it('lets a tenant alone with work run on every slot', async () => {
    // Alone: the other tenants' last events are older than the window.
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_WINDOW_MS));
    for (let i = 0; i < 2; i++) await seed('noisy', `alone-${i}`);
    const { summarizer, gate } = gatedSummarizer('noisy');
    ctx.startWorker({ concurrency: 2, summarizers: { primary: summarizer } });
    const jobs = [];
    for (let i = 0; i < 2; i++) {
      jobs.push(
        await ctx.producer.runCompleted({
          eventId: randomUUID(),
          tenantId: 'noisy',
          sessionId: `alone-${i}`,
          strategy: summarize,
        }),
      );
    }
    await waitFor(async () => (gate('noisy').held === 2 ? true : undefined));
    gate('noisy').open();
    for (const { jobId } of jobs) expect(await settled(jobId)).toBe('completed');
  });
});
