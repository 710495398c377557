import { describe, expect, it } from 'vitest';
import {
  type AppendMessage,
  appendMessages,
  createSession,
  loadContext,
  type NewMessage,
} from '../../producer/index.ts';
import { ArchiveExpiredError } from '../../shared/contract/errors.ts';
import type { PolicyInput } from '../../shared/policy/policy.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { runRetention } from '../../worker/queue/sweeps/retention.ts';
import { startSweepService } from '../../worker/queue/sweeps/sweep.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession, silentLogger, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

async function policy(tenantId: string, agentId: string | null, input: PolicyInput) {
  await setPolicy(ctx.tdb.database.db, tenantId, agentId, input);
}

/** Applies one manual compaction in-process and returns its ledger row. */
async function compact(tenantId: string, sessionId: string, strategy: Strategy) {
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy,
  });
  if (outcome.row?.status !== 'applied') throw new Error(`compaction not applied: ${outcome.row?.reason}`);
  return outcome.row;
}

/** Moves a compaction's archived rows `days` back in time, as if archived that long ago. */
async function age(compactionId: string, days: number) {
  await ctx.tdb.database.sql`
    update archived_messages set archived_at = archived_at - make_interval(days => ${days})
    where compaction_id = ${compactionId}`;
}

/** Every column of the live history, in seq order. */
async function liveRows(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql`
    select seq::int, role, kind, content, content_blocks::text, token_count, pinned, created_at
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function archived(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql<{ compaction_id: string; seq: string; role: string; token_count: number }[]>`
    select compaction_id, seq, role, token_count from archived_messages
    where tenant_id = ${tenantId} and session_id = ${sessionId} order by compaction_id, seq`;
}

async function sessionRow(tenantId: string, sessionId: string) {
  const [row] = await ctx.tdb.database.sql`
    select message_count, token_count::int, compaction_version, checkpoint, last_compacted_at
    from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

async function expiredRows(tenantId: string, sessionId: string) {
  return (await ctx.reads.history(tenantId, sessionId)).filter((r) => r.status === 'expired');
}

/** A conversation whose unpinned system message leaves with the first compaction. */
function withLooseSystemMessage(count: number): NewMessage[] {
  return [
    { seq: 0, role: 'system', kind: 'message', content: 'Answer in one sentence.' },
    ...Array.from({ length: count }, (_, i): NewMessage => {
      const role = i % 2 === 0 ? 'user' : 'assistant';
      return { seq: i + 1, role, kind: 'message', content: `${role} turn ${i + 1}: ${'words '.repeat(20)}` };
    }),
  ];
}

describe('retention', () => {
  it('drops archived originals past retention on the sweep; records it; leaves the live history; restore refuses', async () => {
    const t = 'keep30';
    await policy(t, null, { strategy: { type: 'slidingWindow', maxMessages: 10 }, retentionDays: 30 });
    await createSession(ctx.tdb.database.db, {
      tenantId: t,
      sessionId: 's',
      messages: withLooseSystemMessage(40),
    });
    const first = await compact(t, 's', { type: 'slidingWindow', maxMessages: 10 });
    await appendMessages(
      ctx.tdb.database.db,
      t,
      's',
      Array.from(
        { length: 20 },
        (_, i): AppendMessage =>
          i % 2 === 0 ? { role: 'user', content: `more ${i}` } : { role: 'assistant', content: `reply ${i}` },
      ),
    );
    const second = await compact(t, 's', { type: 'slidingWindow', maxMessages: 10 });
    await age(first.id, 31);
    await age(second.id, 29);
    const firstArchive = (await archived(t, 's')).filter((r) => r.compaction_id === first.id);
    const firstOriginals = firstArchive.filter((r) => r.role !== 'system');
    expect(firstArchive.length).toBe(first.messagesArchived);
    expect(firstOriginals.length).toBe(firstArchive.length - 1);
    const live = await liveRows(t, 's');
    const session = await sessionRow(t, 's');
    const context = await loadContext(ctx.tdb.database.db, { tenantId: t, sessionId: 's' });

    const pass = await runRetention(ctx.tdb.database.db);

    expect(pass).toMatchObject({ sessions: 1, messages: firstOriginals.length });
    const left = await archived(t, 's');
    // The first compaction's originals went; its system message and the second's rows stay.
    expect(left.filter((r) => r.compaction_id === first.id).map((r) => r.role)).toEqual(['system']);
    expect(left.filter((r) => r.compaction_id === second.id)).toHaveLength(second.messagesArchived ?? -1);
    const [expired, ...more] = await expiredRows(t, 's');
    expect(more).toEqual([]);
    expect(expired).toMatchObject({
      trigger: 'sweep',
      strategy: 'retention:30d',
      expiredMessages: firstOriginals.length,
      expiredTokens: firstOriginals.reduce((sum, r) => sum + r.token_count, 0),
      expiredCompactionIds: [first.id],
      idempotencyKey: null,
    });
    expect(expired?.reason).toMatch(/^retention of 30 days: archived originals from before \S+Z dropped$/);
    // Nothing live moved: the rows, the counters, the version, the context the agent is sent.
    expect(await liveRows(t, 's')).toEqual(live);
    expect(await sessionRow(t, 's')).toEqual(session);
    expect(await loadContext(ctx.tdb.database.db, { tenantId: t, sessionId: 's' })).toEqual(context);
    expect(JSON.stringify(context.system)).toContain('Answer in one sentence.');

    const refused = restoreCompaction(ctx.tdb.database.db, {
      tenantId: t,
      sessionId: 's',
      compactionId: first.id,
    });
    await expect(refused).rejects.toThrow(ArchiveExpiredError);
    await expect(refused).rejects.toThrow(
      `compaction ${first.id} cannot be restored: its archived originals were dropped ${expired?.createdAt.toISOString()} by the sweep's retention pass (retention of 30 days`,
    );
    await expect(
      restoreCompaction(ctx.tdb.database.db, {
        tenantId: t,
        sessionId: 's',
        compactionId: expired?.id ?? '',
      }),
    ).rejects.toThrow('it is not a compaction and cannot be restored');
    expect(await liveRows(t, 's')).toEqual(live);
    // The second compaction, still within retention, restores as ever.
    const restored = await restoreCompaction(ctx.tdb.database.db, {
      tenantId: t,
      sessionId: 's',
      compactionId: second.id,
    });
    expect(restored.restoredSeqs).toHaveLength(second.messagesArchived ?? -1);

    // A second pass finds nothing more and writes no row.
    expect(await runRetention(ctx.tdb.database.db)).toMatchObject({ sessions: 0, messages: 0 });
    expect(await expiredRows(t, 's')).toHaveLength(1);
  });

  it('drops nothing under a policy without retention, nor for an agent whose own policy sets none', async () => {
    const t = 'forever';
    await policy(t, null, { strategy: { type: 'slidingWindow', maxMessages: 10 }, retentionDays: 7 });
    await policy(t, 'keeper', { strategy: { type: 'slidingWindow', maxMessages: 10 } });
    const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
    await createSession(ctx.tdb.database.db, { tenantId: t, sessionId: 'kept', agentId: 'keeper', messages });
    await createSession(ctx.tdb.database.db, { tenantId: 'nopolicy', sessionId: 'kept', messages });
    await policy('plain', null, { strategy: { type: 'slidingWindow', maxMessages: 10 } });
    await createSession(ctx.tdb.database.db, { tenantId: 'plain', sessionId: 'kept', messages });
    const rows = [
      await compact(t, 'kept', { type: 'slidingWindow', maxMessages: 10 }),
      await compact('nopolicy', 'kept', { type: 'slidingWindow', maxMessages: 10 }),
      await compact('plain', 'kept', { type: 'slidingWindow', maxMessages: 10 }),
    ];
    for (const row of rows) await age(row.id, 3_650);

    await runRetention(ctx.tdb.database.db);

    for (const [tenantId, row] of [t, 'nopolicy', 'plain'].map((id, i) => [id, rows[i]] as const)) {
      expect(await archived(tenantId, 'kept')).toHaveLength(row?.messagesArchived ?? -1);
      expect(await expiredRows(tenantId, 'kept')).toEqual([]);
    }
  });

  it('deletes in bounded batches, all of one pass in one ledger row', async () => {
    const t = 'batched';
    await policy(t, null, { strategy: { type: 'slidingWindow', maxMessages: 5 }, retentionDays: 1 });
    await createSession(ctx.tdb.database.db, {
      tenantId: t,
      sessionId: 'b',
      messages: withLooseSystemMessage(40),
    });
    const row = await compact(t, 'b', { type: 'slidingWindow', maxMessages: 5 });
    await age(row.id, 2);
    const originals = (await archived(t, 'b')).filter((r) => r.role !== 'system');
    expect(originals.length).toBeGreaterThan(3 * 7);

    const pass = await runRetention(ctx.tdb.database.db, { batchSize: 7 });

    expect(pass.messages).toBe(originals.length);
    const [expired, ...more] = await expiredRows(t, 'b');
    expect(more).toEqual([]);
    expect(expired).toMatchObject({ expiredMessages: originals.length, expiredCompactionIds: [row.id] });
  });

  it('runs on the scheduled sweep; compactor sweep --dry-run lists what would go; history shows the drop', async () => {
    const t = 'scheduled';
    await policy(t, null, { strategy: { type: 'slidingWindow', maxMessages: 10 }, retentionDays: 30 });
    await createSession(ctx.tdb.database.db, {
      tenantId: t,
      sessionId: 'a',
      messages: withLooseSystemMessage(30),
    });
    const row = await compact(t, 'a', { type: 'slidingWindow', maxMessages: 10 });
    await age(row.id, 45);
    const originals = (await archived(t, 'a')).filter((r) => r.role !== 'system').length;

    const dry = await runCli(['sweep', '--dry-run'], ctx.cliEnv);
    expect(dry.code, dry.stderr).toBe(0);
    const lines = dry.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toContainEqual(
      expect.objectContaining({
        tenantId: t,
        sessionId: 'a',
        retention: expect.objectContaining({
          retentionDays: 30,
          messages: originals,
          compactionIds: [row.id],
        }),
      }),
    );
    expect(lines.at(-1)).toMatchObject({ dryRun: true, retention: { sessions: 1, messages: originals } });
    expect(await expiredRows(t, 'a')).toEqual([]);

    const services = openServices({ ...ctx.config, sweepEveryMs: 1_000 }, silentLogger, { poolSize: 2 });
    const sweeps = await startSweepService(services);
    try {
      await waitFor(async () => (await expiredRows(t, 'a')).length === 1);
    } finally {
      await sweeps.close();
      await services.close();
    }
    expect((await archived(t, 'a')).map((r) => r.role)).toEqual(['system']);

    const history = await runCli(['history', '--tenant', t, '--session', 'a'], {
      ...ctx.cliEnv,
      COLUMNS: '400',
    });
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(
      new RegExp(`expired +sweep +retention:30d +${originals} dropped .*\\(of ${row.id.slice(0, 8)}\\)`),
    );
    const restore = await runCli(
      ['restore', '--tenant', t, '--session', 'a', '--compaction', row.id.slice(0, 8)],
      ctx.cliEnv,
    );
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(
      new RegExp(
        `^compactor restore: compaction ${row.id} cannot be restored: its archived originals were dropped .* by the sweep's retention pass \\(retention of 30 days`,
      ),
    );
  });
});
