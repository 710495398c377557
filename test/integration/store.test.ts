/**
 * Postgres behaviour of import and the apply transaction (fencing, idempotency, the
 * archive), against a real database of this file's own.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { SessionExistsError } from '../../producer/sessions.ts';
import { FenceError } from '../../shared/contract/errors.ts';
import { TranscriptError } from '../../shared/contract/transcript.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { noUsage } from '../../shared/summary/summarizer.ts';
import { changeOf, entryOf } from '../../worker/pipeline/change.ts';
import { summaryToWrite } from '../../worker/pipeline/summary.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
let dir: string;
const tenantId = 'acme';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-store-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function countRows(sessionId: string) {
  const [r] = await ctx.tdb.database.sql<{ live: number; archived: number; ledger: number }[]>`
    select (select count(*) from messages where tenant_id = ${tenantId} and session_id = ${sessionId})::int as live,
           (select count(*) from archived_messages where tenant_id = ${tenantId} and session_id = ${sessionId})::int as archived,
           (select count(*) from compactions where tenant_id = ${tenantId} and session_id = ${sessionId})::int as ledger`;
  return r;
}

describe('import', () => {
  it('loads a corpus transcript and refuses to import it twice', async () => {
    const file = path.join(CORPUS_DIR, 'minisweagent__marshmallow-1343.jsonl');
    const first = await importTranscript(ctx.tdb.database.db, file, { tenantId });
    expect(first).toMatchObject({ sessionId: 'minisweagent__marshmallow-1343', messageCount: 519 });
    await expect(importTranscript(ctx.tdb.database.db, file, { tenantId })).rejects.toThrow(
      SessionExistsError,
    );
    expect(await countRows(first.sessionId)).toEqual({ live: 519, archived: 0, ledger: 0 });
    // Another tenant may hold a session of the same name.
    await expect(importTranscript(ctx.tdb.database.db, file, { tenantId: 'other' })).resolves.toMatchObject({
      messageCount: 519,
    });
  });

  it.each([
    ['not JSON', '{"seq": 0, "role": "user"', /bad\.jsonl:1: not JSON/],
    ['a missing field', '{"seq":0,"role":"user","kind":"message"}', /bad\.jsonl:1: content: /],
    [
      'a NUL byte',
      '{"seq":0,"role":"user","kind":"message","content":"a\\u0000b"}',
      /content: contains a NUL/,
    ],
    [
      'duplicate seqs',
      '{"seq":0,"role":"user","kind":"message","content":"a"}\n{"seq":0,"role":"user","kind":"message","content":"b"}',
      /bad\.jsonl:2: seq 0 is not greater/,
    ],
    [
      'a tool result without its call',
      '{"seq":0,"role":"tool","kind":"tool_result","content":"ok","toolCallId":"c1"}',
      /toolCallId "c1": tool result without an earlier tool call/,
    ],
    ['a wrong role', '{"seq":0,"role":"robot","kind":"message","content":"a"}', /bad\.jsonl:1: role: /],
  ])('refuses a transcript with %s, naming the line, and writes nothing', async (_, text, message) => {
    const file = path.join(dir, 'bad.jsonl');
    await writeFile(file, text);
    const error = await importTranscript(ctx.tdb.database.db, file, { tenantId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TranscriptError);
    expect((error as Error).message).toMatch(message);
    expect(await countRows('bad')).toEqual({ live: 0, archived: 0, ledger: 0 });
  });

  it('refuses bytes that are not UTF-8', async () => {
    const file = path.join(dir, 'latin1.jsonl');
    const good = Buffer.from('{"seq":0,"role":"user","kind":"message","content":"ok"}\n');
    const bad = Buffer.from([0x7b, 0x22, 0x73, 0xe9, 0x71, 0x22, 0x7d]);
    await writeFile(file, Buffer.concat([good, bad]));
    await expect(importTranscript(ctx.tdb.database.db, file, { tenantId })).rejects.toThrow(
      /latin1\.jsonl:2: not valid UTF-8/,
    );
  });
});

describe('apply', () => {
  async function imported(sessionId: string) {
    const file = path.join(CORPUS_DIR, 'sweagent__ctf-web-i_got_id.jsonl');
    await importTranscript(ctx.tdb.database.db, file, { tenantId, sessionId });
    const snapshot = await ctx.reads.loadSnapshot(tenantId, sessionId);
    const plan = planCompaction(snapshot, snapshot.messages, { type: 'slidingWindow', maxMessages: 10 });
    if (plan.action !== 'compact') throw new Error('expected a compaction');
    const entry = entryOf(
      { tenantId, sessionId, idempotencyKey: `test:${sessionId}`, eventId: null, trigger: 'manual' },
      'slidingWindow',
    );
    const input = changeOf(entry, plan, snapshot.compactionVersion, null, null);
    return { snapshot, plan, input };
  }

  it('moves exactly the planned messages to the archive and records the ledger row', async () => {
    const { snapshot, plan, input } = await imported('apply-ok');
    const result = await ctx.writes.apply(input);
    expect(result.status).toBe('applied');
    expect(result.row).toMatchObject({
      status: 'applied',
      messagesBefore: snapshot.messages.length,
      messagesAfter: snapshot.messages.length - plan.leavingSeqs.length,
      messagesArchived: plan.leavingSeqs.length,
      cutoffSeq: plan.cutoffSeq,
    });
    const archived = await ctx.tdb.database.sql<{ seq: number }[]>`
      select seq::int from archived_messages where compaction_id = ${result.row.id} order by seq`;
    expect(archived.map((r) => r.seq)).toEqual(plan.leavingSeqs);
    expect(violations(await audit(ctx.tdb.database.db, tenantId, 'apply-ok'))).toEqual([]);
    // The same key again: nothing more happens.
    const again = await ctx.writes.apply({ ...input, expectedVersion: snapshot.compactionVersion + 1 });
    expect(again).toMatchObject({ status: 'duplicate', row: { id: result.row.id } });
    expect(await countRows('apply-ok')).toMatchObject({ archived: plan.leavingSeqs.length, ledger: 1 });
  });

  it('leaves the pinned messages inside the leaving range, and any seq the plan keeps there', async () => {
    const sessionId = 'apply-gaps';
    const file = path.join(CORPUS_DIR, 'sweagent__ctf-web-i_got_id.jsonl');
    await importTranscript(ctx.tdb.database.db, file, { tenantId, sessionId });
    await ctx.tdb.database.sql`
      update messages set pinned = true
      where tenant_id = ${tenantId} and session_id = ${sessionId} and seq in (3, 4, 9)`;
    const snapshot = await ctx.reads.loadSnapshot(tenantId, sessionId);
    const plan = planCompaction(snapshot, snapshot.messages, { type: 'slidingWindow', maxMessages: 10 });
    if (plan.action !== 'compact') throw new Error('expected a compaction');
    expect(plan.leavingSeqs).not.toContain(4);
    // A seq inside the range that this change keeps although it could leave.
    const kept = plan.leavingSeqs[Math.floor(plan.leavingSeqs.length / 2)] as number;
    const leaving = plan.leavingSeqs.filter((seq) => seq !== kept);
    const entry = entryOf(
      { tenantId, sessionId, idempotencyKey: `test:${sessionId}`, eventId: null, trigger: 'manual' },
      'slidingWindow',
    );
    const input = changeOf(entry, { ...plan, leavingSeqs: leaving }, snapshot.compactionVersion, null, null);
    const result = await ctx.writes.apply(input);
    expect(result.row).toMatchObject({ status: 'applied', messagesArchived: leaving.length });
    const archived = await ctx.tdb.database.sql<{ seq: number }[]>`
      select seq::int from archived_messages where compaction_id = ${result.row.id} order by seq`;
    expect(archived.map((r) => r.seq)).toEqual(leaving);
    const live = await ctx.tdb.database.sql<{ seq: number }[]>`
      select seq::int from messages where tenant_id = ${tenantId} and session_id = ${sessionId}
        and seq in (3, 4, 9, ${kept}) order by seq`;
    expect(live.map((r) => r.seq)).toEqual([3, 4, 9, kept].sort((a, b) => a - b));
  });

  it('rejects a plan made at an older compaction version and changes nothing', async () => {
    const { input } = await imported('apply-fenced');
    await ctx.tdb.database.sql`
      update sessions set compaction_version = compaction_version + 1 where tenant_id = ${tenantId} and id = 'apply-fenced'`;
    const before = await countRows('apply-fenced');
    await expect(ctx.writes.apply(input)).rejects.toThrow(FenceError);
    expect(await countRows('apply-fenced')).toEqual(before);
  });

  it('writes a summary in place of the leaving messages, and rolls it back with them when one was pinned since', async () => {
    const sessionId = 'apply-summary';
    await importTranscript(ctx.tdb.database.db, path.join(CORPUS_DIR, 'sweagent__ctf-web-i_got_id.jsonl'), {
      tenantId,
      sessionId,
    });
    const snapshot = await ctx.reads.loadSnapshot(tenantId, sessionId);
    const plan = planCompaction(snapshot, snapshot.messages, {
      type: 'summarize',
      keepRecent: 10,
      maxSummaryTokens: 2_000,
    });
    if (plan.action !== 'compact') throw new Error('expected a compaction');
    const entry = entryOf(
      { tenantId, sessionId, idempotencyKey: `test:${sessionId}`, eventId: null, trigger: 'manual' },
      'summarize',
    );
    const checkpoint = { ...emptyCheckpoint(), goal: 'find the flag' };
    const summary = summaryToWrite(checkpoint, plan, 'test', noUsage());
    const input = changeOf(entry, plan, snapshot.compactionVersion, summary, null);
    // The summary goes in at the last leaving seq: pinned since the snapshot, that message stays,
    // so the archive moves one message fewer than planned and the summary's seq is still taken.
    const last = plan.leavingSeqs[plan.leavingSeqs.length - 1] as number;
    await ctx.tdb.database.sql`
      update messages set pinned = true where tenant_id = ${tenantId} and session_id = ${sessionId} and seq = ${last}`;
    const before = await countRows(sessionId);
    if (!before) throw new Error('no counts');
    await expect(ctx.writes.apply(input)).rejects.toThrow(/snapshot is stale/);
    expect(await countRows(sessionId)).toEqual(before);

    await ctx.tdb.database.sql`
      update messages set pinned = false where tenant_id = ${tenantId} and session_id = ${sessionId} and seq = ${last}`;
    const result = await ctx.writes.apply(input);
    expect(result.row).toMatchObject({ status: 'applied', messagesArchived: plan.leavingSeqs.length });
    const [written] = await ctx.tdb.database.sql<{ kind: string; content: string }[]>`
      select kind, content from messages where tenant_id = ${tenantId} and session_id = ${sessionId} and seq = ${last}`;
    expect(written).toMatchObject({ kind: 'summary', content: summary.text });
    expect(await countRows(sessionId)).toEqual({
      live: before.live - plan.leavingSeqs.length + 1,
      archived: plan.leavingSeqs.length,
      ledger: 1,
    });
    expect(violations(await audit(ctx.tdb.database.db, tenantId, sessionId))).toEqual([]);
  });

  it('rolls back when a planned message was pinned since the snapshot', async () => {
    const { plan, input } = await imported('apply-pinned');
    await ctx.tdb.database.sql`
      update messages set pinned = true
      where tenant_id = ${tenantId} and session_id = 'apply-pinned' and seq = ${plan.leavingSeqs[0] as number}`;
    const before = await countRows('apply-pinned');
    await expect(ctx.writes.apply(input)).rejects.toThrow(/snapshot is stale/);
    expect(await countRows('apply-pinned')).toEqual(before);
  });
});
