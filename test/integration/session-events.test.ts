/**
 * Telling the agent what happened: each applied compaction publishes one `session.compacted` job
 * on the `session-events` queue, which a service consumes with a BullMQ Worker of its own; a skip
 * publishes nothing.
 */
import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createSession, loadContext } from '../../producer/index.ts';
import { eq } from '../../producer/postgres/orm.ts';
import { compactions } from '../../producer/postgres/schema.ts';
import type { QueueLink } from '../../producer/queue/backend.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import {
  jobIdOf,
  SESSION_COMPACTED,
  SESSION_EVENTS_QUEUE,
  type SessionCompactedEvent,
  sessionCompactedEventSchema,
} from '../../shared/protocol/events.ts';
import { createSessionEventsPublisher } from '../../worker/queue/session-events/session-events.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'told';
const received: Array<{ name: string; id: string | undefined; data: SessionCompactedEvent }> = [];
let consumer: Worker | undefined;
let consumerLink: QueueLink | undefined;

async function stopConsumer() {
  await consumer?.close();
  await consumerLink?.close();
}

afterAll(stopConsumer);

async function settle(eventId: string) {
  await waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobIdOf(tenantId, eventId));
    return state === 'completed' || state === 'failed' ? state : undefined;
  });
}

/** A publisher of its own on the file's backend, closed at teardown. */
function publisherFor(maxWaiting: number) {
  const publisher = createSessionEventsPublisher(ctx.queues, { maxWaiting });
  ctx.onTeardown(() => publisher.close());
  return publisher;
}

/** The ledger row the first test applied. */
async function appliedRow() {
  const [row] = await ctx.tdb.database.db.select().from(compactions).where(eq(compactions.status, 'applied'));
  if (!row) throw new Error('the first test applies a compaction');
  return row;
}

describe('session.compacted', () => {
  it('reaches a service’s own consumer once per applied compaction, with what it did', async () => {
    // A service's consumer, on the backend the file runs on.
    consumerLink = ctx.queues.link();
    consumer = new ctx.queues.Worker(
      SESSION_EVENTS_QUEUE,
      async (job: Job) => {
        received.push({ name: job.name, id: job.id, data: sessionCompactedEventSchema.parse(job.data) });
      },
      consumerLink.options,
    );
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() } });
    const messages = await loadCorpusSession('sweagent__marshmallow-1867-fc');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'big', messages });
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'small',
      messages: messages.slice(0, 3),
    });
    const strategy = { type: 'summarize', keepRecent: 10, maxSummaryTokens: 1_000 } as const;
    const eventId = randomUUID();
    await ctx.producer.runCompleted({ eventId, tenantId, sessionId: 'big', trigger: 'manual', strategy });
    await settle(eventId);
    // A session too small to compact: skipped, nothing published.
    const again = randomUUID();
    await ctx.producer.runCompleted({
      eventId: again,
      tenantId,
      sessionId: 'small',
      trigger: 'manual',
      strategy,
    });
    await settle(again);
    await waitFor(async () => received.length >= 1);
    await new Promise((r) => setTimeout(r, 300));

    expect(received).toHaveLength(1);
    const [event] = received;
    const [row] = await ctx.tdb.database.sql<{ id: string; compaction_version: number }[]>`
      select id, compaction_version from compactions
      where tenant_id = ${tenantId} and session_id = 'big' and status = 'applied'`;
    expect(event?.name).toBe(SESSION_COMPACTED);
    expect(event?.id).toBe(jobIdOf(tenantId, row?.id ?? ''));
    expect(event?.data).toMatchObject({
      compactionId: row?.id,
      tenantId,
      sessionId: 'big',
      version: row?.compaction_version,
      strategy: 'summarize',
      mode: 'inPlace',
      messagesBefore: messages.length,
    });
    expect(event?.data.tokensAfter).toBeLessThan(event?.data.tokensBefore ?? 0);
    expect(event?.data.checkpoint).toMatchObject({ goal: expect.any(String) });
    // The payback predicted before it: the extractive summary is free, the cache rewrite is not.
    expect(event?.data.payback).toMatchObject({
      horizon: 'history',
      ratio: expect.any(Number),
      savingsUsd: expect.any(Number),
    });
    expect(event?.data.payback?.costUsd).toBeGreaterThan(0);
    expect(event?.data.payback?.tokensSavedPerRequest).toBeGreaterThan(0);
    // The checkpoint the compaction wrote, exactly as the session now holds it.
    const [session] = await ctx.tdb.database.sql<{ checkpoint: unknown }[]>`
      select checkpoint from sessions where tenant_id = ${tenantId} and id = 'big'`;
    expect(event?.data.checkpoint).toEqual(session?.checkpoint);
    // The version the agent's next context is rendered at.
    expect((await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'big' })).version).toBe(
      event?.data.version,
    );
  });

  it('keeps a backlog nobody consumes bounded: past the cap, the oldest waiting events go', async () => {
    // Nobody consumes from here on.
    await stopConsumer();
    const publisher = publisherFor(50);
    const row = await appliedRow();
    const ids = Array.from({ length: 101 }, () => randomUUID());
    for (const id of ids) await publisher.compacted({ ...row, id }, null);
    const queue = ctx.queue(SESSION_EVENTS_QUEUE);
    // Looked at on the first publish and every 100th: at the 101st, 51 of 101 go, oldest first.
    expect(await queue.getWaitingCount()).toBe(50);
    const waiting = await queue.getWaiting(0, -1);
    expect(new Set(waiting.map((j) => j.id))).toEqual(
      new Set(ids.slice(-50).map((id) => jobIdOf(row.tenantId, id))),
    );
  });

  it('publishes each of many compactions at once as one job, a repeat of one no second job', async () => {
    const publisher = publisherFor(10_000);
    const row = await appliedRow();
    const ids = Array.from({ length: 40 }, () => randomUUID());
    // Asked for together, as a worker's jobs that end in one wave do (on Redis, sent in groups).
    const events = await Promise.all(
      [...ids, ids[0] ?? ''].map((id) => publisher.compacted({ ...row, id }, null)),
    );
    expect(events.map((e) => e?.compactionId)).toEqual([...ids, ids[0]]);
    const queue = ctx.queue(SESSION_EVENTS_QUEUE);
    const jobs = await Promise.all(ids.map((id) => queue.getJob(jobIdOf(row.tenantId, id))));
    expect(jobs.map((j) => j?.data.compactionId)).toEqual(ids);
    const waiting = await queue.getWaiting(0, -1);
    const ours = new Set(ids.map((id) => jobIdOf(row.tenantId, id)));
    expect(waiting.filter((j) => ours.has(j.id ?? ''))).toHaveLength(ids.length);
  });
});
