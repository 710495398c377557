/**
 * Spend limits on LLM summaries: the `budget` field of a policy, the UTC windows spend is summed
 * over, the cost estimate of a summary before it is made, and the decision whether it may be made.
 * Pure: no I/O, no clock (the caller passes `now`, ms since the epoch). Amounts are USD.
 *
 * A tenant's policy's budget caps the spend of all the tenant's sessions; an agent's policy's
 * budget caps the spend of that agent's sessions. Both apply to a session of that agent: an agent
 * policy does not lift its tenant's limit. Spend is what the ledger recorded (`cost_usd`) in the
 * current UTC day or month, plus the reservations of summaries in flight (see
 * worker/postgres/budgets.ts for how the check and the reservation are made atomic).
 */
import { z } from 'zod';
import { costUsd } from '../summary/pricing.ts';
import type { SummaryEstimate } from '../summary/summarizer.ts';

/**
 * What happens to a compaction whose LLM summary would exceed a budget:
 * - `extractive`: the extractive summarizer (offline, free) writes the summary instead;
 * - `clearToolResults`: no summary at all; the `clearToolResults` strategy with its defaults runs
 *   instead (no LLM call: old tool output, where most of an agent's tokens are, leaves the context);
 * - `skip`: nothing is compacted; the ledger records a `skipped` row with the reason.
 */
export const BUDGET_ACTIONS = ['extractive', 'clearToolResults', 'skip'] as const;
export type BudgetAction = (typeof BUDGET_ACTIONS)[number];

/** Highest limit accepted, USD: a sanity bound, not a recommendation. */
const MAX_LIMIT_USD = 1_000_000;

const limitUsd = z.number().gt(0).max(MAX_LIMIT_USD);

/**
 * A policy's spend limit, USD, per UTC calendar day and/or month. At least one of the two.
 * `onExceeded` defaults to `extractive`.
 */
export const budgetSchema = z
  .object({
    /** Most USD of LLM summaries per UTC day (00:00 to 24:00 UTC). */
    dailyUsd: limitUsd.optional(),
    /** Most USD of LLM summaries per UTC calendar month. */
    monthlyUsd: limitUsd.optional(),
    /** What a compaction does when its summary would exceed a limit. */
    onExceeded: z.enum(BUDGET_ACTIONS).default('extractive'),
  })
  .strict()
  .refine((b) => b.dailyUsd !== undefined || b.monthlyUsd !== undefined, {
    message: 'a budget needs dailyUsd, monthlyUsd or both',
  });

export type Budget = z.infer<typeof budgetSchema>;

/** The calendar windows spend is summed over. */
export type BudgetPeriod = 'daily' | 'monthly';
/** Whose spend a limit caps: the whole tenant's, or one agent's sessions'. */
export type BudgetScope = 'tenant' | 'agent';

/** One limit in force for a session. */
export interface BudgetLimit {
  scope: BudgetScope;
  period: BudgetPeriod;
  /** USD. */
  limitUsd: number;
  onExceeded: BudgetAction;
}

/**
 * The limits in force for a session: its agent's policy's budget (scope `agent`, only when the
 * session has an agent), then its tenant's policy's (scope `tenant`). Most specific first.
 */
export function budgetLimits(
  agentBudget: Budget | undefined,
  tenantBudget: Budget | undefined,
  agentId: string | null,
): BudgetLimit[] {
  const limits: BudgetLimit[] = [];
  const add = (scope: BudgetScope, budget: Budget | undefined) => {
    if (!budget) return;
    const { onExceeded } = budget;
    if (budget.dailyUsd !== undefined)
      limits.push({ scope, period: 'daily', limitUsd: budget.dailyUsd, onExceeded });
    if (budget.monthlyUsd !== undefined)
      limits.push({ scope, period: 'monthly', limitUsd: budget.monthlyUsd, onExceeded });
  };
  if (agentId !== null) add('agent', agentBudget);
  add('tenant', tenantBudget);
  return limits;
}

/** Start of the UTC day that holds `now` (ms since the epoch). */
export function utcDayStart(now: number): Date {
  const d = new Date(now);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

/** Start of the UTC calendar month that holds `now` (ms since the epoch). */
export function utcMonthStart(now: number): Date {
  const d = new Date(now);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

/** The windows' starts for `now`: spend counts from these instants on. */
export function budgetWindows(now: number): { dayStart: Date; monthStart: Date } {
  return { dayStart: utcDayStart(now), monthStart: utcMonthStart(now) };
}

/** USD counted against one limit: recorded in the ledger, and reserved by summaries in flight. */
export interface SpendFigure {
  /** Sum of `cost_usd` of the ledger rows in the window. */
  spentUsd: number;
  /** Sum of the live reservations (summaries being made now). */
  reservedUsd: number;
}

/** Spend per scope and period; an absent scope counts as nothing spent. */
export type Spend = Partial<Record<BudgetScope, Record<BudgetPeriod, SpendFigure>>>;

/**
 * The most a summary may cost, USD: its input tokens at the model's cache-write rate (the dearest
 * an input token can be billed) plus its `max_tokens` at the output rate. An upper bound of the
 * real cost as far as the token estimate holds, so the reservation covers what the ledger later
 * records. 0 for a model without a price (its real cost is recorded as 0 too).
 */
export function estimatedCostUsd(estimate: SummaryEstimate): number {
  return costUsd(estimate.model, {
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: estimate.inputTokens,
    outputTokens: estimate.maxOutputTokens,
  }).usd;
}

/** May the summary be made, and if not, what to do and why. */
export type BudgetDecision =
  | { allowed: true }
  | { allowed: false; action: BudgetAction; limit: BudgetLimit; reason: string };

/**
 * Decides whether a summary of `estimateUsd` fits every limit: it does when, for each limit,
 * spent + reserved + estimate ≤ limit. The first limit it would exceed (most specific first,
 * daily before monthly) decides the action and the reason, e.g.
 * `budget: daily 0.50 USD of the tenant, spent 0.48, this summary ≈0.05`.
 */
export function decideBudget(limits: BudgetLimit[], spend: Spend, estimateUsd: number): BudgetDecision {
  for (const limit of limits) {
    const figure = spend[limit.scope]?.[limit.period] ?? { spentUsd: 0, reservedUsd: 0 };
    const counted = figure.spentUsd + figure.reservedUsd;
    if (counted + estimateUsd <= limit.limitUsd) continue;
    const reserved = figure.reservedUsd > 0 ? ` (${usd(figure.reservedUsd)} of it in flight)` : '';
    return {
      allowed: false,
      action: limit.onExceeded,
      limit,
      reason:
        `budget: ${limit.period} ${usd(limit.limitUsd)} USD of the ${limit.scope}, ` +
        `spent ${usd(counted)}${reserved}, this summary ≈${usd(estimateUsd)}`,
    };
  }
  return { allowed: true };
}

/** USD for a reason: 2 decimals, more when that would show 0.00 for a non-zero amount. */
export function usd(amount: number): string {
  if (amount === 0 || Math.abs(amount) >= 0.01) return amount.toFixed(2);
  return amount.toPrecision(2);
}
