/**
 * Recall's two reads of `archived_messages`: a full-text search over what compactions archived in a
 * session (or its whole lineage), and a read of one session's archived originals by seq. Both name
 * the tenant in every predicate (one partition), leave out the summaries compactor wrote, and take
 * the original of a seq the archive holds more than once (a message archived when it was cleared,
 * and its cleared version archived later by a summary): the one archived first.
 *
 * Why PostgreSQL full-text search and not vectors: what an agent looks for after a compaction is
 * what summaries lose, file paths, commands, identifiers, error texts, which it names exactly; a
 * `simple` text search finds them by their words with an index every PostgreSQL has, no model,
 * no extension and no embedding cost per archived message.
 */

import type { RecallReadQuery, RecallSearchQuery } from '../../shared/recall/schemas.ts';
import { anchorPattern, SNIPPET_WINDOW_CHARS } from '../../shared/recall/snippet.ts';
import { type Db, executePrepared } from './db.ts';
import { sql } from './orm.ts';
import { ARCHIVE_SEARCH_CHARS, archiveSearchVector } from './schema.ts';

/** One hit as the search reads it. */
export interface SearchRow {
  session_id: string;
  seq: number;
  role: string;
  kind: 'message' | 'tool_call' | 'tool_result';
  compaction_id: string;
  archived_at: Date;
  score: number;
  /**
   * The text around where the query matched (the query as written, else its longest word, else the
   * start): {@link SNIPPET_WINDOW_CHARS} characters each side, for `recallSnippet` to mark.
   */
  around: string;
  /** The message's text goes on before `around`. */
  cut_before: boolean;
  /** The message's text goes on after `around`. */
  cut_after: boolean;
}

/** One archived original as the read finds it. */
export interface ReadRow {
  seq: number;
  role: string;
  kind: 'message' | 'tool_call' | 'tool_result';
  compaction_id: string;
  archived_at: Date;
  bytes: number;
  content: unknown;
  /** True for the one row past the byte budget, read without its content: where the read goes on. */
  cut: boolean;
}

/** The sessions a recall may look in, `session` alone or its lineage, when the tenant has it. */
function scopeCte(tenantId: string, sessionId: string, scope: RecallSearchQuery['scope']) {
  if (scope === 'session') {
    return sql`scope(id) as (select id from sessions where tenant_id = ${tenantId} and id = ${sessionId})`;
  }
  return sql`up(id, parent, depth) as (
      select id, parent_session_id, 0 from sessions where tenant_id = ${tenantId} and id = ${sessionId}
      union all
      select s.id, s.parent_session_id, u.depth + 1
      from sessions s join up u on s.tenant_id = ${tenantId} and s.id = u.parent
      where u.depth < 1000
    ),
    down(id, child, depth) as (
      select id, child_session_id, 0 from sessions where tenant_id = ${tenantId} and id = ${sessionId}
      union all
      select s.id, s.child_session_id, d.depth + 1
      from sessions s join down d on s.tenant_id = ${tenantId} and s.id = d.child
      where d.depth < 1000
    ),
    scope(id) as (select id from up union select id from down)`;
}

/**
 * What a `newSession` compaction left behind, as rows `m` with their compaction `p`: the live
 * messages of a session that continued in a child, but those it copied into the child (still live
 * there). Such a compaction archives nothing (the parent stays whole), so these are the messages
 * that left the agent's context; they count as archived by that compaction, at its time. Not
 * indexed (a parent is read as it was left): parsed when searched.
 */
function leftInParent(tenantId: string) {
  return sql`(
    select m.session_id, m.seq, m.role, m.kind, m.content, m.content_blocks, p.compaction_id, p.archived_at
    from messages m
    join sessions ps on ps.tenant_id = m.tenant_id and ps.id = m.session_id and ps.child_session_id is not null
    join lateral (
      select c.id as compaction_id, c.created_at as archived_at from compactions c
      where c.tenant_id = m.tenant_id and c.session_id = ps.id and c.child_session_id = ps.child_session_id
        and c.status = 'applied'
      order by c.created_at limit 1
    ) p on true
    where m.tenant_id = ${tenantId} and m.kind <> 'summary'
      and not exists (
        select 1 from messages k
        where k.tenant_id = ${tenantId} and k.session_id = ps.child_session_id and k.seq = m.seq
      )
  )`;
}

/**
 * Matches a search ranks at most: past this many, the best-placed are ranked (those holding the
 * query's words in its order first, then the newest). Bounds the work of a query whose words every
 * message holds (a 100,000-message archive: 40 ms instead of 300).
 */
export const RANKED_MATCHES = 2_000;

/**
 * The search: the query read as plain words twice, as the index reads a message (as written, and
 * with path and identifier separators as spaces), every word required in either reading. Of the
 * matches, the {@link RANKED_MATCHES} holding the words in the query's order first, then the
 * newest, are ranked by cover density (`ts_rank_cd`: words close together rank higher), plus 1 when
 * the message holds the query exactly (case-insensitive); ties go to the newer seq. For the hits
 * returned, the text around where the query matched (`around`), which `recallSnippet`
 * (shared/recall/snippet.ts) makes the snippet of.
 * @returns the hits, best first; an empty list also when the session is not the tenant's (the caller
 *   tells the two apart with {@link sessionFormat}).
 */
export function searchArchive(db: Db, tenantId: string, sessionId: string, query: RecallSearchQuery) {
  const head = sql`left(m.content, ${sql.raw(String(ARCHIVE_SEARCH_CHARS))})`;
  const topHead = sql`left(top.content, ${sql.raw(String(ARCHIVE_SEARCH_CHARS))})`;
  const window = sql.raw(String(SNIPPET_WINDOW_CHARS));
  const anchor = sql`${anchorPattern(query.query)}::text`;
  const liveVector = archiveSearchVector(sql.raw('m.content'));
  return executePrepared<SearchRow>(
    db,
    sql`with recursive ${scopeCte(tenantId, sessionId, query.scope)},
    q(query, phrase, exact) as (
      select plainto_tsquery('simple', ${query.query})
          || plainto_tsquery('simple', translate(${query.query}, '/._-:\\', '      ')),
        phraseto_tsquery('simple', ${query.query})
          || phraseto_tsquery('simple', translate(${query.query}, '/._-:\\', '      ')),
        lower(${query.query})
    ),
    matched as (
      select u.* from (
        select a.session_id, a.seq, a.role, a.kind, a.compaction_id, a.archived_at, a.content, a.search_vector
        from archived_messages a, q
        where a.tenant_id = ${tenantId} and a.session_id in (select id from scope)
          and a.kind <> 'summary' and a.search_vector @@ q.query
        union all
        select m.session_id, m.seq, m.role, m.kind, m.compaction_id, m.archived_at, m.content, ${liveVector}
        from ${leftInParent(tenantId)} m, q
        where m.session_id in (select id from scope) and ${liveVector} @@ q.query
      ) u, q
      order by u.search_vector @@ q.phrase desc, u.seq desc
      limit ${sql.raw(String(RANKED_MATCHES))}
    ),
    scored as (
      select distinct on (m.session_id, m.seq)
        m.session_id, m.seq, m.role, m.kind, m.compaction_id, m.archived_at, m.content,
        ts_rank_cd(m.search_vector, q.query) + case when strpos(lower(${head}), q.exact) > 0 then 1 else 0 end
          as score
      from matched m, q
      order by m.session_id, m.seq, m.archived_at
    ),
    top as (select * from scored order by score desc, seq desc limit ${query.limit}),
    placed as (
      select top.*, ${topHead} as head,
        coalesce(
          nullif(strpos(lower(${topHead}), q.exact), 0),
          nullif(case when ${anchor} = '' then 0 else regexp_instr(lower(${topHead}), ${anchor}, 1, 1, 0, '', 2) end, 0),
          1
        ) as pos
      from top cross join q
    )
    select p.session_id, p.seq, p.role, p.kind, p.compaction_id, p.archived_at, p.score::float8 as score,
      substr(p.head, greatest(1, p.pos - ${window}), 2 * ${window} + length(q.exact)) as around,
      p.pos - ${window} > 1 as cut_before,
      greatest(1, p.pos - ${window}) + 2 * ${window} + length(q.exact) <= length(p.content) as cut_after
    from placed p, q
    order by p.score desc, p.seq desc`,
  );
}

/**
 * The read: the originals of `fromSeq..toSeq` in one session's archive, by seq, while their stored
 * content (its JSON text) adds up to at most `maxBytes`; the first always. One row more than that
 * is read without its content, to tell where a cut read goes on.
 */
export function readArchive(db: Db, tenantId: string, sessionId: string, range: RecallReadQuery) {
  return executePrepared<ReadRow>(
    db,
    sql`with originals as (
      select distinct on (seq) seq, role, kind, compaction_id, archived_at, bytes, live
      from (
        select seq, role, kind, compaction_id, archived_at, octet_length(content_blocks::text) as bytes,
          false as live
        from archived_messages
        where tenant_id = ${tenantId} and session_id = ${sessionId}
          and seq between ${range.fromSeq} and ${range.toSeq} and kind <> 'summary'
        union all
        select seq, role, kind, compaction_id, archived_at, octet_length(content_blocks::text), true
        from ${leftInParent(tenantId)} m
        where session_id = ${sessionId} and seq between ${range.fromSeq} and ${range.toSeq}
      ) o
      order by seq, archived_at, compaction_id
    ),
    sized as (select *, sum(bytes) over (order by seq) as running, row_number() over (order by seq) as n
      from originals),
    kept as (select * from sized where running <= ${range.maxBytes} or n = 1),
    next as (select * from sized where n = (select count(*) from kept) + 1)
    select k.seq, k.role, k.kind, k.compaction_id, k.archived_at, k.bytes::int as bytes,
      coalesce(a.content_blocks, l.content_blocks) as content, false as cut
    from kept k
    left join archived_messages a
      on not k.live and a.tenant_id = ${tenantId} and a.compaction_id = k.compaction_id and a.seq = k.seq
    left join messages l
      on k.live and l.tenant_id = ${tenantId} and l.session_id = ${sessionId} and l.seq = k.seq
    union all
    select seq, role, kind, compaction_id, archived_at, bytes::int, null, true from next
    order by seq`,
  );
}

/** The session's format when the tenant has it, else undefined. */
export async function sessionFormat(db: Db, tenantId: string, sessionId: string) {
  const rows = await executePrepared<{ format: string }>(
    db,
    sql`select format from sessions where tenant_id = ${tenantId} and id = ${sessionId}`,
  );
  return rows[0]?.format;
}
