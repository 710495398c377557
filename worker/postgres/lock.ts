/**
 * The session row lock (`SELECT ... FOR UPDATE`): it serialises applies, restores and appends of one
 * session. The locking statement also says whether the request's idempotency key is already in the
 * ledger and, when asked, carries the live messages' metadata, so a write under the lock starts
 * with one round trip.
 */
import { executePrepared, type Tx } from '../../producer/postgres/db.ts';
import { SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { MessageMeta } from '../../shared/contract/message.ts';
import { type SessionFormat, sessionFormatOf } from '../../shared/contract/session-format.ts';

/**
 * The live messages' metadata up to the session row's `last_seq`, as one JSON array of
 * {@link MetaTuple}s (`[]` for none). `session` names the session row in the outer query; `tenant`
 * and `sessionId` are the statement's own parameters for them (`$1::text`), not the outer row's
 * columns: a parameter lets Postgres prune `messages` to the tenant's one partition when it plans
 * (or starts) the statement, where a correlated column is known only row by row.
 */
export function metasOf(session: string, tenant: string, sessionId: string): string {
  return `coalesce((select json_agg(json_build_array(m.seq, m.role, m.kind, m.tool_call_id, m.tool_name,
      m.token_count, m.pinned, m.tool_use_ids, m.tool_result_ids, m.has_thinking) order by m.seq)
    from messages m
    where m.tenant_id = ${tenant} and m.session_id = ${sessionId} and m.seq <= ${session}.last_seq),
    '[]'::json)`;
}

/** One message's metadata as {@link metasOf} sends it, in its column order. */
export type MetaTuple = [
  number,
  MessageMeta['role'],
  MessageMeta['kind'],
  string | null,
  string | null,
  number,
  boolean,
  string[],
  string[],
  boolean,
];

/** A {@link MetaTuple} as the planner reads it. */
export function metaOf([
  seq,
  role,
  kind,
  toolCallId,
  toolName,
  tokenCount,
  pinned,
  toolUseIds,
  toolResultIds,
  thinking,
]: MetaTuple): MessageMeta {
  return { seq, role, kind, toolCallId, toolName, tokenCount, pinned, toolUseIds, toolResultIds, thinking };
}

/** The locked session row, as {@link lockSession} returns it. */
export interface LockedSession {
  /** The session's format (`sessions.format`). */
  format: SessionFormat;
  messageCount: number;
  tokenCount: number;
  compactionVersion: number;
  /** The checkpoint JSON as stored (validated where it is used). */
  checkpoint: unknown;
  lastSeq: number;
  agentId: string | null;
  contextWindow: number | null;
  /** Whether a ledger row holds the idempotency key passed to {@link lockSession}. */
  keyUsed: boolean;
  /** With `withMessages`: the live messages' metadata up to `lastSeq`, ascending; else empty. */
  messages: MessageMeta[];
}

// Fixed texts, prepared once per connection (built by hand: drizzle's builder cost more per call
// than the statement itself, `npm run bench` part 1).
const LOCK_COLUMNS = `format, message_count, token_count, compaction_version, checkpoint, last_seq, agent_id, context_window,
    exists (select 1 from compactions c where c.tenant_id = $1::text and c.idempotency_key = $3::text) as key_used`;
const LOCK_SESSION = `select ${LOCK_COLUMNS}
  from sessions where tenant_id = $1::text and id = $2::text for update`;
const LOCK_SESSION_WITH_MESSAGES = `select ${LOCK_COLUMNS}, ${metasOf('s', '$1::text', '$2::text')} as metas
  from sessions s where s.tenant_id = $1::text and s.id = $2::text for update of s`;

/** The row the locking statements return, as postgres.js parses it (int8 as text). */
interface LockedRow {
  format: string;
  message_count: number;
  token_count: string;
  compaction_version: number;
  checkpoint: unknown;
  last_seq: string;
  agent_id: string | null;
  context_window: number | null;
  key_used: boolean;
  metas?: MetaTuple[];
}

/**
 * Locks the session row for the rest of the transaction. With `idempotencyKey`, `keyUsed` also
 * says whether a ledger row holds it (same round trip).
 * @throws {SessionNotFoundError} when the tenant has no such session.
 */
export async function lockSession(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  idempotencyKey: string | null = null,
  options: { withMessages?: boolean } = {},
): Promise<LockedSession> {
  const [row] = await executePrepared<LockedRow>(tx, {
    sql: options.withMessages ? LOCK_SESSION_WITH_MESSAGES : LOCK_SESSION,
    params: [tenantId, sessionId, idempotencyKey],
  });
  if (!row) throw new SessionNotFoundError(tenantId, sessionId);
  return {
    format: sessionFormatOf(row.format),
    messageCount: row.message_count,
    tokenCount: Number(row.token_count),
    compactionVersion: row.compaction_version,
    checkpoint: row.checkpoint,
    lastSeq: Number(row.last_seq),
    agentId: row.agent_id,
    contextWindow: row.context_window,
    keyUsed: row.key_used,
    messages: row.metas ? row.metas.map(metaOf) : [],
  };
}
