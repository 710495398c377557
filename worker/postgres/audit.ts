/**
 * Checks compactor's invariants on the database, in SQL: no message stored twice, no tool call split
 * from its result, no pinned message archived, no idempotency key applied twice, counters that match
 * the live messages, no rewritten message without its newer version. Used by the demo's "nothing
 * lost" line, by the tests and by the soak. Read-only.
 *
 * Messages rewritten in place (`clearToolResults`, `clearThinking`) are stored twice on purpose: the
 * original in the archive with `rewritten` set, the newer version live at the same seq (or archived
 * in turn by a later compaction). Such an original is an earlier version of a message counted
 * elsewhere, not a second copy of it: it is counted apart (`archivedRewrites`), left out of the
 * "stored once" and "pairs whole" checks (its newer version stands in for it there, with the same
 * tool ids), and checked instead to have that newer version (`rewritesWithoutVersion`), so a
 * message lost after it was rewritten is still caught.
 */

import type { Db } from '../../producer/postgres/db.ts';
import { sql } from '../../producer/postgres/orm.ts';

/** Invariant counts for one tenant (or one session of it). Every field but the first four must be 0. */
export interface AuditReport {
  /** Original (non-summary) messages in `messages`. */
  liveOriginals: number;
  /**
   * Original (non-summary) messages in `archived_messages` that left the live history (not the
   * originals of rewritten messages): live + archived originals = every message ever written.
   */
  archivedOriginals: number;
  /** Archived originals of messages rewritten in place, whose newer version is counted above. */
  archivedRewrites: number;
  /** Summary messages in `messages`. */
  liveSummaries: number;
  /** Seqs of original messages present more than once across live + archive (double application). */
  duplicatedSeqs: number;
  /** Live tool results whose call is archived, or archived calls whose result is live (split pairs). */
  splitToolPairs: number;
  /** Pinned messages found in the archive. */
  archivedPinned: number;
  /** Compactions with more than one summary message written. */
  compactionsWithTwoSummaries: number;
  /** Idempotency keys with more than one applied ledger row. */
  keysAppliedTwice: number;
  /** Sessions whose counters disagree with their live messages. */
  countersOff: number;
  /** Archived originals of rewritten messages with no newer version, live or archived later. */
  rewritesWithoutVersion: number;
}

/**
 * Audits `tenantId`, optionally one session.
 * Original messages are those of kind ≠ summary: with seq reuse by summaries, a seq may appear
 * once as an original and again as a summary, but an original seq must appear exactly once, not
 * counting the earlier versions of rewritten messages (see the module's comment).
 */
export async function audit(db: Db, tenantId: string, sessionId?: string): Promise<AuditReport> {
  const session = sessionId === undefined ? sql`true` : sql`session_id = ${sessionId}`;
  const sessionOfSessions = sessionId === undefined ? sql`true` : sql`s.id = ${sessionId}`;
  const [row] = await db.execute<Record<keyof AuditReport, number>>(sql`
    with live as (select * from messages where tenant_id = ${tenantId} and ${session}),
    archived as (select * from archived_messages where tenant_id = ${tenantId} and ${session}),
    arch as (select * from archived where not rewritten),
    rewrites as (select * from archived where rewritten),
    originals as (
      select session_id, seq from live where kind <> 'summary'
      union all
      select session_id, seq from arch where kind <> 'summary'
    )
    select
      (select count(*) from live where kind <> 'summary')::int as "liveOriginals",
      (select count(*) from arch where kind <> 'summary')::int as "archivedOriginals",
      (select count(*) from rewrites)::int as "archivedRewrites",
      (select count(*) from live where kind = 'summary')::int as "liveSummaries",
      (select count(*) from (select 1 from originals group by session_id, seq having count(*) > 1) d)::int
        as "duplicatedSeqs",
      (select count(*) from live r join arch c
         on c.session_id = r.session_id and c.tool_use_ids && r.tool_result_ids)::int
      + (select count(*) from arch r join live c
         on c.session_id = r.session_id and c.tool_use_ids && r.tool_result_ids)::int as "splitToolPairs",
      (select count(*) from arch where pinned)::int as "archivedPinned",
      (select count(*) from (
         select compaction_id from arch where kind = 'summary' group by compaction_id having count(*) > 1
       ) d)::int as "compactionsWithTwoSummaries",
      (select count(*) from (
         select idempotency_key from compactions
         where tenant_id = ${tenantId} and ${session} and status in ('applied', 'restored')
           and idempotency_key is not null
         group by idempotency_key having count(*) > 1
       ) d)::int as "keysAppliedTwice",
      (select count(*) from sessions s
         cross join lateral (
           select count(*)::int as n, coalesce(sum(token_count), 0)::bigint as tokens
           from messages m where m.tenant_id = s.tenant_id and m.session_id = s.id) actual
         where s.tenant_id = ${tenantId} and ${sessionOfSessions}
           and (s.message_count <> actual.n or s.token_count <> actual.tokens))::int as "countersOff",
      (select count(*) from rewrites w
         where not exists (select 1 from live l
                           where l.session_id = w.session_id and l.seq = w.seq and l.kind <> 'summary')
           and not exists (select 1 from archived b
                           where b.session_id = w.session_id and b.seq = w.seq and b.kind <> 'summary'
                             and b.compaction_id <> w.compaction_id))::int as "rewritesWithoutVersion"
  `);
  if (!row) throw new Error('audit: no result');
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])) as unknown as AuditReport;
}

/** The invariant violations of a report, as readable lines; empty when all hold. */
export function violations(report: AuditReport): string[] {
  const out: string[] = [];
  if (report.duplicatedSeqs) out.push(`${report.duplicatedSeqs} message seq(s) stored twice`);
  if (report.splitToolPairs) out.push(`${report.splitToolPairs} tool call/result pair(s) split`);
  if (report.archivedPinned) out.push(`${report.archivedPinned} pinned message(s) archived`);
  if (report.compactionsWithTwoSummaries)
    out.push(`${report.compactionsWithTwoSummaries} compaction(s) wrote two summaries`);
  if (report.keysAppliedTwice) out.push(`${report.keysAppliedTwice} idempotency key(s) applied twice`);
  if (report.countersOff) out.push(`${report.countersOff} session(s) with counters off`);
  if (report.rewritesWithoutVersion)
    out.push(`${report.rewritesWithoutVersion} rewritten message(s) whose newer version is gone`);
  return out;
}
