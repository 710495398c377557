/**
 * Executes a change's effects inside the apply transaction, under the session's row lock, in the
 * order given, and reports what they did. It decides nothing: the plan and the pipeline did. The
 * one check it makes is the one only the write can make — every seq the plan saw leaving could
 * still leave — and a failure there is a {@link FenceError}, so the pipeline re-plans.
 */

import { executePrepared, type Tx } from '../../producer/postgres/db.ts';
import { sql } from '../../producer/postgres/orm.ts';
import { sessions } from '../../producer/postgres/schema.ts';
import { FenceError } from '../../shared/contract/errors.ts';
import type {
  ArchiveEffect,
  ContinueInChildEffect,
  Effect,
  RewriteEffect,
  WriteSummaryEffect,
} from '../../shared/planning/effects.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import type { LockedSession } from './lock.ts';
import { MESSAGE_FIELDS, messageFieldsWith } from './message-columns.ts';

const FIELDS = sql.raw(MESSAGE_FIELDS);
/**
 * The child's copies: the context a reply was made from was the parent's, whose versions the
 * child does not count; the copies are older than the child's first compaction anyway.
 */
const CHILD_FIELDS = sql.raw(messageFieldsWith({ context_version: 'null' }));

/** What the effects did, for the session's counters and the ledger row. */
export interface EffectFacts {
  /** The compacted history's size afterwards: the session's, or the child's when one was made. */
  messagesAfter: number;
  tokensAfter: number;
  /** Messages archived: those that left, and the originals of those rewritten in place. */
  archived: number;
  /** Tool uses or thinking blocks cleared by rewrites; null when the change rewrote nothing. */
  blocksCleared: number | null;
  childSessionId: string | null;
  /** The compacted session's own row afterwards (a parent that continued in a child is unchanged). */
  session: { messageCount: number; tokenCount: number; checkpoint: Checkpoint | null };
  /** The checkpoint a summary wrote (into the session, or the child); null when none was written. */
  written: Checkpoint | null;
}

interface Where {
  tenantId: string;
  sessionId: string;
}

/** Running counters of one session while effects execute. */
interface Counters {
  messages: number;
  tokens: number;
  checkpoint: Checkpoint | null;
}

/**
 * Executes `effects` in order. An archive and a summary written into the session itself need no
 * answer before the next statement, so they are sent together (one round trip on the transaction's
 * connection, which runs them in the order sent) and their answers read in order afterwards: the
 * first failure is the one thrown, and the transaction rolls back whatever ran after it.
 * @param compactionId the ledger row's id, which archived messages link to.
 * @throws {FenceError} when fewer messages could leave than the plan saw (the snapshot is stale).
 */
export async function executeEffects(
  tx: Tx,
  where: Where,
  effects: Effect[],
  locked: LockedSession,
  compactionId: string,
): Promise<EffectFacts> {
  const session: Counters = { messages: locked.messageCount, tokens: locked.tokenCount, checkpoint: null };
  let child: (Counters & { id: string }) | null = null;
  let archived = 0;
  let blocksCleared: number | null = null;
  // Sent, not yet answered: each resolves to the step that counts what it did.
  const sent: Array<Promise<() => void>> = [];
  const answered = async () => {
    const results = await Promise.allSettled(sent.splice(0));
    for (const result of results) {
      if (result.status === 'rejected') throw result.reason;
      result.value();
    }
  };
  for (const effect of effects) {
    switch (effect.type) {
      case 'archive': {
        const counted = archive(tx, where, effect, compactionId).then((moved) => () => {
          session.messages -= moved.count;
          session.tokens -= moved.tokens;
          archived += moved.count;
        });
        sent.push(counted);
        break;
      }
      case 'continueInChild':
        await answered();
        child = await continueInChild(tx, where, effect, locked);
        break;
      case 'writeSummary': {
        if (effect.into === 'session') {
          const counted = insertSummaryMessage(tx, where.tenantId, where.sessionId, effect).then(() => () => {
            session.messages += 1;
            session.tokens += effect.tokenCount;
            session.checkpoint = effect.checkpoint;
          });
          sent.push(counted);
          break;
        }
        await answered();
        if (child === null) throw new Error('writeSummary into a child: no continueInChild before it');
        await insertSummaryMessage(tx, where.tenantId, child.id, effect);
        child.messages += 1;
        child.tokens += effect.tokenCount;
        child.checkpoint = effect.checkpoint;
        break;
      }
      case 'rewrite': {
        await answered();
        const done = await rewrite(tx, where, effect, compactionId);
        // The messages stay: only their estimates change.
        session.tokens += done.tokensAfter - done.tokensBefore;
        archived += done.count;
        blocksCleared = (blocksCleared ?? 0) + effect.blocks;
        break;
      }
      default:
        throw new Error(`unknown effect ${JSON.stringify(effect satisfies never)}`);
    }
  }
  await answered();
  if (child) await settleChild(tx, where.tenantId, child);
  const result = child ?? session;
  return {
    messagesAfter: result.messages,
    tokensAfter: result.tokens,
    archived,
    blocksCleared,
    childSessionId: child?.id ?? null,
    session: { messageCount: session.messages, tokenCount: session.tokens, checkpoint: session.checkpoint },
    written: result.checkpoint,
  };
}

/**
 * What {@link executeEffects} will report, known before it runs, or null when it cannot be: every
 * effect is an archive or a summary written into the session itself, and `locked` carries the
 * metadata of every message an archive moves (read under the row lock in this transaction, so the
 * rows are as it says). An archive moves exactly its planned seqs or throws a {@link FenceError};
 * its tokens are theirs. Null too when a planned seq is missing, pinned or past the cutoff: that
 * archive will fence, and is left to say so. Lets the ledger statement go with the effects, in one
 * round trip.
 */
export function foreseenFacts(effects: Effect[], locked: LockedSession): EffectFacts | null {
  const metas = new Map(locked.messages.map((m) => [m.seq, m]));
  const session: Counters = { messages: locked.messageCount, tokens: locked.tokenCount, checkpoint: null };
  let archived = 0;
  for (const effect of effects) {
    if (effect.type === 'archive') {
      for (const seq of effect.seqs) {
        const meta = metas.get(seq);
        if (!meta || meta.pinned || seq > effect.cutoffSeq) return null;
        session.tokens -= meta.tokenCount;
      }
      session.messages -= effect.seqs.length;
      archived += effect.seqs.length;
    } else if (effect.type === 'writeSummary' && effect.into === 'session') {
      session.messages += 1;
      session.tokens += effect.tokenCount;
      session.checkpoint = effect.checkpoint;
    } else return null;
  }
  return {
    messagesAfter: session.messages,
    tokensAfter: session.tokens,
    archived,
    blocksCleared: null,
    childSessionId: null,
    session: { messageCount: session.messages, tokenCount: session.tokens, checkpoint: session.checkpoint },
    written: session.checkpoint,
  };
}

/**
 * Moves the planned seqs to the archive in one statement; pinned rows never match. The seqs are
 * sent as their range minus the seqs inside it that stay ({@link seqRange}): the leaving messages
 * are mostly one contiguous run, so the statement scans one index range instead of probing the
 * index once per seq, and sends a few exceptions instead of every seq. Every statement keeps
 * `tenant_id = $1`, so a table partitioned by tenant is pruned to one partition.
 */
async function archive(
  tx: Tx,
  where: Where,
  effect: ArchiveEffect,
  compactionId: string,
): Promise<{ count: number; tokens: number }> {
  const range = seqRange(effect.seqs);
  const which = range
    ? sql`seq between ${range.first} and ${range.last}
        and seq <> all(${bigintArray(range.exceptions)}::bigint[])`
    : sql`seq = any(${bigintArray(effect.seqs)}::bigint[])`;
  const rows = await executePrepared<{ count: number; tokens: string }>(
    tx,
    sql`
    with moved as (
      delete from messages
      where tenant_id = ${where.tenantId} and session_id = ${where.sessionId}
        and ${which}
        and seq <= ${effect.cutoffSeq} and not pinned
      returning *
    ), archived as (
      insert into archived_messages (tenant_id, session_id, ${FIELDS}, compaction_id)
      select tenant_id, session_id, ${FIELDS}, ${compactionId}::uuid
      from moved
      returning token_count
    )
    select count(*)::int as count, coalesce(sum(token_count), 0)::bigint as tokens from archived`,
  );
  const count = Number(rows[0]?.count ?? 0);
  if (count !== effect.seqs.length) {
    throw new FenceError(
      `session "${where.sessionId}": ${count} of ${effect.seqs.length} planned messages ` +
        'could still leave; the snapshot is stale',
    );
  }
  return { count, tokens: Number(rows[0]?.tokens ?? 0) };
}

/**
 * Rewrites the planned messages in place, in one statement: each original row is archived whole
 * (every column, `content_blocks` byte-exact, marked `rewritten`, linked to the compaction), then
 * the live row at the same seq takes the new content, rendering, token estimate and thinking flag.
 * Both halves read the rows as they were before the statement (one snapshot). Pinned rows never
 * match.
 * @throws {FenceError} when fewer rows matched than planned (the snapshot is stale).
 */
async function rewrite(
  tx: Tx,
  where: Where,
  effect: RewriteEffect,
  compactionId: string,
): Promise<{ count: number; tokensBefore: number; tokensAfter: number }> {
  const seqs = effect.rewrites.map((r) => r.seq);
  const values = JSON.stringify(
    effect.rewrites.map((r) => ({
      seq: r.seq,
      content_blocks: r.content,
      content: r.text,
      token_count: r.tokenCount,
      has_thinking: r.thinking,
    })),
  );
  const [row] = await tx.execute<{ archived: number; updated: number; before: string; after: string }>(sql`
    with r as (
      select * from json_to_recordset(${values}::json)
        as r(seq bigint, content_blocks json, content text, token_count integer, has_thinking boolean)
    ), originals as (
      insert into archived_messages (tenant_id, session_id, ${FIELDS}, compaction_id, rewritten)
      select tenant_id, session_id, ${FIELDS}, ${compactionId}::uuid, true
      from messages
      where tenant_id = ${where.tenantId} and session_id = ${where.sessionId}
        and seq = any(${bigintArray(seqs)}::bigint[]) and not pinned
      returning token_count
    ), updated as (
      update messages m set
        content_blocks = r.content_blocks,
        content = r.content,
        token_count = r.token_count,
        has_thinking = r.has_thinking
      from r
      where m.tenant_id = ${where.tenantId} and m.session_id = ${where.sessionId}
        and m.seq = r.seq and not m.pinned
      returning m.token_count
    )
    select
      (select count(*) from originals)::int as archived,
      (select count(*) from updated)::int as updated,
      (select coalesce(sum(token_count), 0) from originals)::bigint as before,
      (select coalesce(sum(token_count), 0) from updated)::bigint as after`);
  const archived = Number(row?.archived ?? 0);
  if (archived !== seqs.length || Number(row?.updated ?? 0) !== seqs.length) {
    throw new FenceError(
      `session "${where.sessionId}": ${archived} of ${seqs.length} planned messages ` +
        'could still be rewritten; the snapshot is stale',
    );
  }
  return { count: archived, tokensBefore: Number(row?.before ?? 0), tokensAfter: Number(row?.after ?? 0) };
}

/**
 * Creates the child session and copies into it, set-based and with their seqs, every live message
 * of the parent but those that leave; messages appended meanwhile are live and copied too. The
 * parent's messages are not touched.
 */
async function continueInChild(
  tx: Tx,
  where: Where,
  effect: ContinueInChildEffect,
  parent: LockedSession,
): Promise<Counters & { id: string }> {
  const id = effect.childSessionId;
  await tx.insert(sessions).values({
    id,
    tenantId: where.tenantId,
    agentId: parent.agentId,
    contextWindow: parent.contextWindow,
    parentSessionId: where.sessionId,
    lastSeq: parent.lastSeq,
    checkpoint: parent.checkpoint,
    // The agent's declared tools carry over: it goes on sending them in the child.
    tools: sql`(select p.tools from sessions p where p.tenant_id = ${where.tenantId} and p.id = ${where.sessionId})`,
    // The child holds the parent's messages and takes the agent's next ones: the same format.
    format: sql`(select p.format from sessions p where p.tenant_id = ${where.tenantId} and p.id = ${where.sessionId})`,
  });
  const [copied] = await tx.execute<{ count: number; tokens: string }>(sql`
    with copied as (
      insert into messages (tenant_id, session_id, ${FIELDS})
      select tenant_id, ${id}, ${CHILD_FIELDS}
      from messages
      where tenant_id = ${where.tenantId} and session_id = ${where.sessionId}
        and not (seq = any(${bigintArray(effect.withoutSeqs)}::bigint[]))
      returning token_count
    )
    select count(*)::int as count, coalesce(sum(token_count), 0)::bigint as tokens from copied`);
  return { id, messages: Number(copied?.count ?? 0), tokens: Number(copied?.tokens ?? 0), checkpoint: null };
}

/** The child's counters (and its checkpoint, when a summary was written into it). */
async function settleChild(tx: Tx, tenantId: string, child: Counters & { id: string }): Promise<void> {
  await tx
    .update(sessions)
    .set({
      messageCount: child.messages,
      tokenCount: child.tokens,
      ...(child.checkpoint ? { checkpoint: child.checkpoint } : {}),
    })
    .where(sql`${sessions.tenantId} = ${tenantId} and ${sessions.id} = ${child.id}`);
}

/** The summary message: role `user`, kind `summary`, at the seq of the last message that left. */
async function insertSummaryMessage(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  effect: WriteSummaryEffect,
): Promise<void> {
  // A fixed text, prepared once per connection: one round trip in the apply transaction.
  await executePrepared(tx, {
    sql: `insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count, pinned)
      values ($1::text, $2::text, $3::bigint, 'user', 'summary', $4::text,
        coalesce($6::json, to_json($4::text)), $5::integer, false)`,
    params: [
      tenantId,
      sessionId,
      effect.seq,
      effect.text,
      effect.tokenCount,
      effect.blocks ? JSON.stringify(effect.blocks) : null,
    ],
  });
}

/** Most seqs inside a range that may stay for {@link seqRange} to still describe it by its range. */
const MAX_RANGE_EXCEPTIONS = 64;

/**
 * `seqs` (ascending, distinct) as the range from the first to the last minus the seqs inside it
 * that are not in `seqs` (kept messages: pinned, system, a summary; or seqs no longer live), which
 * selects exactly `seqs`. Null when `seqs` is empty, is not ascending and distinct, or has more than
 * {@link MAX_RANGE_EXCEPTIONS} gaps: the explicit list is then the description to send.
 */
export function seqRange(seqs: number[]): { first: number; last: number; exceptions: number[] } | null {
  const first = seqs[0];
  const last = seqs[seqs.length - 1];
  if (first === undefined || last === undefined) return null;
  if (last - first + 1 - seqs.length > MAX_RANGE_EXCEPTIONS) return null;
  const exceptions: number[] = [];
  let expected = first;
  for (const seq of seqs) {
    if (seq < expected) return null;
    while (expected < seq) exceptions.push(expected++);
    expected = seq + 1;
  }
  return { first, last, exceptions };
}

/** A bigint[] literal passed as one text parameter (keeps 100,000 seqs within one parameter). */
export function bigintArray(values: number[]): string {
  return `{${values.join(',')}}`;
}
