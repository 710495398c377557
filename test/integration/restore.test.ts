/**
 * Undo: a restored compaction puts back exactly what it archived, is idempotent and fenced.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { appendMessages, createSession } from '../../producer/index.ts';
import { FenceError, InvalidInputError } from '../../shared/contract/errors.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { changeOf, entryOf, skipOf } from '../../worker/pipeline/change.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'acme';

/** Every column of the live history, in seq order: what "exactly" means. */
async function liveRows(sessionId: string) {
  return ctx.tdb.database.sql`
    select seq::int, role, kind, content, content_blocks::text, tool_call_id, tool_name, tool_use_ids,
      tool_result_ids, has_thinking, token_count, pinned, created_at
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function sessionRow(sessionId: string) {
  const [row] = await ctx.tdb.database.sql`
    select message_count, token_count::int, compaction_version, checkpoint
    from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

async function compact(sessionId: string, strategy: Strategy) {
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy,
  });
  if (outcome.row === null) throw new Error('a manual compaction is never batched');
  expect(outcome.row.status).toBe('applied');
  return outcome.row;
}

async function seed(sessionId: string) {
  const messages = await loadCorpusSession('minisweagent__pvlib-1854');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
  return messages;
}

describe('restore', () => {
  it('puts back exactly what a summarize compaction archived, and only once', async () => {
    await seed('one');
    const before = await liveRows('one');
    const sessionBefore = await sessionRow('one');
    const row = await compact('one', { type: 'summarize', keepRecent: 10, maxSummaryTokens: 2000 });
    expect((await liveRows('one')).length).toBeLessThan(before.length);

    const result = await restoreCompaction(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'one',
      compactionId: row.id,
    });
    expect(result.status).toBe('restored');
    expect(result.row.status).toBe('restored');
    expect(result.removedSummarySeq).toBe(row.summarySeq);
    expect(await liveRows('one')).toEqual(before);
    expect(await sessionRow('one')).toMatchObject({
      message_count: sessionBefore?.message_count,
      token_count: sessionBefore?.token_count,
      checkpoint: null,
      compaction_version: 2,
    });
    expect(violations(await audit(ctx.tdb.database.db, tenantId, 'one'))).toEqual([]);

    const again = await restoreCompaction(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'one',
      compactionId: row.id,
    });
    expect(again.status).toBe('already-restored');
    expect(await liveRows('one')).toEqual(before);
    expect((await sessionRow('one'))?.compaction_version).toBe(2);
  });

  it('restores stacked compactions newest first, back to the original history', async () => {
    await seed('stack');
    const original = await liveRows('stack');
    const first = await compact('stack', { type: 'summarize', keepRecent: 20, maxSummaryTokens: 2000 });
    const checkpointAfterFirst = (await sessionRow('stack'))?.checkpoint;
    const afterFirst = await liveRows('stack');
    await appendMessages(
      ctx.tdb.database.db,
      tenantId,
      'stack',
      Array.from({ length: 30 }, (_, i) => ({
        role: i % 2 ? ('assistant' as const) : ('user' as const),
        kind: 'message' as const,
        content: `later message ${i}: ${'words '.repeat(40)}`,
      })),
    );
    const afterAppend = await liveRows('stack');
    const second = await compact('stack', { type: 'summarize', keepRecent: 5, maxSummaryTokens: 2000 });

    const refused = restoreCompaction(ctx.tdb.database.db, {
      tenantId,
      sessionId: 'stack',
      compactionId: first.id,
    });
    await expect(refused).rejects.toThrow(InvalidInputError);
    await expect(refused).rejects.toThrow(second.id);

    await restoreCompaction(ctx.tdb.database.db, { tenantId, sessionId: 'stack', compactionId: second.id });
    expect(await liveRows('stack')).toEqual(afterAppend);
    expect((await sessionRow('stack'))?.checkpoint).toEqual(checkpointAfterFirst);
    await restoreCompaction(ctx.tdb.database.db, { tenantId, sessionId: 'stack', compactionId: first.id });
    const appendedLive = (await liveRows('stack')).slice(original.length);
    expect((await liveRows('stack')).slice(0, original.length)).toEqual(original);
    expect(appendedLive).toEqual(afterAppend.slice(afterFirst.length));
    const report = await audit(ctx.tdb.database.db, tenantId, 'stack');
    expect(violations(report)).toEqual([]);
    expect(report).toMatchObject({ archivedOriginals: 0, liveSummaries: 0 });
  });

  it('fences off a compaction planned before the restore', async () => {
    await seed('fence');
    const row = await compact('fence', { type: 'slidingWindow', maxMessages: 40 });
    const snapshot = await ctx.reads.loadSnapshot(tenantId, 'fence');
    const plan = planCompaction(snapshot, snapshot.messages, { type: 'slidingWindow', maxMessages: 10 });
    if (plan.action !== 'compact') throw new Error('expected a plan');
    await restoreCompaction(ctx.tdb.database.db, { tenantId, sessionId: 'fence', compactionId: row.id });
    const entry = entryOf(
      { tenantId, sessionId: 'fence', idempotencyKey: 'stale', eventId: null, trigger: 'manual' },
      'slidingWindow',
    );
    const stale = ctx.writes.apply(changeOf(entry, plan, snapshot.compactionVersion, null, null));
    await expect(stale).rejects.toThrow(FenceError);
    expect(violations(await audit(ctx.tdb.database.db, tenantId, 'fence'))).toEqual([]);
  });

  it('refuses what cannot be restored, naming why, and changes nothing', async () => {
    await seed('refuse');
    const row = await compact('refuse', { type: 'slidingWindow', maxMessages: 40 });
    const requester = {
      tenantId,
      sessionId: 'refuse',
      idempotencyKey: 'skip-1',
      eventId: null,
      trigger: 'manual' as const,
    };
    const skipped = await ctx.writes.record(skipOf(entryOf(requester, 'none'), 'strategy is none'));
    const before = await liveRows('refuse');
    const cases: Array<[Parameters<typeof restoreCompaction>[1], RegExp]> = [
      [{ tenantId, sessionId: 'refuse', compactionId: 'abc' }, /"abc" is not a UUID/],
      [{ tenantId, sessionId: 'refuse', compactionId: randomUUID() }, /not found for session "refuse"/],
      [
        { tenantId: 'intruder', sessionId: 'refuse', compactionId: row.id },
        /session "refuse" not found for tenant/,
      ],
      [{ tenantId, sessionId: 'refuse', compactionId: skipped.row.id }, /is skipped: it moved nothing/],
    ];
    for (const [request, message] of cases) {
      await expect(restoreCompaction(ctx.tdb.database.db, request)).rejects.toThrow(message);
    }
    expect(await liveRows('refuse')).toEqual(before);
  });

  it('previews with --dry-run and restores from the command line', async () => {
    await seed('cli');
    const row = await compact('cli', { type: 'summarize', keepRecent: 10, maxSummaryTokens: 2000 });
    const env = ctx.cliEnv;
    const args = ['restore', '--tenant', tenantId, '--session', 'cli', '--compaction', row.id];
    const compacted = await liveRows('cli');

    const preview = await runCli([...args, '--dry-run'], env);
    expect(preview.code, preview.stderr).toBe(0);
    expect(JSON.parse(preview.stdout)).toMatchObject({
      status: 'dry-run',
      removedSummarySeq: row.summarySeq,
    });
    expect(JSON.parse(preview.stdout).restoredSeqs).toHaveLength(row.messagesArchived ?? -1);
    expect(await liveRows('cli')).toEqual(compacted);

    const done = await runCli(args, env);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      status: 'restored',
      row: { id: row.id, status: 'restored' },
    });
    const history = await runCli(['history', '--tenant', tenantId, '--session', 'cli', '--json'], env);
    expect(JSON.parse(history.stdout.trim())).toMatchObject({ id: row.id, status: 'restored' });
  });
});
