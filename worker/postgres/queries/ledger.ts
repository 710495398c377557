/** Reads of the ledger (`compactions`) for the CLI's reports. */

import type { Db } from '../../../producer/postgres/db.ts';
import { and, eq, sql } from '../../../producer/postgres/orm.ts';
import { compactions } from '../../../producer/postgres/schema.ts';

/** One ledger row as a report shows it: missing counts and durations as 0, no summarizer as `-`. */
export interface LedgerLine {
  sessionId: string;
  status: string;
  messagesBefore: number;
  messagesAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  strategy: string;
  summarizer: string;
  /** `duration_ms`. */
  ms: number;
  reason: string | null;
}

/**
 * The tenant's ledger rows that carry an idempotency key (the decisions on events, not the failed
 * attempts or retention's `expired` rows), by session id.
 */
export async function keyedLedgerLines(db: Db, tenantId: string): Promise<LedgerLine[]> {
  const rows = await db
    .select({
      sessionId: compactions.sessionId,
      status: compactions.status,
      messagesBefore: sql<number>`coalesce(${compactions.messagesBefore}, 0)`,
      messagesAfter: sql<number>`coalesce(${compactions.messagesAfter}, 0)`,
      tokensBefore: sql<number>`coalesce(${compactions.tokensBefore}, 0)`,
      tokensAfter: sql<number>`coalesce(${compactions.tokensAfter}, 0)`,
      strategy: compactions.strategy,
      summarizer: sql<string>`coalesce(${compactions.summarizer}, '-')`,
      ms: sql<number>`coalesce(${compactions.durationMs}, 0)`,
      reason: compactions.reason,
    })
    .from(compactions)
    .where(and(eq(compactions.tenantId, tenantId), sql`${compactions.idempotencyKey} is not null`))
    .orderBy(compactions.sessionId);
  return rows.map((r) => ({
    ...r,
    messagesBefore: Number(r.messagesBefore),
    messagesAfter: Number(r.messagesAfter),
    tokensBefore: Number(r.tokensBefore),
    tokensAfter: Number(r.tokensAfter),
    ms: Number(r.ms),
  }));
}
