/**
 * The one read behind a session's rendered context (shared/context/render.ts): `loadContext` reads
 * it whole for an agent's next request, and the `anthropic-compaction` summary reads the leaving
 * part of it to send as its compaction request, so both see the same conversation.
 */

import type { RenderContextInput } from '../../shared/context/render.ts';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import type { Kind, Role } from '../../shared/contract/message.ts';
import type { SessionFormat } from '../../shared/contract/session-format.ts';
import { type Checkpoint, checkpointSchema } from '../../shared/summary/checkpoint.ts';
import { type Db, executePrepared } from './db.ts';
import { ledgerTenant } from './ledger-tenant.ts';
import { sql } from './orm.ts';

/** One line of the read: the session's facts (first, with no seq) or one live message. */
interface ContextLine {
  seq: number | null;
  role: Role | null;
  kind: Kind | null;
  content: StoredContent | null;
  pinned: boolean | null;
  live_id: string | null;
  checkpoint: unknown;
  compacted_through_seq: number | null;
  thinking_since_version: number | null;
  compaction_thinking: { preserved: boolean; note: string | null } | null;
  archived_system: string[] | null;
  version: number | null;
  context_version: number | null;
  tools: unknown;
  format: SessionFormat | null;
  bytes: number | null;
  tokens: number | null;
}

/** What the read found: the renderer's input, and the facts around it. */
export interface ContextRead {
  /** The live session read (the one asked for, or the child it continued in). */
  liveId: string;
  /** The live session's compaction version. */
  version: number;
  /** The live session's format: how its rows are rendered. */
  format: SessionFormat;
  /** The renderer's input (rows, checkpoint, the thinking facts, archived system text). */
  render: Omit<RenderContextInput, 'thinking' | 'compactionBlock'>;
  /** The tools the session declared (Messages API tool definitions), or null. */
  tools: Array<Record<string, unknown>> | null;
  /** The stored content of the live session's messages, bytes (what `maxBytes` is checked against). */
  bytes: number;
  /** The live session's estimated tokens (its counter; what `maxTokens` is checked against). */
  tokens: number;
  /**
   * The cap of the read that the context is over, or null: when set, no message was read
   * (`render.rows` is empty).
   */
  overLimit: 'maxBytes' | 'maxTokens' | null;
}

/** Caps of a read: past either, the facts are read but no message. */
export interface ContextCaps {
  /** Bytes of the live messages' stored content (measured from the stored sizes, not the content). */
  maxBytes?: number;
  /** Estimated tokens of the live session (its counter). */
  maxTokens?: number;
}

/**
 * Reads a session's context: the live session of its lineage, its facts and its live rows (all of
 * them, or those of `seqs` and the system rows below them). One statement, one snapshot.
 * @param caps when the live session is larger than one of them, no message is read and the
 *   result says `overLimit`; absent: no limit.
 * @returns null when the tenant has no such session.
 */
export async function readContext(
  db: Db,
  tenantId: string,
  sessionId: string,
  seqs?: readonly number[],
  caps: ContextCaps = {},
): Promise<ContextRead | null> {
  const lines = await executePrepared<ContextLine>(db, contextQuery(tenantId, sessionId, seqs ?? null, caps));
  const [facts, ...messages] = lines;
  const liveId = facts?.live_id ?? null;
  if (facts === undefined || liveId === null) return null;
  const version = facts.version ?? 0;
  const bytes = facts.bytes ?? 0;
  const tokens = facts.tokens ?? 0;
  return {
    liveId,
    version,
    format: facts.format ?? 'anthropic',
    bytes,
    tokens,
    overLimit:
      caps.maxBytes !== undefined && bytes > caps.maxBytes
        ? 'maxBytes'
        : caps.maxTokens !== undefined && tokens > caps.maxTokens
          ? 'maxTokens'
          : null,
    tools: Array.isArray(facts.tools) ? (facts.tools as Array<Record<string, unknown>>) : null,
    render: {
      rows: messages.map((m) => ({
        seq: m.seq as number,
        role: m.role as Role,
        kind: m.kind as Kind,
        content: m.content as StoredContent,
        pinned: m.pinned === true,
        contextVersion: m.context_version,
      })),
      checkpoint: parseCheckpoint(facts.checkpoint),
      compactedThroughSeq: facts.compacted_through_seq ?? null,
      thinkingSinceVersion: facts.thinking_since_version ?? version,
      compactionThinking: facts.compaction_thinking ?? null,
      archivedSystem: facts.archived_system ?? [],
      version,
    },
  };
}

function parseCheckpoint(value: unknown): Checkpoint | null {
  if (value === null || value === undefined) return null;
  const parsed = checkpointSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Most recent compactions read to find the run of thinking-preserving ones at the head of the history. */
const PRESERVED_RUN_LIMIT = 64;

/**
 * The facts line (seq null) then the live rows by seq. `down` follows children to the live
 * session; `up` walks from it through its parents. Archived system messages count only for
 * applied compactions; an ancestor's system rows count unless the live session still holds them.
 * `compacted_through_seq` counts only compactions after which earlier thinking is no longer valid;
 * `thinking_since_version` is the live version less the run of thinking-preserving compactions
 * that produced the newest versions (a restore, which writes no version of its own, ends the run).
 */
function contextQuery(
  tenantId: string,
  sessionId: string,
  seqs: readonly number[] | null,
  caps: ContextCaps,
) {
  const maxBytes = caps.maxBytes ?? null;
  const maxTokens = caps.maxTokens ?? null;
  const only = seqs === null ? null : `{${seqs.join(',')}}`;
  const lowest = seqs === null || seqs.length === 0 ? null : Math.min(...seqs);
  // The ledger's lookups name the tenant as any tenant (./ledger-tenant.ts); the history's, by the parameter.
  const ledger = ledgerTenant(tenantId);
  return sql`
    with recursive down(id, child, depth) as (
      select id, child_session_id, 0 from sessions where tenant_id = ${tenantId} and id = ${sessionId}
      union all
      select s.id, s.child_session_id, d.depth + 1
      from sessions s join down d on s.tenant_id = ${tenantId} and s.id = d.child
      where d.depth < 1000
    ), live as (
      select id from down order by depth desc limit 1
    ), up(id, parent, depth) as (
      select s.id, s.parent_session_id, 0
      from sessions s join live on s.tenant_id = ${tenantId} and s.id = live.id
      union all
      select s.id, s.parent_session_id, u.depth + 1
      from sessions s join up u on s.tenant_id = ${tenantId} and s.id = u.parent
      where u.depth < 1000
    ), live_session as (
      select compaction_version, checkpoint, tools, token_count, format from sessions
      where tenant_id = ${tenantId} and id = (select id from live)
    ), recent as (
      select c.thinking_preserved, c.compaction_version,
        row_number() over (order by c.compaction_version desc) as rn
      from compactions c
      where c.tenant_id = ${ledger} and c.session_id = (select id from live)
        and c.status = 'applied' and c.compaction_version is not null
      order by c.compaction_version desc
      limit ${PRESERVED_RUN_LIMIT}
    ), preserved_run as (
      select coalesce(
        min(rn) filter (where not (thinking_preserved
          and compaction_version = (select compaction_version from live_session) - rn + 1)),
        count(*) + 1) - 1 as run
      from recent
    ), system_seen as (
      select a.seq, a.content
      from archived_messages a
      join compactions c on c.tenant_id = a.tenant_id and c.id = a.compaction_id and c.status = 'applied'
      where a.tenant_id = ${tenantId} and a.session_id in (select id from up) and a.role = 'system'
      union all
      select m.seq, m.content
      from messages m
      where m.tenant_id = ${tenantId} and m.session_id in (select id from up where depth > 0)
        and m.role = 'system'
    ), restated as (
      select distinct on (seq) seq, content
      from system_seen s
      where not exists (
        select 1 from messages l
        where l.tenant_id = ${tenantId} and l.session_id = (select id from live)
          and l.seq = s.seq and l.role = 'system'
      )
      order by seq
    ), size as (
      -- octet_length of a json value reads its stored length, not its content.
      select coalesce(sum(octet_length(m.content_blocks::text)), 0)::float8 as bytes
      from messages m
      where m.tenant_id = ${tenantId} and m.session_id = (select id from live)
    )
    select * from (
      select null::float8 as seq, null::text as role, null::text as kind, null::json as content,
        null::boolean as pinned,
        (select id from live) as live_id,
        (select checkpoint from live_session) as checkpoint,
        (select max(c.last_seq)::float8 from compactions c
          where c.tenant_id = ${ledger} and c.session_id in (select id from up)
            and c.status = 'applied' and not c.thinking_preserved) as compacted_through_seq,
        ((select compaction_version from live_session) - (select run from preserved_run))::integer
          as thinking_since_version,
        (select json_build_object('preserved', c.thinking_preserved, 'note', c.thinking_note)
          from compactions c
          where c.tenant_id = ${ledger} and c.session_id = (select id from live)
            and c.status = 'applied' and c.summarizer = 'anthropic-compaction'
          order by c.compaction_version desc limit 1) as compaction_thinking,
        (select coalesce(json_agg(content order by seq), '[]'::json) from restated) as archived_system,
        (select compaction_version from live_session) as version,
        null::integer as context_version,
        (select tools from live_session) as tools,
        (select format from live_session) as format,
        (select bytes from size) as bytes,
        (select token_count::float8 from live_session) as tokens
      union all
      select m.seq::float8, m.role, m.kind, m.content_blocks, m.pinned,
        null::text, null::jsonb, null::float8, null::integer, null::json, null::json, null::integer,
        m.context_version, null::json, null::text, null::float8, null::float8
      from messages m
      where m.tenant_id = ${tenantId} and m.session_id = (select id from live)
        and (${maxBytes}::float8 is null or (select bytes from size) <= ${maxBytes}::float8)
        and (${maxTokens}::float8 is null
          or (select token_count from live_session) <= ${maxTokens}::float8)
        and (${only}::bigint[] is null or m.seq = any(${only}::bigint[])
          or (m.role = 'system' and m.seq < ${lowest}::bigint))
    ) lines
    order by seq asc nulls first`;
}
