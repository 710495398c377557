/**
 * Spend budgets over Postgres: the spend a budget counts, and the reservation of a summary's cost
 * before its LLM call.
 *
 * The concurrency bound. {@link PostgresBudgets.reserve} runs in one transaction that first takes
 * a transaction-scoped advisory lock on the tenant, then sums the tenant's (and agent's) ledger
 * `cost_usd` of the current UTC day and month plus its live reservations, decides, and inserts the
 * reservation when the summary fits. So the check-and-reserve of one tenant is serialized across
 * every worker: each summary admitted saw every summary admitted before it, either as a ledger row
 * or as a reservation, and spent + reserved never exceeds a limit. A reservation holds the
 * summary's cost ceiling (input at the cache-write rate, all of `max_tokens` as output), and is
 * deleted in the transaction that writes the summary's ledger row (worker/postgres/writes.ts), so
 * the spend counted never has a gap between the two. What can still pass a limit is the error of
 * the token estimate, at most the cost of the summaries in flight: one per running job.
 *
 * A worker that dies leaves its reservation behind; it stops counting after
 * {@link RESERVATION_TTL_MS} (and is deleted by the tenant's next check), which errs on the side
 * of spending less.
 */

import { type Db, executePrepared, type Tx } from '../../producer/postgres/db.ts';
import { and, eq } from '../../producer/postgres/orm.ts';
import { budgetReservations } from '../../producer/postgres/schema.ts';
import type { BudgetDecision, Spend } from '../../shared/policy/budget.ts';
import { budgetWindows } from '../../shared/policy/budget.ts';
import type { BudgetCheck, BudgetRequest, Budgets } from '../pipeline/ports.ts';

/**
 * How long a reservation counts, ms: longer than any summary takes (a request times out after
 * 3 minutes; a long transcript takes a few), so only a dead worker's reservation expires.
 */
export const RESERVATION_TTL_MS = 60 * 60_000;

/** Serializes one tenant's budget checks (held to the end of the transaction). */
const LOCK_TENANT = `select pg_advisory_xact_lock(hashtextextended('compactor.budget:' || $1::text, 0))`;

/** Drops the tenant's reservations that no longer count (a dead worker's). */
const DROP_EXPIRED = 'delete from budget_reservations where tenant_id = $1::text and expires_at <= now()';

/**
 * The spend of the tenant and of the agent ($4, may be null) in the windows starting at $2 (day)
 * and $3 (month), and their live reservations: one statement, so one snapshot of both tables.
 */
const SPEND = `select
    coalesce(sum(c.cost_usd) filter (where c.created_at >= $2::timestamptz), 0)::text as tenant_day,
    coalesce(sum(c.cost_usd), 0)::text as tenant_month,
    coalesce(sum(c.cost_usd) filter (where c.created_at >= $2::timestamptz and s.agent_id = $4::text), 0)::text
      as agent_day,
    coalesce(sum(c.cost_usd) filter (where s.agent_id = $4::text), 0)::text as agent_month,
    (select coalesce(sum(r.cost_usd), 0)::text from budget_reservations r
      where r.tenant_id = $1::text and r.expires_at > now()) as tenant_reserved,
    (select coalesce(sum(r.cost_usd), 0)::text from budget_reservations r
      where r.tenant_id = $1::text and r.agent_id = $4::text and r.expires_at > now()) as agent_reserved
  from compactions c
  left join sessions s on s.tenant_id = c.tenant_id and s.id = c.session_id
  where c.tenant_id = $1::text and c.created_at >= $3::timestamptz and c.cost_usd > 0`;

const RESERVE = `insert into budget_reservations (tenant_id, agent_id, session_id, cost_usd, expires_at)
  values ($1::text, $2::text, $3::text, $4::numeric, now() + make_interval(secs => $5::double precision))
  returning id`;

interface SpendRow {
  tenant_day: string;
  tenant_month: string;
  agent_day: string;
  agent_month: string;
  tenant_reserved: string;
  agent_reserved: string;
}

/** Budgets bound to one database. */
export class PostgresBudgets implements Budgets {
  constructor(private readonly db: Db) {}

  reserve(request: BudgetRequest, decide: (spend: Spend) => BudgetDecision): Promise<BudgetCheck> {
    const { tenantId, agentId } = request;
    const { dayStart, monthStart } = budgetWindows(request.now);
    return this.db.transaction(async (tx) => {
      await executePrepared(tx, { sql: LOCK_TENANT, params: [tenantId] });
      await executePrepared(tx, { sql: DROP_EXPIRED, params: [tenantId] });
      const [row] = await executePrepared<SpendRow>(tx, {
        sql: SPEND,
        params: [tenantId, dayStart.toISOString(), monthStart.toISOString(), agentId],
      });
      const figures = row as SpendRow;
      const tenantReserved = Number(figures.tenant_reserved);
      const agentReserved = Number(figures.agent_reserved);
      const spend: Spend = {
        tenant: {
          daily: { spentUsd: Number(figures.tenant_day), reservedUsd: tenantReserved },
          monthly: { spentUsd: Number(figures.tenant_month), reservedUsd: tenantReserved },
        },
        agent: {
          daily: { spentUsd: Number(figures.agent_day), reservedUsd: agentReserved },
          monthly: { spentUsd: Number(figures.agent_month), reservedUsd: agentReserved },
        },
      };
      const decision = decide(spend);
      if (!decision.allowed) return { decision, reservationId: null };
      const [reserved] = await executePrepared<{ id: string }>(tx, {
        sql: RESERVE,
        params: [tenantId, agentId, request.sessionId, request.estimateUsd, RESERVATION_TTL_MS / 1000],
      });
      return { decision, reservationId: reserved?.id ?? null };
    });
  }

  release(tenantId: string, reservationId: string): Promise<void> {
    return releaseReservation(this.db, tenantId, reservationId);
  }
}

/**
 * Deletes the budget reservation `id` of `tenantId`, in `db` or inside a transaction (the apply
 * that records the spend releases it with the ledger row); one already gone is fine.
 */
export async function releaseReservation(db: Db | Tx, tenantId: string, id: string): Promise<void> {
  await db
    .delete(budgetReservations)
    .where(and(eq(budgetReservations.tenantId, tenantId), eq(budgetReservations.id, id)));
}
