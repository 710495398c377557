/**
 * Identity is scoped by tenant: ids a caller chooses (`eventId`, `sessionId`) are unique only within
 * its tenant, so two tenants using the same ones at the same time must each get their own job, their
 * own lease and their own ledger row. Before job ids were derived from (tenant, eventId), the second
 * tenant's event was taken as a duplicate of the first's and never processed.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const TENANTS = ['acme', 'evil'] as const;
const strategy = { type: 'slidingWindow', maxMessages: 10 } as const;

async function seed(sessionId: string) {
  const messages = await loadCorpusSession('sweagent__ctf-rev-rock');
  for (const tenantId of TENANTS) await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  return messages;
}

async function settled(jobId: string) {
  return waitFor(async () => {
    const state = await ctx.producer.queue.getJobState(jobId);
    return state === 'completed' || state === 'failed' ? state : undefined;
  });
}

afterEach(() => ctx.closeWorkers());

describe('two tenants, one event id', () => {
  it('applies each tenant’s event once when both send the same eventId and session id at once', async () => {
    const original = await seed('shared-name');
    const eventId = `run-${randomUUID()}`;
    ctx.startWorker({ concurrency: 2 });
    const enqueued = await Promise.all(
      TENANTS.map((tenantId) =>
        ctx.producer.runCompleted({ eventId, tenantId, sessionId: 'shared-name', strategy }),
      ),
    );
    expect(enqueued).toEqual([
      { jobId: jobIdOf('acme', eventId), coalesced: false },
      { jobId: jobIdOf('evil', eventId), coalesced: false },
    ]);
    for (const { jobId } of enqueued) expect(await settled(jobId)).toBe('completed');

    for (const tenantId of TENANTS) {
      const rows = await ctx.reads.history(tenantId, 'shared-name');
      expect(rows.map((r) => [r.status, r.eventId])).toEqual([['applied', eventId]]);
      const report = await audit(ctx.tdb.database.db, tenantId, 'shared-name');
      expect(violations(report)).toEqual([]);
      expect(report.liveOriginals + report.archivedOriginals).toBe(original.length);
    }
  });

  it('processes a tenant’s event that another tenant sent the same id for earlier', async () => {
    await seed('later');
    const eventId = `run-${randomUUID()}`;
    const first = await ctx.producer.runCompleted({
      eventId,
      tenantId: 'evil',
      sessionId: 'later',
      strategy,
    });
    ctx.startWorker({ concurrency: 1 });
    expect(await settled(first.jobId)).toBe('completed');
    // acme's own event with the same id, after evil's job completed and is kept for a day.
    const second = await ctx.producer.runCompleted({
      eventId,
      tenantId: 'acme',
      sessionId: 'later',
      strategy,
    });
    expect(second).toEqual({ jobId: jobIdOf('acme', eventId), coalesced: false });
    expect(await settled(second.jobId)).toBe('completed');
    expect((await ctx.reads.history('acme', 'later')).map((r) => r.status)).toEqual(['applied']);
  });

  it('keeps job ids unambiguous for tenant ids that hold the separator', () => {
    expect(jobIdOf('a~b', 'c')).not.toBe(jobIdOf('a', 'b~c'));
    expect(jobIdOf('a:b/c', 'd')).toBe('a%3Ab%2Fc~d');
  });
});
