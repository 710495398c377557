import { describe, expect, it } from 'vitest';
import { appendMessages, createSession } from '../../producer/index.ts';
import { SessionNotFoundError } from '../../shared/contract/errors.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { purgeSessions } from '../../worker/postgres/purge.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

async function session(tenantId: string, sessionId: string) {
  const messages = await loadCorpusSession('sweagent__marshmallow-1867-fc');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
}

async function compact(tenantId: string, sessionId: string, mode: 'inPlace' | 'newSession') {
  await setPolicy(ctx.tdb.database.db, tenantId, null, {
    strategy: { type: 'slidingWindow', maxMessages: 10 },
    mode,
  });
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy: { type: 'slidingWindow', maxMessages: 10 },
  });
  if (outcome.row?.status !== 'applied') throw new Error(`${outcome.row?.status}: ${outcome.row?.reason}`);
  return outcome.row;
}

/** Rows of every table for a tenant's sessions. */
async function counts(tenantId: string) {
  const [row] = await ctx.tdb.database.sql<Record<string, number>[]>`
    select
      (select count(*)::int from sessions where tenant_id = ${tenantId}) as sessions,
      (select count(*)::int from messages where tenant_id = ${tenantId}) as messages,
      (select count(*)::int from archived_messages where tenant_id = ${tenantId}) as archived,
      (select count(*)::int from compactions where tenant_id = ${tenantId}) as compactions`;
  return row;
}

describe('purge', () => {
  it("removes a session's whole lineage and nothing else, in one transaction", async () => {
    await session('p1', 'chat');
    await session('p1', 'other');
    await session('p2', 'chat');
    const child = (await compact('p1', 'chat', 'newSession')).childSessionId as string;
    // The child compacts in place, with its own archive.
    await appendMessages(
      ctx.tdb.database.db,
      'p1',
      child,
      Array.from({ length: 20 }, (_, i) => ({ role: 'user' as const, content: `more ${i}` })),
    );
    await compact('p1', child, 'inPlace');
    const before = await counts('p1');
    const untouched = await counts('p2');
    // The webhook log told of both compactions; a delivery of something else stays.
    await ctx.tdb.database.sql`
      insert into webhook_deliveries (tenant_id, event_id, attempt, url, status_code, duration_ms, delivered)
      select 'p1', id, 1, 'https://hooks.example/compactor', 200, 12, true from compactions where tenant_id = 'p1'
      union all select 'p1', gen_random_uuid(), 1, 'https://hooks.example/compactor', 200, 12, true`;
    // Naming the child purges the parent it continued from as well.
    const result = await purgeSessions(ctx.tdb.database.db, { tenantId: 'p1', sessionId: child });
    expect(result.sessions.sort()).toEqual(['chat', child].sort());
    expect(result.compactions).toBe(2);
    expect(result.webhookDeliveries).toBe(2);
    expect(result.archivedMessages).toBeGreaterThan(0);
    const [log] = await ctx.tdb.database.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_deliveries where tenant_id = 'p1'`;
    expect(log?.n).toBe(1);
    const after = await counts('p1');
    expect(after).toEqual({
      sessions: 1,
      messages: (before?.messages ?? 0) - result.messages,
      archived: 0,
      compactions: 0,
    });
    expect(after?.messages).toBeGreaterThan(0); // "other" is whole
    expect(await counts('p2')).toEqual(untouched);
    await expect(purgeSessions(ctx.tdb.database.db, { tenantId: 'p1', sessionId: 'chat' })).rejects.toThrow(
      SessionNotFoundError,
    );
  });

  it('from the command line: one session, or the tenant only with --yes', async () => {
    await session('p3', 'a');
    await session('p3', 'b');
    const one = await runCli(['purge', '--tenant', 'p3', '--session', 'a'], ctx.cliEnv);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ sessions: ['a'], messages: 41 });
    const refused = await runCli(['purge', '--tenant', 'p3'], ctx.cliEnv);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('add --yes, or name --session');
    expect((await counts('p3'))?.sessions).toBe(1);
    const all = await runCli(['purge', '--tenant', 'p3', '--yes'], ctx.cliEnv);
    expect(all.code, all.stderr).toBe(0);
    expect(await counts('p3')).toEqual({ sessions: 0, messages: 0, archived: 0, compactions: 0 });
  });
});
