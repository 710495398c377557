/**
 * The new-session transition (the `newSession` mode): instead of rewriting the session, the
 * compacted history — the summary and every message that stays — is written to a new child
 * session with `parent_session_id`; the original stays whole and points to its child. Runs inside
 * the apply transaction, under the parent's row lock, so messages appended meanwhile are copied
 * too (they are live and above the cutoff).
 */
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { CompactPlan } from '../../shared/planning/plan.ts';
import { executePrepared, type Tx } from '../../shared/postgres/db.ts';
import { sessions } from '../../shared/postgres/schema.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';

/** What one apply did to the session, for its counters and the ledger row. */
export interface ApplyEffect {
  messagesAfter: number;
  tokensAfter: number;
  archived: number;
  childSessionId: string | null;
  /** The compacted session's row afterwards: its counters, and its new checkpoint (null: unchanged). */
  session: { messageCount: number; tokenCount: number; checkpoint: Checkpoint | null };
}

/** The parts of an apply the transition needs. */
export interface TransitionInput {
  tenantId: string;
  sessionId: string;
  plan: CompactPlan;
  summary: { checkpoint: Checkpoint; text: string; tokenCount: number } | null;
}

/** The parent row under lock. */
export interface ParentSession {
  messageCount: number;
  tokenCount: number;
  lastSeq: number;
  agentId: string | null;
  contextWindow: number | null;
  checkpoint: unknown;
}

/**
 * Writes a compaction's summary message at `seq` (the last leaving seq), as role `user`, kind
 * `summary`. Used in place and in a child session alike.
 */
export async function insertSummaryMessage(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  seq: number,
  summary: { text: string; tokenCount: number },
): Promise<void> {
  // A fixed text, prepared once per connection: one round trip in the apply transaction.
  await executePrepared(tx, {
    sql: `insert into messages (tenant_id, session_id, seq, role, kind, content, token_count, pinned)
      values ($1::text, $2::text, $3::bigint, 'user', 'summary', $4::text, $5::integer, false)`,
    params: [tenantId, sessionId, seq, summary.text, summary.tokenCount],
  });
}

/**
 * The child's id: `<parent>.v<version>`, or for a long parent id a clipped prefix with a hash, so
 * the id stays within 200 characters and unique per parent and version.
 */
export function childSessionIdOf(parentId: string, version: number): string {
  const suffix = `.v${version}`;
  if (parentId.length + suffix.length <= 200) return `${parentId}${suffix}`;
  const hash = createHash('sha256').update(parentId).digest('hex').slice(0, 12);
  return `${parentId.slice(0, 200 - suffix.length - hash.length - 1)}~${hash}${suffix}`;
}

/** Writes the child session and its messages; the parent's messages are not touched. */
export async function continueInChild(
  tx: Tx,
  input: TransitionInput,
  parent: ParentSession,
  version: number,
): Promise<ApplyEffect> {
  const childId = childSessionIdOf(input.sessionId, version);
  const { plan, summary } = input;
  await tx.insert(sessions).values({
    id: childId,
    tenantId: input.tenantId,
    agentId: parent.agentId,
    contextWindow: parent.contextWindow,
    parentSessionId: input.sessionId,
    lastSeq: parent.lastSeq,
    checkpoint: summary ? summary.checkpoint : parent.checkpoint,
  });
  // Every live message of the parent that does not leave, with its seq, set-based.
  const [copied] = await tx.execute<{ count: number; tokens: string }>(sql`
    with copied as (
      insert into messages (tenant_id, session_id, seq, role, kind, content, tool_call_id, tool_name, token_count,
        pinned, created_at)
      select tenant_id, ${childId}, seq, role, kind, content, tool_call_id, tool_name, token_count, pinned, created_at
      from messages
      where tenant_id = ${input.tenantId} and session_id = ${input.sessionId}
        and not (seq = any(${`{${plan.leavingSeqs.join(',')}}`}::bigint[]))
      returning token_count
    )
    select count(*)::int as count, coalesce(sum(token_count), 0)::bigint as tokens from copied`);
  if (summary && plan.summarySeq !== null) {
    await insertSummaryMessage(tx, input.tenantId, childId, plan.summarySeq, summary);
  }
  const messagesAfter = Number(copied?.count ?? 0) + (summary ? 1 : 0);
  const tokensAfter = Number(copied?.tokens ?? 0) + (summary?.tokenCount ?? 0);
  await tx
    .update(sessions)
    .set({ messageCount: messagesAfter, tokenCount: tokensAfter })
    .where(sql`${sessions.tenantId} = ${input.tenantId} and ${sessions.id} = ${childId}`);
  return {
    messagesAfter,
    tokensAfter,
    archived: 0,
    childSessionId: childId,
    // The parent stays whole: its counters and checkpoint do not change.
    session: { messageCount: parent.messageCount, tokenCount: parent.tokenCount, checkpoint: null },
  };
}
