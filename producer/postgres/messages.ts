/**
 * The statements of the client's writes on `messages`: inserting rows in batches, and finding a
 * live message that holds one of some `tool_use` ids. Every statement is scoped by tenant.
 */

import type { Tx } from './db.ts';
import { and, eq, sql } from './orm.ts';
import { messages } from './schema.ts';

/** Rows per INSERT: 15 columns × 2,000 = 30,000 parameters, well under Postgres' 65,535. */
export const INSERT_BATCH_ROWS = 2_000;

/** A message row as the client writes it. */
export type NewMessageRow = typeof messages.$inferInsert;

/** Inserts the rows in order, {@link INSERT_BATCH_ROWS} per statement. */
export async function insertMessages(tx: Tx, rows: NewMessageRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH_ROWS) {
    await tx.insert(messages).values(rows.slice(i, i + INSERT_BATCH_ROWS));
  }
}

/**
 * One live message of the session that holds any of `ids` as a `tool_use` id (through the
 * `tool_use_ids` array overlap), with all its ids and its seq; undefined when none does.
 */
export async function liveMessageWithToolUseId(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  ids: string[],
): Promise<{ ids: string[]; seq: number } | undefined> {
  const [held] = await tx
    .select({ ids: messages.toolUseIds, seq: messages.seq })
    .from(messages)
    .where(
      and(
        eq(messages.tenantId, tenantId),
        eq(messages.sessionId, sessionId),
        sql`${messages.toolUseIds} && ${sql.param(ids)}::text[]`,
      ),
    )
    .limit(1);
  return held;
}
