/**
 * "Context out": what an agent service passes to `client.messages.create` as its next request,
 * read from a session's live history and rendered by shared/context/render.ts.
 *
 * ```ts
 * const context = await loadContext(db, { tenantId: 'acme', sessionId: 'session-42' });
 * const reply = await client.messages.create({
 *   model, max_tokens: 4096, system: context.system, messages: [...context.messages, next],
 * });
 * await appendMessages(db, 'acme', context.sessionId, [next, { role: 'assistant', content: reply.content }]);
 * ```
 */
import type { MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { sql } from 'drizzle-orm';
import { type ContextNotice, type ContextRow, renderContext } from '../shared/context/render.ts';
import type { StoredContent } from '../shared/contract/blocks.ts';
import { SessionNotFoundError } from '../shared/contract/errors.ts';
import type { Kind, Role } from '../shared/contract/message.ts';
import { type Db, executePrepared } from '../shared/postgres/db.ts';
import { type Checkpoint, checkpointSchema } from '../shared/summary/checkpoint.ts';

export type { ContextNotice } from '../shared/context/render.ts';

/** Which session to load, and how. */
export interface LoadContextInput {
  tenantId: string;
  /** The session, or any ancestor of it: a lineage is followed to its live session. */
  sessionId: string;
  /** `keep` (default): thinking comes back wherever its signature still holds; `strip`: none. */
  thinking?: 'keep' | 'strip';
}

/** The next request's `system` and `messages`, ready for `client.messages.create`. */
export interface LoadedContext {
  /** The SDK's `system` parameter: text blocks, or undefined when the session has no system text. */
  system: TextBlockParam[] | undefined;
  /** The SDK's `messages` parameter, as it is. */
  messages: MessageParam[];
  /** Estimated input tokens of `system` and `messages`. */
  tokens: number;
  /** The live session read (where the agent appends next): `sessionId` unless it continued in a child. */
  sessionId: string;
  /** What the caller must act on to send the request (see shared/context/render.ts). */
  notices: ContextNotice[];
  /**
   * The live session's compaction version this context was rendered at. Pass it to
   * `appendMessages(…, { contextVersion })` with the model's reply, so that a compaction that runs
   * while the model answers cannot leave the reply's thinking in a later context it would fail in.
   */
  version: number;
}

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
  archived_system: string[] | null;
  version: number | null;
  context_version: number | null;
}

/**
 * Loads a session's next request: its live history rendered by the rules of
 * shared/context/render.ts. One statement, so one round trip and one snapshot: it follows the
 * lineage to the live session (a `newSession` compaction continued it in a child), reads the
 * checkpoint, the highest `last_seq` of the applied compactions of that session and its
 * ancestors, the system messages they archived (or left in an ancestor), and the live rows.
 * Every read is scoped by tenant.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function loadContext(db: Db, input: LoadContextInput): Promise<LoadedContext> {
  const { tenantId, sessionId } = input;
  const lines = await executePrepared<ContextLine>(db, contextQuery(tenantId, sessionId));
  const [facts, ...messages] = lines;
  const liveId = facts?.live_id ?? null;
  if (liveId === null) throw new SessionNotFoundError(tenantId, sessionId);
  const rows: ContextRow[] = messages.map((m) => ({
    seq: m.seq as number,
    role: m.role as Role,
    kind: m.kind as Kind,
    content: m.content as StoredContent,
    pinned: m.pinned === true,
    contextVersion: m.context_version,
  }));
  const rendered = renderContext({
    rows,
    checkpoint: parseCheckpoint(facts?.checkpoint),
    compactedThroughSeq: facts?.compacted_through_seq ?? null,
    archivedSystem: facts?.archived_system ?? [],
    thinking: input.thinking ?? 'keep',
    version: facts?.version ?? 0,
  });
  return { ...rendered, sessionId: liveId, version: facts?.version ?? 0 };
}

function parseCheckpoint(value: unknown): Checkpoint | null {
  if (value === null || value === undefined) return null;
  const parsed = checkpointSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * The facts line (seq null) then the live rows by seq. `down` follows children to the live
 * session; `up` walks from it through its parents. Archived system messages count only for
 * applied compactions; an ancestor's system rows count unless the live session still holds them.
 */
function contextQuery(tenantId: string, sessionId: string) {
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
    ), system_seen as (
      select a.seq, a.content
      from archived_messages a
      join compactions c on c.id = a.compaction_id and c.status = 'applied'
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
    )
    select * from (
      select null::float8 as seq, null::text as role, null::text as kind, null::json as content,
        null::boolean as pinned,
        (select id from live) as live_id,
        (select checkpoint from sessions
          where tenant_id = ${tenantId} and id = (select id from live)) as checkpoint,
        (select max(c.last_seq)::float8 from compactions c
          where c.tenant_id = ${tenantId} and c.session_id in (select id from up)
            and c.status = 'applied') as compacted_through_seq,
        (select coalesce(json_agg(content order by seq), '[]'::json) from restated) as archived_system,
        (select compaction_version from sessions
          where tenant_id = ${tenantId} and id = (select id from live)) as version,
        null::integer as context_version
      union all
      select m.seq::float8, m.role, m.kind, m.content_blocks, m.pinned,
        null::text, null::jsonb, null::float8, null::json, null::integer, m.context_version
      from messages m
      where m.tenant_id = ${tenantId} and m.session_id = (select id from live)
    ) lines
    order by seq asc nulls first`;
}
