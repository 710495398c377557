/**
 * `auto` on a real transcript with lots of tool output: old tool results are cleared first (no
 * LLM call), and the rest is summarized only while the session is still over its trigger. Each
 * stage is its own compaction: its own ledger row and version bump, each restorable, newest first,
 * back to the original byte-exact; a retried job applies neither stage twice. The summary reads the
 * originals of the results the clearing replaced, not their placeholders.
 */
import { describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { CLEARED_RESULT_PREFIX } from '../../shared/strategies/clear-tool-results.ts';
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import { checkpointSchema } from '../../shared/summary/checkpoint.ts';
import { extractWorkingSet } from '../../shared/working-set/working-set.ts';
import type { CompactionRequest } from '../../worker/pipeline/pipeline.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const db = () => ctx.tdb.database.db;

/** Every column of the live history, in seq order: what "byte-exact" means. */
async function liveRows(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql`
    select seq::int, role, kind, content, content_blocks::text, tool_call_id, tool_name, tool_use_ids,
      tool_result_ids, has_thinking, token_count, pinned, created_at, context_version
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function sessionRow(tenantId: string, sessionId: string) {
  const [row] = await ctx.tdb.database.sql<
    { message_count: number; token_count: number; compaction_version: number }[]
  >`select message_count, token_count::int, compaction_version from sessions
    where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

/** The session's ledger rows, oldest first. */
async function ledger(tenantId: string, sessionId: string) {
  return ctx.tdb.database.sql<
    { id: string; strategy: string; status: string; idempotency_key: string; compaction_version: number }[]
  >`select id, strategy, status, idempotency_key, compaction_version from compactions
    where tenant_id = ${tenantId} and session_id = ${sessionId} order by created_at, compaction_version`;
}

function compact(
  tenantId: string,
  sessionId: string,
  strategy: Strategy,
  idempotencyKey: string,
  trigger: CompactionRequest['trigger'] = 'manual',
) {
  return ctx.compactInProcess({ tenantId, sessionId, strategy, trigger, idempotencyKey });
}

/** The session's checkpoint, and the text of its live summary message. */
async function summaryOf(tenantId: string, sessionId: string) {
  const [session] = await ctx.tdb.database.sql<{ checkpoint: unknown }[]>`
    select checkpoint from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  const [message] = await ctx.tdb.database.sql<{ content: string }[]>`
    select content from messages where tenant_id = ${tenantId} and session_id = ${sessionId}
      and kind = 'summary'`;
  return { checkpoint: checkpointSchema.parse(session?.checkpoint), text: message?.content ?? '' };
}

async function seed(tenantId: string, sessionId: string) {
  const messages = await loadCorpusSession('minisweagent__pvlib-1854');
  await createSession(db(), { tenantId, sessionId, messages });
  return messages;
}

describe('auto', () => {
  it('clears, then summarizes what is still over the trigger: two rows, two versions, each restorable', async () => {
    const tenantId = 'auto-both';
    const messages = await seed(tenantId, 'pvlib');
    // A limit the clearing cannot get under: the summary must follow.
    await setPolicy(db(), tenantId, null, { strategy: { type: 'auto' }, triggers: { maxMessages: 20 } });
    const before = await liveRows(tenantId, 'pvlib');
    const sessionBefore = await sessionRow(tenantId, 'pvlib');

    const outcome = await compact(tenantId, 'pvlib', parseStrategy('auto'), 'job-1', 'event');
    expect(outcome.status, outcome.row?.reason ?? '').toBe('applied');
    const rows = await ledger(tenantId, 'pvlib');
    expect(rows.map((r) => [r.strategy, r.status, r.idempotency_key, r.compaction_version])).toEqual([
      ['clearToolResults', 'applied', 'job-1:clearToolResults', (sessionBefore?.compaction_version ?? 0) + 1],
      ['summarize', 'applied', 'job-1:summarize', (sessionBefore?.compaction_version ?? 0) + 2],
    ]);
    const [cleared, summarized] = rows;
    expect(outcome.row?.id).toBe(summarized?.id);
    expect(outcome.row?.reason).toMatch(/^auto: after clearToolResults, \d+ messages, over the limit of 20$/);
    expect(outcome.row?.messagesBefore).toBe(messages.length);
    expect(outcome.row?.messagesAfter).toBeLessThan(messages.length);
    expect((await sessionRow(tenantId, 'pvlib'))?.compaction_version).toBe(
      (sessionBefore?.compaction_version ?? 0) + 2,
    );
    expect(violations(await audit(db(), tenantId, 'pvlib'))).toEqual([]);

    // The job retried: each stage is found done, nothing is written again.
    const retried = await compact(tenantId, 'pvlib', parseStrategy('auto'), 'job-1', 'event');
    expect(retried).toMatchObject({ status: 'duplicate', row: { id: summarized?.id } });
    expect(await ledger(tenantId, 'pvlib')).toHaveLength(2);

    // Newest first: the summary, then the clearing, back to the original byte-exact.
    for (const row of [summarized, cleared]) {
      const restored = await restoreCompaction(db(), {
        tenantId,
        sessionId: 'pvlib',
        compactionId: row?.id ?? '',
      });
      expect(restored.status).toBe('restored');
      expect(violations(await audit(db(), tenantId, 'pvlib'))).toEqual([]);
    }
    expect(await liveRows(tenantId, 'pvlib')).toEqual(before);
    expect(await sessionRow(tenantId, 'pvlib')).toMatchObject({
      message_count: sessionBefore?.message_count,
      token_count: sessionBefore?.token_count,
    });
    const clean = await audit(db(), tenantId, 'pvlib');
    expect(clean).toMatchObject({ archivedOriginals: 0, archivedRewrites: 0 });
  });

  it('stops after the clearing when it brings the session under its trigger: one row', async () => {
    const tenantId = 'auto-clear';
    await seed(tenantId, 'pvlib');
    const sessionBefore = await sessionRow(tenantId, 'pvlib');
    // Over by one token: any clearing gets the session under it.
    const maxTokens = (sessionBefore?.token_count ?? 0) - 1;
    await setPolicy(db(), tenantId, null, { strategy: { type: 'auto' }, triggers: { maxTokens } });
    const before = await liveRows(tenantId, 'pvlib');

    const outcome = await compact(tenantId, 'pvlib', parseStrategy('auto'), 'job-2', 'event');
    expect(outcome.status, outcome.row?.reason ?? '').toBe('applied');
    expect(outcome.row?.strategy).toBe('clearToolResults');
    expect(outcome.row?.tokensAfter).toBeLessThanOrEqual(maxTokens);
    const rows = await ledger(tenantId, 'pvlib');
    expect(rows.map((r) => [r.strategy, r.status, r.idempotency_key])).toEqual([
      ['clearToolResults', 'applied', 'job-2:clearToolResults'],
    ]);
    expect((await sessionRow(tenantId, 'pvlib'))?.compaction_version).toBe(
      (sessionBefore?.compaction_version ?? 0) + 1,
    );
    expect(violations(await audit(db(), tenantId, 'pvlib'))).toEqual([]);

    // A retry resumes (no admission again, no skipped row) and finds the clearing done.
    const retried = await compact(tenantId, 'pvlib', parseStrategy('auto'), 'job-2', 'event');
    expect(retried).toMatchObject({ status: 'duplicate', row: { id: rows[0]?.id } });
    expect(await ledger(tenantId, 'pvlib')).toHaveLength(1);

    await restoreCompaction(db(), { tenantId, sessionId: 'pvlib', compactionId: rows[0]?.id ?? '' });
    expect(await liveRows(tenantId, 'pvlib')).toEqual(before);
    expect(violations(await audit(db(), tenantId, 'pvlib'))).toEqual([]);
  });

  it('summarizes the originals of the results it cleared: the working set survives, no placeholder', async () => {
    const tenantId = 'auto-originals';
    const messages = await seed(tenantId, 'pvlib');
    await createSession(db(), { tenantId, sessionId: 'alone', messages });
    await setPolicy(db(), tenantId, null, { strategy: { type: 'auto' }, triggers: { maxMessages: 20 } });
    const before = await liveRows(tenantId, 'pvlib');

    const alone = await compact(tenantId, 'alone', parseStrategy('summarize'), 'alone-1');
    expect(alone.status, alone.row?.reason ?? '').toBe('applied');
    const outcome = await compact(tenantId, 'pvlib', parseStrategy('auto'), 'auto-1', 'event');
    expect(outcome.status, outcome.row?.reason ?? '').toBe('applied');
    const [cleared, summarized] = await ledger(tenantId, 'pvlib');
    expect([cleared?.strategy, summarized?.strategy]).toEqual(['clearToolResults', 'summarize']);

    // The paths only the cleared results held: gone from the live history after the clearing.
    const originals = await ctx.tdb.database.sql<{ seq: number; content: string }[]>`
      select seq::int, content from archived_messages where compaction_id = ${cleared?.id ?? ''}
        and rewritten order by seq`;
    expect(originals.length).toBeGreaterThan(0);
    const clearedPaths = extractWorkingSet(messages.filter((m) => originals.some((o) => o.seq === m.seq)));
    expect(clearedPaths.length).toBeGreaterThan(0);

    const auto = await summaryOf(tenantId, 'pvlib');
    const summarizeAlone = await summaryOf(tenantId, 'alone');
    expect(auto.checkpoint.workingSet).toEqual(expect.arrayContaining(clearedPaths));
    expect(auto.checkpoint.workingSet).toEqual(expect.arrayContaining(summarizeAlone.checkpoint.workingSet));
    expect(auto.text).not.toContain(CLEARED_RESULT_PREFIX);
    expect(JSON.stringify(auto.checkpoint)).not.toContain(CLEARED_RESULT_PREFIX);
    expect(JSON.stringify(auto.checkpoint)).not.toContain('archived by compactor');
    // What left the live history, and was archived and counted, is the placeholders, not the originals.
    const left = await ctx.tdb.database.sql<{ kind: string; content: string }[]>`
      select kind, content from archived_messages where compaction_id = ${summarized?.id ?? ''}
        and seq in (select seq from archived_messages where compaction_id = ${cleared?.id ?? ''} and rewritten)
        and kind = 'tool_result'`;
    expect(left.length).toBeGreaterThan(0);
    for (const row of left) expect(row.content.startsWith(CLEARED_RESULT_PREFIX)).toBe(true);

    // Restore, newest first: the summary gives back the placeholders, the clearing the originals.
    await restoreCompaction(db(), { tenantId, sessionId: 'pvlib', compactionId: summarized?.id ?? '' });
    const placeholders = await ctx.tdb.database.sql<{ content: string }[]>`
      select m.content from messages m
      join archived_messages a on a.tenant_id = m.tenant_id and a.session_id = m.session_id and a.seq = m.seq
      where a.compaction_id = ${cleared?.id ?? ''} and a.rewritten and m.kind = 'tool_result'`;
    expect(placeholders.length).toBeGreaterThan(0);
    for (const p of placeholders) expect(p.content.startsWith(CLEARED_RESULT_PREFIX)).toBe(true);
    expect(violations(await audit(db(), tenantId, 'pvlib'))).toEqual([]);
    await restoreCompaction(db(), { tenantId, sessionId: 'pvlib', compactionId: cleared?.id ?? '' });
    expect(violations(await audit(db(), tenantId, 'pvlib'))).toEqual([]);
    expect(await liveRows(tenantId, 'pvlib')).toEqual(before);
  });

  it('reads a later summary at a seq a clearing rewrote as the summary, not as the old original', async () => {
    const tenantId = 'auto-later';
    await seed(tenantId, 'pvlib');
    const clearing = await compact(tenantId, 'pvlib', parseStrategy('clearToolResults'), 'later-clear-1');
    expect(clearing.status, clearing.row?.reason ?? '').toBe('applied');
    const rewritten = await ctx.tdb.database.sql<{ seq: number }[]>`
      select seq::int from archived_messages where compaction_id = ${clearing.row?.id ?? ''} and rewritten
      order by seq`;
    const last = rewritten.at(-1)?.seq ?? -1;
    const live = await liveRows(tenantId, 'pvlib');
    // Summarize up to the last cleared result: the summary takes its seq.
    const keepRecent = live.filter((r) => r.seq > last).length;
    const summary = await compact(
      tenantId,
      'pvlib',
      { ...parseStrategy('summarize'), keepRecent } as Strategy,
      'later-summary-1',
    );
    expect(summary.status, summary.row?.reason ?? '').toBe('applied');
    expect(summary.row?.summarySeq).toBe(last);

    const [read] = await ctx.reads.loadMessages(tenantId, 'pvlib', [last]);
    const [row] = await ctx.tdb.database.sql<{ content: string }[]>`
      select content from messages where tenant_id = ${tenantId} and session_id = 'pvlib' and seq = ${last}`;
    expect(read).toMatchObject({ seq: last, kind: 'summary', content: row?.content });
  });

  it('reads leaving messages after a clearing as the uncleared session reads them, whole or in pages', async () => {
    const tenantId = 'auto-reads';
    const messages = await seed(tenantId, 'pvlib');
    await createSession(db(), { tenantId, sessionId: 'untouched', messages });
    const clearing = await compact(tenantId, 'pvlib', parseStrategy('clearToolResults'), 'reads-clear-1');
    expect(clearing.status, clearing.row?.reason ?? '').toBe('applied');
    const seqs = messages.map((m) => m.seq);
    const expected = await ctx.reads.loadMessages(tenantId, 'untouched', seqs);

    // The batch path reads them whole, the online one in pages: both see the originals.
    expect(await ctx.reads.loadMessages(tenantId, 'pvlib', seqs)).toEqual(expected);
    const pages = [];
    for await (const page of ctx.reads.pagedMessages(tenantId, 'pvlib', seqs, 7)) pages.push(...page);
    expect(pages).toEqual(expected);

    // Restored, the clearing no longer counts: the live rows are the originals again.
    await restoreCompaction(db(), { tenantId, sessionId: 'pvlib', compactionId: clearing.row?.id ?? '' });
    expect(await ctx.reads.loadMessages(tenantId, 'pvlib', seqs)).toEqual(expected);
  });
});
