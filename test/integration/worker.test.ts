/**
 * The pipeline end to end with real Redis, Postgres and BullMQ: events in through the producer,
 * a worker in this process, the ledger and the invariants checked on the database.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { appendMessages, createSession } from '../../producer/index.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf, RUN_COMPLETED } from '../../shared/protocol/events.ts';
import { collectLeaving, type Summarizer } from '../../shared/summary/summarizer.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import type { CompactionWorker } from '../../worker/queue/compaction/worker.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'acme';

/** Starts a worker on this file's database and prefix; closed after the test. */
function worker(summarizer?: Summarizer, concurrency = 2): CompactionWorker {
  return ctx.startWorker({ summarizers: { primary: summarizer }, concurrency });
}

async function seed(sessionId: string, corpusName = 'sweagent__ctf-rev-rock') {
  const messages = await loadCorpusSession(corpusName);
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  return messages;
}

async function settled(jobId: string) {
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  });
}

async function ledger(sessionId: string) {
  return ctx.reads.history(tenantId, sessionId);
}

afterEach(async () => {
  // Each test runs its own workers, so a job is handled by the worker the test configured.
  await ctx.closeWorkers();
});

describe('worker', () => {
  it('compacts a real session once, even when its event is enqueued twice', async () => {
    const original = await seed('dup');
    worker();
    const event = {
      eventId: randomUUID(),
      tenantId,
      sessionId: 'dup',
      strategy: { type: 'slidingWindow', maxMessages: 10 },
    } as const;
    await ctx.producer.runCompleted(event);
    await ctx.producer.runCompleted(event);
    expect(await settled(jobIdOf(tenantId, event.eventId))).toBe('completed');
    // The same event again after completion: absorbed by the idempotency key in the ledger.
    await ctx.producer.queue.remove(jobIdOf(tenantId, event.eventId));
    await ctx.producer.runCompleted(event);
    expect(await settled(jobIdOf(tenantId, event.eventId))).toBe('completed');
    const job = await ctx.producer.queue.getJob(jobIdOf(tenantId, event.eventId));
    expect(job?.returnvalue).toMatchObject({ status: 'duplicate', ledgerStatus: 'applied' });

    const rows = await ledger('dup');
    expect(rows.map((r) => r.status)).toEqual(['applied']);
    expect(rows[0]).toMatchObject({ messagesBefore: original.length, strategy: 'slidingWindow' });
    const report = await audit(ctx.tdb.database.db, tenantId, 'dup');
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(original.length);
    expect(report.liveOriginals).toBeLessThanOrEqual(10 + 1); // window + the pinned system prompt
  });

  it('compacts past a tool call that never got its result once the session moved on, and says so', async () => {
    // The tool's process died at seq 1: its call has no result, and the agent went on for 60 turns.
    const turns = Array.from({ length: 60 }, (_, i) => ({
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      kind: 'message' as const,
      content: `turn ${i}: ${'work '.repeat(30)}`,
    }));
    await createSession(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'abandoned',
      messages: [
        { seq: 0, role: 'user', kind: 'message', content: 'run the migration' },
        {
          seq: 1,
          role: 'assistant',
          kind: 'tool_call',
          content: '{"name":"bash","arguments":{"command":"./migrate.sh"}}',
          toolCallId: 'call_dead',
          toolName: 'bash',
        },
        ...turns.map((m, i) => ({ ...m, seq: i + 2 })),
      ],
    });
    worker();
    const event = {
      eventId: randomUUID(),
      tenantId,
      sessionId: 'abandoned',
      strategy: { type: 'summarize', keepRecent: 10 },
    } as const;
    await ctx.producer.runCompleted(event);
    expect(await settled(jobIdOf(tenantId, event.eventId))).toBe('completed');
    const [row] = await ledger('abandoned');
    expect(row).toMatchObject({ status: 'applied', cutoffSeq: 51 });
    expect(row?.reason).toBe(
      '1 tool call(s) left without a result, the session having moved on: call_dead (seq 1)',
    );
    const [archived] = await ctx.tdb.database.sql`
      select seq::int, kind, tool_call_id from archived_messages
      where tenant_id = ${tenantId} and session_id = 'abandoned' and seq = 1`;
    expect(archived).toMatchObject({ kind: 'tool_call', tool_call_id: 'call_dead' });
    expect(violations(await audit(ctx.tdb.database.db, tenantId, 'abandoned'))).toEqual([]);
  });

  it('applies one compaction when two events for one session arrive at once', async () => {
    const original = await seed('pair');
    worker(undefined, 4);
    worker(undefined, 4);
    // Bypass the producer's per-session deduplication so both jobs really run side by side.
    const queue = ctx.producer.queue;
    const ids = [randomUUID(), randomUUID()];
    await Promise.all(
      ids.map((eventId) =>
        queue.add(
          RUN_COMPLETED,
          { eventId, tenantId, sessionId: 'pair', strategy: { type: 'slidingWindow', maxMessages: 8 } },
          { jobId: eventId },
        ),
      ),
    );
    for (const id of ids) expect(await settled(id)).toBe('completed');
    const rows = await ledger('pair');
    expect(rows.filter((r) => r.status === 'applied')).toHaveLength(1);
    expect(rows.filter((r) => r.status === 'skipped')).toHaveLength(1);
    const report = await audit(ctx.tdb.database.db, tenantId, 'pair');
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(original.length);
  });

  it('keeps messages the agent appends while the summary is being made', async () => {
    const original = await seed('append', 'minisweagent__astropy-12907');
    const extractive = createExtractiveSummarizer();
    let appended: number[] = [];
    let summarizedSeqs: number[] = [];
    const appending: Summarizer = {
      name: 'extractive',
      async summarize(input) {
        summarizedSeqs = (await collectLeaving(input.leaving)).map((m) => m.seq);
        appended = await appendMessages(ctx.tdb.database.db, tenantId, 'append', [
          { role: 'user', kind: 'message', content: 'a new request arrived during the summary' },
          { role: 'assistant', kind: 'message', content: 'and an answer to it' },
        ]);
        return extractive.summarize(input);
      },
    };
    worker(appending);
    const eventId = randomUUID();
    await ctx.producer.runCompleted({
      eventId,
      tenantId,
      sessionId: 'append',
      strategy: { type: 'summarize', keepRecent: 5 },
    });
    expect(await settled(jobIdOf(tenantId, eventId))).toBe('completed');

    expect(appended).toEqual([original.length, original.length + 1]);
    const [row] = await ledger('append');
    expect(row).toMatchObject({ status: 'applied', summarizer: 'extractive' });
    expect(row?.cutoffSeq).toBeLessThan(original.length);
    // The summary covered only what left: nothing above the cutoff, nothing appended meanwhile.
    expect(summarizedSeqs.length).toBeGreaterThan(0);
    expect(Math.max(...summarizedSeqs)).toBe(row?.cutoffSeq);
    expect(summarizedSeqs).not.toContain(original.length);
    const live = await ctx.tdb.database.sql<{ seq: number; content: string }[]>`
      select seq::int, content from messages where tenant_id = ${tenantId} and session_id = 'append' and seq >= ${original.length} order by seq`;
    expect(live.map((m) => m.content)).toEqual([
      'a new request arrived during the summary',
      'and an answer to it',
    ]);
    const report = await audit(ctx.tdb.database.db, tenantId, 'append');
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(original.length + 2);
    expect(report.liveSummaries).toBe(1);
  });

  it('rejects a malformed event once, naming the field, and writes nothing', async () => {
    worker();
    const eventId = randomUUID();
    // Straight onto the queue, as a buggy producer in another language might.
    await ctx.producer.queue.add(
      RUN_COMPLETED,
      { eventId, tenantId, sessionIdd: 'typo' },
      { jobId: eventId, attempts: 5 },
    );
    expect(await settled(eventId)).toBe('failed');
    const job = await ctx.producer.queue.getJob(eventId);
    expect(job?.failedReason).toContain('event.sessionId');
    expect(job?.attemptsMade).toBe(1);
    const [count] = await ctx.tdb.database.sql<
      { n: number }[]
    >`select count(*)::int as n from compactions where event_id = ${eventId}`;
    expect(count?.n).toBe(0);
  });

  it('the producer refuses a bad event before enqueueing it', async () => {
    await expect(ctx.producer.runCompleted({ eventId: 'e:1', tenantId, sessionId: 'x' })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(ctx.producer.runCompleted({ eventId: 'e1', tenantId, sessionId: '' })).rejects.toThrow(
      /event\.sessionId/,
    );
  });

  it('fails an event for an unknown session, or for another tenant, without retrying', async () => {
    await seed('owned');
    worker();
    const foreign = { eventId: randomUUID(), tenantId: 'intruder', sessionId: 'owned' };
    const missing = { eventId: randomUUID(), tenantId, sessionId: 'nope' };
    await ctx.producer.runCompleted(foreign);
    await ctx.producer.runCompleted(missing);
    for (const e of [foreign, missing]) {
      expect(await settled(jobIdOf(e.tenantId, e.eventId))).toBe('failed');
      const job = await ctx.producer.queue.getJob(jobIdOf(e.tenantId, e.eventId));
      expect(job?.failedReason).toBe(`session "${e.sessionId}" not found for tenant "${e.tenantId}"`);
      expect(job?.attemptsMade).toBe(1);
    }
    expect(await ledger('owned')).toEqual([]);
  });
});
