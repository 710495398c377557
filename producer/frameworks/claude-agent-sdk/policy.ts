/**
 * The summary instructions of the policy in force for an agent: what a `summarize` strategy (or the
 * summary stage of `auto`) tells the summarizer to keep (`instructions`, shared/strategies/summarize.ts),
 * by the precedence rule of shared/policy/policy.ts (the agent's policy, else the tenant's, else
 * the built-in default, which has none). Claude Code's own compaction takes them as its custom
 * instructions, so both summaries keep what the tenant asked for.
 */

import { type Policy, policySchema, resolvePolicy } from '../../../shared/policy/policy.ts';
import type { Strategy } from '../../../shared/strategies/index.ts';
import type { Db } from '../../postgres/db.ts';
import { readPolicies } from '../../postgres/policies.ts';

/** The instructions of `strategy`'s summary, or null when it writes none or has none. Pure. */
export function summaryInstructionsOf(strategy: Strategy): string | null {
  if (strategy.type === 'summarize') return strategy.instructions ?? null;
  if (strategy.type === 'auto') return strategy.summarize?.instructions ?? null;
  return null;
}

/**
 * The summary instructions in force for `agentId` (or the tenant's own sessions when null), read
 * from the stored policies; null when the policy in force gives none.
 * @throws {Error} naming the tenant and agent when a stored policy does not parse (a row written by
 *   hand): compactor's workers would refuse it too.
 */
export async function policyInstructions(
  db: Db,
  tenantId: string,
  agentId: string | null,
): Promise<string | null> {
  const stored = await readPolicies(db, tenantId, agentId);
  const parse = (value: unknown, whose: string): Policy | null => {
    if (value === null) return null;
    const parsed = policySchema.safeParse(value);
    if (!parsed.success) {
      throw new Error(`the stored policy of ${whose} does not parse: ${parsed.error.issues[0]?.message}`);
    }
    return parsed.data;
  };
  const policy = resolvePolicy(
    undefined,
    parse(stored.agent, `agent "${agentId}" of tenant "${tenantId}"`),
    parse(stored.tenant, `tenant "${tenantId}"`),
  );
  return summaryInstructionsOf(policy.strategy);
}
