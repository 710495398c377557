/**
 * The Postgres reads of the pipeline and of the ledger: the admission gate, the snapshot, message
 * pages, a ledger row by key, a session's history. The hot ones are built once and prepared, so
 * postgres.js sends each in one round trip and Postgres plans it once per connection.
 */

import { countPdfPages } from '../../producer/media/pdf-pages.ts';
import { type ContextRead, readContext } from '../../producer/postgres/context-query.ts';
import { type Db, executePrepared, type Tx } from '../../producer/postgres/db.ts';
import { ledgerTenant } from '../../producer/postgres/ledger-tenant.ts';
import { and, asc, eq, sql } from '../../producer/postgres/orm.ts';
import {
  type CompactionRow,
  compactionPolicies,
  compactions,
  messages,
  sessions,
} from '../../producer/postgres/schema.ts';
import { type Block, type StoredContent, summaryParts } from '../../shared/contract/blocks.ts';
import { SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { Message } from '../../shared/contract/message.ts';
import { isSessionFormat, sessionFormatOf } from '../../shared/contract/session-format.ts';
import { mediaRefsOf } from '../../shared/formats/registry.ts';
import { policySchema } from '../../shared/policy/policy.ts';
import { checkpointSchema } from '../../shared/summary/checkpoint.ts';
import type { Gate, SessionReads, Snapshot } from '../pipeline/ports.ts';
import { bigintArray } from './effects.ts';
import { type MetaTuple, metaOf, metasOf } from './lock.ts';
import type { PolicySource } from './policies.ts';

/**
 * The stored content (`content_blocks`) of the live messages of `seqs`, by seq; on a transaction,
 * under its lock. Seqs no longer live are absent.
 */
export async function contentsOf(
  db: Db | Tx,
  tenantId: string,
  sessionId: string,
  seqs: number[],
): Promise<Map<number, StoredContent>> {
  if (seqs.length === 0) return new Map();
  const rows = await db
    .select({ seq: messages.seq, content: messages.contentBlocks })
    .from(messages)
    .where(
      and(
        eq(messages.tenantId, tenantId),
        eq(messages.sessionId, sessionId),
        sql`${messages.seq} = any(${bigintArray(seqs)}::bigint[])`,
      ),
    );
  return new Map(rows.map((r) => [r.seq, r.content as StoredContent]));
}

// Qualified on purpose: drizzle renders columns of a one-table select unqualified, and inside the
// policy subqueries an unqualified tenant_id would resolve to the policy's own column.
const OUTER_TENANT = sql.raw('"sessions"."tenant_id"');
const OUTER_AGENT = sql.raw('"sessions"."agent_id"');

/** Reads of sessions and the ledger, tenant-scoped, bound to one database. */
export class PostgresReads implements SessionReads {
  private readonly prepared: ReturnType<typeof prepareQueries>;

  /**
   * @param policies where {@link loadGate} takes the policies from (a cache kept current by
   *   `LISTEN`, worker/postgres/policy-cache.ts); absent, the gate's own statement reads them.
   */
  constructor(
    private readonly db: Db,
    private readonly policies: PolicySource | null = null,
  ) {
    this.prepared = prepareQueries(db);
  }

  /**
   * Reads the session row and the metadata of its messages up to the row's `last_seq`, in one
   * statement (one snapshot of the database, one round trip; the metadata travels as one JSON
   * array). A compaction or restore committing afterwards bumps the version the snapshot carries,
   * and the apply's fence (and its count check) rejects the plan.
   * @throws {SessionNotFoundError} if the tenant has no such session.
   */
  async loadSnapshot(tenantId: string, sessionId: string): Promise<Snapshot> {
    const [session] = await executePrepared<SnapshotRow>(this.db, {
      sql: SNAPSHOT,
      params: [tenantId, sessionId],
    });
    if (!session) throw new SessionNotFoundError(tenantId, sessionId);
    return {
      tenantId,
      sessionId,
      compactionVersion: session.compaction_version,
      snapshotSeq: Number(session.last_seq),
      format: sessionFormatOf(session.format),
      messageCount: session.message_count,
      tokenCount: Number(session.token_count),
      checkpoint: session.checkpoint === null ? null : checkpointSchema.parse(session.checkpoint),
      messages: session.metas.map(metaOf),
    };
  }

  /**
   * What the admission check needs, without locks, in one round trip: the session's counters,
   * lineage and storm guard, the agent's and tenant's policies, and whether `idempotencyKey` (if
   * given) is already used.
   * @throws {SessionNotFoundError} if the tenant has no such session.
   */
  async loadGate(tenantId: string, sessionId: string, idempotencyKey: string | null = null): Promise<Gate> {
    if (this.policies) {
      const [row] = await this.prepared.gateState.execute({ tenantId, sessionId, idempotencyKey });
      if (!row) throw new SessionNotFoundError(tenantId, sessionId);
      const { keyUsed, ...state } = row;
      const policies = await this.policies.get(tenantId, state.agentId ?? null);
      return {
        keyUsed,
        state: { ...state, lastCompactedAt: state.lastCompactedAt ? state.lastCompactedAt.getTime() : null },
        agentPolicy: policies.agent,
        tenantPolicy: policies.tenant,
      };
    }
    const [row] = await this.prepared.gate.execute({ tenantId, sessionId, idempotencyKey });
    if (!row) throw new SessionNotFoundError(tenantId, sessionId);
    const { agentPolicy, tenantPolicy, keyUsed, ...state } = row;
    return {
      keyUsed,
      state: { ...state, lastCompactedAt: state.lastCompactedAt ? state.lastCompactedAt.getTime() : null },
      agentPolicy: agentPolicy == null ? null : policySchema.parse(agentPolicy),
      tenantPolicy: tenantPolicy == null ? null : policySchema.parse(tenantPolicy),
    };
  }

  /**
   * Loads the full messages of `seqs` (ascending), as summarizers read them: a stored message of
   * several parts (text, thinking, tool calls, tool results) comes back as one message per part,
   * at its seq (shared/contract/blocks.ts, `summaryParts`). Seqs no longer live are simply absent.
   *
   * A live message that compactions still in force rewrote in place (`clearToolResults`,
   * `clearThinking`) is read as its original, the earliest archived version of its seq: a summary
   * made after a clearing (`auto`'s second stage) then covers the tool output and the thinking,
   * not their placeholders. One statement per call while no such compaction is in force (the
   * session's usual state: {@link LIVE_MESSAGES}), two otherwise ({@link LEAVING_MESSAGES}).
   */
  async loadMessages(tenantId: string, sessionId: string, seqs: number[]): Promise<Message[]> {
    if (seqs.length === 0) return [];
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const seq of seqs) {
      if (seq < first) first = seq;
      if (seq > last) last = seq;
    }
    const params = [tenantId, sessionId, first, last, bigintArray(seqs)];
    let rows = await executePrepared<LeavingRow & { rewrites: boolean }>(this.db, {
      sql: LIVE_MESSAGES,
      params,
    });
    // Some live rows may stand for originals in the archive: read the page again, with them.
    if (rows[0]?.rewrites) rows = await executePrepared(this.db, { sql: LEAVING_MESSAGES, params });
    return rows.flatMap(({ parts, media_blocks, format, ...row }) => {
      const message: Message = {
        seq: Number(row.seq),
        role: row.role,
        kind: row.kind,
        toolCallId: row.tool_call_id,
        toolName: row.tool_name,
        tokenCount: row.token_count,
        pinned: row.pinned,
        toolUseIds: row.tool_use_ids,
        toolResultIds: row.tool_result_ids,
        thinking: row.has_thinking,
        content: row.content,
      };
      const read = parts === null ? [message] : summaryParts({ ...message, blocks: parts }, countPdfPages);
      return withMedia(read, media_blocks, format);
    });
  }

  loadContents(tenantId: string, sessionId: string, seqs: number[]): Promise<Map<number, StoredContent>> {
    return contentsOf(this.db, tenantId, sessionId, seqs);
  }

  /**
   * The full messages of `seqs` (ascending) in pages of at most `pageSize` seqs, read one page at
   * a time as the consumer asks, so a long history is never in memory whole. Iterable again (each
   * pass reads again). Seqs no longer live are simply absent.
   */
  pagedMessages(
    tenantId: string,
    sessionId: string,
    seqs: number[],
    pageSize = MESSAGE_PAGE,
  ): AsyncIterable<Message[]> {
    const store = this;
    return {
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < seqs.length; i += pageSize) {
          yield await store.loadMessages(tenantId, sessionId, seqs.slice(i, i + pageSize));
        }
      },
    };
  }

  /** The session's message and token counters, or undefined for an unknown session. */
  async loadCounters(
    tenantId: string,
    sessionId: string,
  ): Promise<{ messageCount: number; tokenCount: number } | undefined> {
    const [row] = await this.prepared.counters.execute({ tenantId, sessionId });
    return row;
  }

  async loadConversation(tenantId: string, sessionId: string, seqs: number[]): Promise<ContextRead> {
    const read = await readContext(this.db, tenantId, sessionId, seqs);
    if (read === null) throw new SessionNotFoundError(tenantId, sessionId);
    return read;
  }

  /** The tenant's ledger row holding `idempotencyKey`, if any (keys are unique per tenant). */
  async findByKey(tenantId: string, idempotencyKey: string): Promise<CompactionRow | undefined> {
    const [row] = await this.prepared.byKey.execute({ tenantId, idempotencyKey });
    return row;
  }

  /** @throws {SessionNotFoundError} unless the tenant has this session. */
  async assertSession(tenantId: string, sessionId: string): Promise<void> {
    const [row] = await this.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
    if (!row) throw new SessionNotFoundError(tenantId, sessionId);
  }

  /** The session's ledger, oldest first. Tenant-scoped. */
  async history(tenantId: string, sessionId: string): Promise<CompactionRow[]> {
    return this.db
      .select()
      .from(compactions)
      .where(and(eq(compactions.tenantId, ledgerTenant(tenantId)), eq(compactions.sessionId, sessionId)))
      .orderBy(asc(compactions.createdAt), asc(compactions.id));
  }
}

/**
 * The snapshot: the session row and its live messages' metadata, `$1` tenant, `$2` session. Built
 * by hand so the messages subquery names the tenant as a parameter (see {@link metasOf}).
 */
const SNAPSHOT = `select s.format, s.compaction_version, s.last_seq, s.message_count, s.token_count, s.checkpoint,
    ${metasOf('s', '$1::text', '$2::text')} as metas
  from sessions s where s.tenant_id = $1::text and s.id = $2::text`;

/** A row of {@link SNAPSHOT} as postgres.js parses it (int8 as text). */
interface SnapshotRow {
  format: string;
  compaction_version: number;
  last_seq: string;
  message_count: number;
  token_count: string;
  checkpoint: unknown;
  metas: MetaTuple[];
}

/** Messages per page when the leaving messages are read in pages (their content can be large). */
const MESSAGE_PAGE = 2000;

/**
 * The columns a summarizer reads of a message, in their select order: the original's where one
 * takes the live row's place (the seq and the pinned flag stay the live row's).
 */
const LEAVING_COLUMNS = [
  'role',
  'kind',
  'content',
  'tool_call_id',
  'tool_name',
  'token_count',
  'tool_use_ids',
  'tool_result_ids',
  'has_thinking',
] as const;

/** A row of {@link LEAVING_MESSAGES} as postgres.js parses it (int8 as text). */
interface LeavingRow {
  seq: string;
  role: Message['role'];
  kind: Message['kind'];
  content: string;
  tool_call_id: string | null;
  tool_name: string | null;
  token_count: number;
  pinned: boolean;
  tool_use_ids: string[];
  tool_result_ids: string[];
  has_thinking: boolean;
  /** The blocks of a row of several ({@link partsOf}: an array), else null. */
  parts: Block[] | null;
  /** The stored content of a row whose text shows media ({@link mediaOf}); else null. */
  media_blocks: unknown;
  /** The session's format, which reads the media ({@link SESSION_FORMAT_OF}); null for no session. */
  format: string | null;
}

/**
 * The SQL of a row's stored content when its text rendering shows an image, document or file
 * marker (`[image: …]`, `[document …]`, `[file: …]`, shared/contract/blocks.ts and the formats'
 * renderings), else null: only such rows bring their content (base64 included) back to be read
 * for media (`mediaRefsOf`).
 */
const mediaOf = (content: string, blocks: string) =>
  `case when ${content} ~ '[[](image|document|file)[]:]' then ${blocks} end`;

/**
 * The SQL of the session's format (`$1` tenant, `$2` session), whose rules read a row's media: a
 * scalar subquery of no outer column, which Postgres runs once per statement.
 */
const SESSION_FORMAT_OF = `(select s.format from sessions s where s.tenant_id = $1::text and s.id = $2::text) as format`;

/**
 * `read` (the messages of one stored row) with the row's media on the first of them: each media
 * item is listed once per seq, however many parts the row was split into.
 */
function withMedia(read: Message[], stored: unknown, format: string | null): Message[] {
  const [first, ...rest] = read;
  if (stored === null || stored === undefined || !first) return read;
  // A session deleted while its messages were read has no format left, and its media no reader.
  const media = isSessionFormat(format) ? mediaRefsOf(format, first.seq, stored, countPdfPages) : [];
  return media.length === 0 ? read : [{ ...first, media }, ...rest];
}

/**
 * The SQL of a row's parts to split, from its stored blocks column `blocks`: the blocks of a message
 * of several; null for a one-block row, which reads as its text.
 */
const partsOf = (blocks: string) =>
  `case when json_typeof(${blocks}) = 'array' and json_array_length(${blocks}) > 1 then ${blocks} end`;

/**
 * The messages of a page of seqs as a summary must read them, in one statement:
 * `$1` tenant, `$2` session, `$3`/`$4` the page's lowest and highest seq, `$5` its seqs.
 *
 * `originals` picks, per seq of the page, the archived original of a message rewritten in place:
 * a `rewritten` row of an applied compaction (a restore deletes its compaction's archived rows and
 * marks the ledger row `restored`, so an undone rewrite never counts), the earliest by
 * `compaction_version` (a result cleared, then its thinking dropped, reads as it was written).
 * A rewritten row older than a compaction that archived the same seq as leaving (`not rewritten`)
 * belonged to a message that has since left: the live row at that seq is a later summary, read as
 * it is. Every other live row is read as it is. The range lets Postgres scan the primary keys
 * once instead of probing them per seq.
 *
 * Each archived row's compaction is looked up by its key, `(tenant_id, id)`, in a `lateral … limit 1`
 * (and the later one as a scalar subquery): Postgres cannot turn either into a join, so no plan, a
 * generic one included, reads the tenant's applied compactions and probes the archive once per
 * compaction (a generic plan of the earlier form, a plain join, did: 4 ms instead of 0.15 ms once
 * a tenant had a thousand compactions). Every table is named with `$1` (and `$2`), never with an
 * outer row's column, so each scan is pruned to the tenant's partition when the executor starts.
 */
const LEAVING_MESSAGES = `
  with originals as (
    select distinct on (a.seq) a.seq, a.content_blocks, ${LEAVING_COLUMNS.map((c) => `a.${c}`).join(', ')}
    from archived_messages a
    cross join lateral (
      select c.compaction_version from compactions c
      where c.tenant_id = $1::text and c.id = a.compaction_id and c.status = 'applied'
      limit 1) c
    left join lateral (
      select true as newer from archived_messages l
      where l.tenant_id = $1::text and l.session_id = $2::text and l.seq = a.seq and not l.rewritten
        and (select lc.compaction_version from compactions lc
          where lc.tenant_id = $1::text and lc.id = l.compaction_id and lc.status = 'applied'
        ) > c.compaction_version
      limit 1) later on true
    where a.tenant_id = $1::text and a.session_id = $2::text and a.rewritten
      and a.seq between $3::bigint and $4::bigint and a.seq = any($5::bigint[])
      and later.newer is null
    order by a.seq, c.compaction_version, a.archived_at
  ), page as (
    select m.seq, m.pinned,
      ${LEAVING_COLUMNS.map((c) => `case when o.seq is null then m.${c} else o.${c} end as ${c}`).join(', ')},
      case when o.seq is null then m.content_blocks else o.content_blocks end as blocks
    from messages m
    left join originals o on o.seq = m.seq
    where m.tenant_id = $1::text and m.session_id = $2::text
      and m.seq between $3::bigint and $4::bigint and m.seq = any($5::bigint[])
  )
  select seq, pinned, ${LEAVING_COLUMNS.join(', ')},
    ${partsOf('blocks')} as parts, ${mediaOf('content', 'blocks')} as media_blocks, ${SESSION_FORMAT_OF}
  from page
  order by seq`;

/**
 * The live messages of a page of seqs, with the parameters of {@link LEAVING_MESSAGES}, and on
 * every row `rewrites`: whether a compaction in force on the session rewrote messages in place (an
 * applied `clearToolResults` or `clearThinking`, the only ones whose `blocks_cleared` is set), in
 * which case the page must be read again with {@link LEAVING_MESSAGES}. The check reads the ledger
 * (not partitioned) once; the statement names one partitioned table, so Postgres plans it for the
 * parameters in a fraction of the time it takes for {@link LEAVING_MESSAGES}'s three.
 */
const LIVE_MESSAGES = `
  select m.seq, m.pinned, ${LEAVING_COLUMNS.map((c) => `m.${c}`).join(', ')},
    ${partsOf('m.content_blocks')} as parts, ${mediaOf('m.content', 'm.content_blocks')} as media_blocks,
    ${SESSION_FORMAT_OF},
    (select exists (select 1 from compactions c
      where c.tenant_id = $1::text and c.session_id = $2::text and c.status = 'applied'
        and c.blocks_cleared is not null)) as rewrites
  from messages m
  where m.tenant_id = $1::text and m.session_id = $2::text
    and m.seq between $3::bigint and $4::bigint and m.seq = any($5::bigint[])
  order by m.seq`;

const TENANT = sql.placeholder('tenantId');
const SESSION = sql.placeholder('sessionId');
const KEY = sql.placeholder('idempotencyKey');

/**
 * The store's fixed reads, built once and prepared: postgres.js then sends each in one round trip
 * and Postgres parses and plans it once per connection (see `executePrepared` in producer/postgres/db.ts).
 */
function prepareQueries(db: Db) {
  const ofSession = and(eq(sessions.tenantId, TENANT), eq(sessions.id, SESSION));
  const gateColumns = {
    agentId: sessions.agentId,
    messageCount: sessions.messageCount,
    tokenCount: sessions.tokenCount,
    contextWindow: sessions.contextWindow,
    lastCompactedAt: sessions.lastCompactedAt,
    lastSeq: sessions.lastSeq,
    compactionVersion: sessions.compactionVersion,
    stormGuardSeq: sessions.stormGuardSeq,
    childSessionId: sessions.childSessionId,
    reportedInputTokens: sessions.reportedInputTokens,
    reportedTokenCount: sessions.reportedTokenCount,
  };
  const keyUsed = sql<boolean>`exists (select 1 from ${compactions} c
    where c.tenant_id = ${OUTER_TENANT} and c.idempotency_key = ${KEY})`;
  return {
    // The gate when the policies come from a cache: the session's state and the idempotency check.
    gateState: db
      .select({ ...gateColumns, keyUsed })
      .from(sessions)
      .where(ofSession)
      .prepare('compactor_gate_state'),
    gate: db
      .select({
        ...gateColumns,
        // The policies and the idempotency check ride along in the same round trip.
        agentPolicy: sql<unknown>`(select p.policy from ${compactionPolicies} p
          where p.tenant_id = ${OUTER_TENANT} and p.agent_id = ${OUTER_AGENT})`.mapWith(
          compactionPolicies.policy,
        ),
        tenantPolicy: sql<unknown>`(select p.policy from ${compactionPolicies} p
          where p.tenant_id = ${OUTER_TENANT} and p.agent_id is null)`.mapWith(compactionPolicies.policy),
        keyUsed,
      })
      .from(sessions)
      .where(ofSession)
      .prepare('compactor_gate'),
    counters: db
      .select({ messageCount: sessions.messageCount, tokenCount: sessions.tokenCount })
      .from(sessions)
      .where(ofSession)
      .prepare('compactor_counters'),
    byKey: db
      .select()
      .from(compactions)
      .where(and(eq(compactions.tenantId, TENANT), eq(compactions.idempotencyKey, KEY)))
      .prepare('compactor_by_key'),
  };
}
