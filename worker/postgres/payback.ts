/**
 * The measured payback of a compaction, over Postgres: each `session.run.completed` event that
 * reports its prompt size after a compaction counts once towards that compaction's `measured_*`
 * columns (arithmetic: shared/policy/payback.ts `addMeasuredRequest`). Runs in the transaction
 * that stores the reported tokens, after the session's row is updated (so locks are taken in the
 * apply's order: session, then ledger row).
 */

import type { Tx } from '../../producer/postgres/db.ts';
import { ledgerTenant } from '../../producer/postgres/ledger-tenant.ts';
import { and, desc, eq, sql } from '../../producer/postgres/orm.ts';
import { compactions, sessions } from '../../producer/postgres/schema.ts';
import { addMeasuredRequest, type PaybackInputs } from '../../shared/policy/payback.ts';
import type { ContextReport } from '../pipeline/ports.ts';

/**
 * The most requests a compaction's measurement counts. Bounds the row's list of counted event ids
 * (at most this many ids of at most 200 characters); a session past it has long paid back or not.
 */
export const MAX_MEASURED_REQUESTS = 200;

/**
 * Counts `report` towards the measured payback of the session's current compaction: the latest
 * `applied` row at the session's `compaction_version` that has a prediction. Nothing happens for a
 * report without an event id, a session never compacted (or restored since), an event already
 * counted or the one that asked for the compaction, or a measurement already {@link MAX_MEASURED_REQUESTS} long. The row is locked
 * (`FOR UPDATE`), so two deliveries of one event cannot both count it.
 */
export async function measurePayback(tx: Tx, report: ContextReport): Promise<void> {
  const { tenantId, sessionId, eventId } = report;
  if (eventId === null) return;
  const [row] = await tx
    .select({
      id: compactions.id,
      eventId: compactions.eventId,
      costUsd: compactions.costUsd,
      inputs: compactions.paybackInputs,
      requests: compactions.measuredRequests,
      tokensSent: compactions.measuredTokensSent,
      tokensWithout: compactions.measuredTokensWithout,
      savingsUsd: compactions.measuredSavingsUsd,
      ratio: compactions.measuredRatio,
      counted: sql<boolean>`${eventId} = any(coalesce(${compactions.measuredEventIds}, '{}'))`,
    })
    .from(compactions)
    .where(
      and(
        eq(compactions.tenantId, ledgerTenant(tenantId)),
        eq(compactions.sessionId, sessionId),
        eq(compactions.status, 'applied'),
        sql`${compactions.paybackInputs} is not null`,
        sql`${compactions.compactionVersion} = (select ${sessions.compactionVersion} from ${sessions}
          where ${sessions.tenantId} = ${tenantId} and ${sessions.id} = ${sessionId})`,
      ),
    )
    .orderBy(desc(compactions.createdAt))
    .limit(1)
    .for('update');
  if (!row || row.counted || (row.requests ?? 0) >= MAX_MEASURED_REQUESTS) return;
  // The event that asked for the compaction reported the prompt before it (a redelivery comes here).
  if (row.eventId === eventId) return;
  const measured = addMeasuredRequest(
    row.requests === null
      ? null
      : {
          requests: row.requests,
          tokensSent: row.tokensSent ?? 0,
          tokensWithout: row.tokensWithout ?? 0,
          savingsUsd: row.savingsUsd ?? 0,
          ratio: row.ratio,
        },
    row.inputs as PaybackInputs,
    row.costUsd,
    { inputTokens: report.inputTokens, cacheReadTokens: report.cacheReadTokens },
  );
  await tx
    .update(compactions)
    .set({
      measuredRequests: measured.requests,
      measuredTokensSent: measured.tokensSent,
      measuredTokensWithout: measured.tokensWithout,
      measuredSavingsUsd: measured.savingsUsd,
      measuredRatio: measured.ratio,
      measuredEventIds: sql`array_append(coalesce(${compactions.measuredEventIds}, '{}'), ${eventId}::text)`,
    })
    .where(and(eq(compactions.tenantId, tenantId), eq(compactions.id, row.id)));
}
