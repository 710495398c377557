/**
 * A kept tail measured in tokens, applied by the real worker on Postgres: a tool-heavy corpus
 * session compacted by `slidingWindow` with `keepRecentTokens` keeps at least that many tokens
 * live, more messages than its message count alone, and archives the rest.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'acme';

afterEach(async () => {
  await ctx.closeWorkers();
});

describe('slidingWindow with keepRecentTokens', () => {
  it('keeps at least that many tokens live and archives the older messages', async () => {
    const sessionId = 'tool-heavy';
    const original = await loadCorpusSession('minisweagent__astropy-12907');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages: original });
    ctx.startWorker({ concurrency: 1 });

    const eventId = randomUUID();
    await ctx.producer.runCompleted({
      eventId,
      tenantId,
      sessionId,
      strategy: { type: 'slidingWindow', maxMessages: 5, keepRecentTokens: 5_000 },
    });
    const state = await waitFor(async () => {
      const s = await ctx.producer.queue.getJobState(jobIdOf(tenantId, eventId));
      return s === 'completed' || s === 'failed' ? s : undefined;
    });
    expect(state).toBe('completed');

    const [row] = await ctx.reads.history(tenantId, sessionId);
    expect(row).toMatchObject({ status: 'applied', strategy: 'slidingWindow' });
    const cutoffSeq = row?.cutoffSeq as number;
    const [tail] = await ctx.tdb.database.sql<{ n: number; tokens: number }[]>`
      select count(*)::int as n, coalesce(sum(token_count), 0)::int as tokens from messages
      where tenant_id = ${tenantId} and session_id = ${sessionId} and seq > ${cutoffSeq}`;
    expect(tail?.tokens).toBeGreaterThanOrEqual(5_000);
    expect(tail?.n).toBeGreaterThan(5);

    const [archived] = await ctx.tdb.database.sql<{ n: number; aboveCutoff: number }[]>`
      select count(*)::int as n, count(*) filter (where seq > ${cutoffSeq})::int as "aboveCutoff"
      from archived_messages where tenant_id = ${tenantId} and session_id = ${sessionId}`;
    expect(archived?.n).toBeGreaterThan(0);
    // Nothing newer than the cut was archived.
    expect(archived?.aboveCutoff).toBe(0);
    const report = await audit(ctx.tdb.database.db, tenantId, sessionId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(original.length);
    expect(report.archivedOriginals).toBe(archived?.n);
  });
});
