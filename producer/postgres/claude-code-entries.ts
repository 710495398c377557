/**
 * The Claude Agent SDK session store's lines (`claude_code_entries`, see schema.ts): appended in
 * order, a line with a uuid once, read back in order. Every statement names the tenant. The
 * mapping of lines to messages is producer/frameworks/claude-agent-sdk/'s; this module only stores.
 */

import type { Db } from './db.ts';
import { and, asc, eq, gt, isNotNull, max, sql } from './orm.ts';
import { claudeCodeEntries } from './schema.ts';

/** Where a transcript is: the SDK's key, under one tenant. `subpath` '' is the main transcript. */
export interface EntryKey {
  tenantId: string;
  sessionId: string;
  subpath: string;
}

/** A stored line. */
export interface StoredEntry {
  seq: number;
  uuid: string | null;
  entry: Record<string, unknown>;
  origin: 'sdk' | 'compactor';
  compactionVersion: number | null;
  messageSeq: number | null;
}

/** A line to store, as {@link appendEntries} takes it. */
export interface NewEntry {
  uuid: string | null;
  entry: Record<string, unknown>;
}

/**
 * Appends lines after the transcript's last, in order, under one lock of the transcript (a
 * transaction-scoped advisory lock, so two processes appending to one session interleave whole
 * batches). A line whose uuid the transcript already holds is left out (a retried batch, or a line
 * replayed by `importSessionToStore`); lines without a uuid are always appended, as the SDK's
 * contract asks.
 * @returns the lines written, with their seqs (not the ones left out).
 */
export async function appendEntries(
  db: Db,
  key: EntryKey,
  projectKey: string,
  entries: NewEntry[],
  origin: { origin: 'sdk' } | { origin: 'compactor'; compactionVersion: number } = { origin: 'sdk' },
): Promise<StoredEntry[]> {
  if (entries.length === 0) return [];
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtextextended(${JSON.stringify(['claude_code_entries', key.tenantId, key.sessionId, key.subpath])}, 0))`,
    );
    const uuids = entries.flatMap((e) => (e.uuid === null ? [] : [e.uuid]));
    const taken = new Set<string>();
    if (uuids.length > 0) {
      const rows = await tx
        .select({ uuid: claudeCodeEntries.uuid })
        .from(claudeCodeEntries)
        .where(
          and(
            where(key),
            isNotNull(claudeCodeEntries.uuid),
            sql`${claudeCodeEntries.uuid} = any(${`{${uuids.map(quote).join(',')}}`}::text[])`,
          ),
        );
      for (const r of rows) if (r.uuid !== null) taken.add(r.uuid);
    }
    const [last] = await tx
      .select({ seq: max(claudeCodeEntries.seq) })
      .from(claudeCodeEntries)
      .where(where(key));
    let seq = last?.seq === null || last?.seq === undefined ? 0 : Number(last.seq) + 1;
    const rows: Array<typeof claudeCodeEntries.$inferInsert> = [];
    for (const e of entries) {
      if (e.uuid !== null) {
        if (taken.has(e.uuid)) continue;
        taken.add(e.uuid);
      }
      rows.push({
        tenantId: key.tenantId,
        sessionId: key.sessionId,
        subpath: key.subpath,
        seq: seq++,
        projectKey,
        uuid: e.uuid,
        entry: e.entry,
        origin: origin.origin,
        compactionVersion: origin.origin === 'compactor' ? origin.compactionVersion : null,
      });
    }
    if (rows.length > 0) await tx.insert(claudeCodeEntries).values(rows);
    return rows.map((r) => ({
      seq: r.seq,
      uuid: r.uuid ?? null,
      entry: r.entry as Record<string, unknown>,
      origin: origin.origin,
      compactionVersion: r.compactionVersion ?? null,
      messageSeq: null,
    }));
  });
}

/** Every line of a transcript, in order; [] when it has none. */
export async function readEntries(db: Db, key: EntryKey, afterSeq = -1): Promise<StoredEntry[]> {
  const rows = await db
    .select()
    .from(claudeCodeEntries)
    .where(and(where(key), gt(claudeCodeEntries.seq, afterSeq)))
    .orderBy(asc(claudeCodeEntries.seq));
  return rows.map((r) => ({
    seq: Number(r.seq),
    uuid: r.uuid,
    entry: r.entry as Record<string, unknown>,
    origin: r.origin,
    compactionVersion: r.compactionVersion,
    messageSeq: r.messageSeq === null ? null : Number(r.messageSeq),
  }));
}

/**
 * Where the messages of a main transcript stand: the highest seq of a line that became (part of) a
 * message (-1 when none), the newest compaction version the store served the session at (0 when
 * never), and the project key it was first appended under (null for a session with no line).
 */
export async function transcriptState(
  db: Db,
  key: EntryKey,
): Promise<{ syncedThrough: number; servedVersion: number; projectKey: string | null }> {
  const [row] = await db
    .select({
      synced: sql<
        string | null
      >`max(${claudeCodeEntries.seq}) filter (where ${claudeCodeEntries.messageSeq} is not null)`,
      served: max(claudeCodeEntries.compactionVersion),
      projectKey: sql<string | null>`min(${claudeCodeEntries.projectKey})`,
    })
    .from(claudeCodeEntries)
    .where(where(key));
  return {
    syncedThrough: row?.synced === null || row?.synced === undefined ? -1 : Number(row.synced),
    servedVersion: row?.served ?? 0,
    projectKey: row?.projectKey ?? null,
  };
}

/** Records which compactor message each of `seqs` became part of. */
export async function markMessages(
  db: Db,
  key: EntryKey,
  marks: Array<{ seqs: number[]; messageSeq: number }>,
): Promise<void> {
  for (const mark of marks) {
    if (mark.seqs.length === 0) continue;
    await db
      .update(claudeCodeEntries)
      .set({ messageSeq: mark.messageSeq })
      .where(and(where(key), sql`${claudeCodeEntries.seq} = any(${`{${mark.seqs.join(',')}}`}::bigint[])`));
  }
}

/**
 * The sessions of a project with their last write, ms since the epoch (floored), main transcripts
 * only.
 */
export async function listEntrySessions(
  db: Db,
  tenantId: string,
  projectKey: string,
): Promise<Array<{ sessionId: string; mtime: number }>> {
  const rows = await db
    .select({
      sessionId: claudeCodeEntries.sessionId,
      mtime: sql<string>`floor(extract(epoch from max(${claudeCodeEntries.createdAt})) * 1000)::bigint`,
    })
    .from(claudeCodeEntries)
    .where(
      and(
        eq(claudeCodeEntries.tenantId, tenantId),
        eq(claudeCodeEntries.projectKey, projectKey),
        eq(claudeCodeEntries.subpath, ''),
      ),
    )
    .groupBy(claudeCodeEntries.sessionId);
  return rows.map((r) => ({ sessionId: r.sessionId, mtime: Number(r.mtime) }));
}

/** The subpaths a session has lines under, besides its main transcript. */
export async function listEntrySubpaths(db: Db, tenantId: string, sessionId: string): Promise<string[]> {
  const rows = await db
    .selectDistinct({ subpath: claudeCodeEntries.subpath })
    .from(claudeCodeEntries)
    .where(
      and(
        eq(claudeCodeEntries.tenantId, tenantId),
        eq(claudeCodeEntries.sessionId, sessionId),
        sql`${claudeCodeEntries.subpath} <> ''`,
      ),
    )
    .orderBy(asc(claudeCodeEntries.subpath));
  return rows.map((r) => r.subpath);
}

/**
 * Deletes a transcript's lines; for the main transcript (`subpath` ''), the session's subagent
 * transcripts too. @returns the lines deleted.
 */
export async function deleteEntries(db: Db, key: EntryKey): Promise<number> {
  const rows = await db
    .delete(claudeCodeEntries)
    .where(
      and(
        eq(claudeCodeEntries.tenantId, key.tenantId),
        eq(claudeCodeEntries.sessionId, key.sessionId),
        key.subpath === '' ? undefined : eq(claudeCodeEntries.subpath, key.subpath),
      ),
    )
    .returning({ seq: claudeCodeEntries.seq });
  return rows.length;
}

function where(key: EntryKey) {
  return and(
    eq(claudeCodeEntries.tenantId, key.tenantId),
    eq(claudeCodeEntries.sessionId, key.sessionId),
    eq(claudeCodeEntries.subpath, key.subpath),
  );
}

/** An element of a text[] literal, quoted so commas, quotes and backslashes stay inside it. */
function quote(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}
