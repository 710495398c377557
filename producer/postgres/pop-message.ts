/**
 * The statements of taking a session's newest live message back out (an agent framework's "pop the
 * last item", as the OpenAI Agents SDK's `Session.popItem` asks): under the session row's lock, as
 * appends and compactions take it, so the three are ordered. Every statement is scoped by tenant.
 *
 * The counters move with the row (`message_count`, `token_count`, which the audit checks against
 * the live rows); `last_seq` does not (a seq is never given twice). A compaction planned before the
 * pop that would archive the popped seq is refused at its apply (its effects find fewer messages
 * than it saw leave: a `FenceError`, and it plans again); one that keeps it in its tail applies.
 */

import type { StoredContent } from '../../shared/contract/blocks.ts';
import type { Db } from './db.ts';
import { and, desc, eq, sql } from './orm.ts';
import { messages, sessions } from './schema.ts';

/** What a pop did. */
export type PopOutcome =
  /** The tenant has no such session. */
  | { status: 'not-found' }
  /** The session continued in a child (a `newSession` compaction): pop there. */
  | { status: 'continued'; childSessionId: string }
  /**
   * Nothing was removed: the session has no live message, or its newest one is a summary a
   * compaction wrote or a pinned message.
   */
  | { status: 'kept'; reason: 'empty' | 'summary' | 'pinned' }
  /**
   * The newest live message was removed: its seq and content as stored, and, for a tool result, the
   * content of the live message holding its call (null when none does).
   */
  | { status: 'popped'; seq: number; content: StoredContent; call: StoredContent | null };

/**
 * Removes the newest live message of the session `sessionId` when it is neither a summary nor
 * pinned, and counts it out of the session row, in one transaction under the row lock.
 * @throws the database's errors (nothing is removed).
 */
export async function popNewestMessage(db: Db, tenantId: string, sessionId: string): Promise<PopOutcome> {
  return db.transaction(async (tx) => {
    const [session] = await tx
      .select({ child: sessions.childSessionId })
      .from(sessions)
      .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)))
      .for('update');
    if (!session) return { status: 'not-found' };
    if (session.child !== null) return { status: 'continued', childSessionId: session.child };
    const live = and(eq(messages.tenantId, tenantId), eq(messages.sessionId, sessionId));
    const [newest] = await tx
      .select({
        seq: messages.seq,
        kind: messages.kind,
        pinned: messages.pinned,
        tokens: messages.tokenCount,
        content: messages.contentBlocks,
        answers: messages.toolResultIds,
      })
      .from(messages)
      .where(live)
      .orderBy(desc(messages.seq))
      .limit(1);
    if (!newest) return { status: 'kept', reason: 'empty' };
    if (newest.kind === 'summary') return { status: 'kept', reason: 'summary' };
    if (newest.pinned) return { status: 'kept', reason: 'pinned' };
    await tx.delete(messages).where(and(live, eq(messages.seq, newest.seq)));
    await tx
      .update(sessions)
      .set({
        messageCount: sql`${sessions.messageCount} - 1`,
        tokenCount: sql`${sessions.tokenCount} - ${newest.tokens}`,
        updatedAt: sql`now()`,
      })
      .where(and(eq(sessions.tenantId, tenantId), eq(sessions.id, sessionId)));
    let call: StoredContent | null = null;
    if (newest.answers.length > 0) {
      const [holder] = await tx
        .select({ content: messages.contentBlocks })
        .from(messages)
        .where(and(live, sql`${messages.toolUseIds} && ${sql.param(newest.answers)}::text[]`))
        .limit(1);
      call = holder?.content ?? null;
    }
    return { status: 'popped', seq: newest.seq, content: newest.content, call };
  });
}
