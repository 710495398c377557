/**
 * The compaction policies a client reads (the worker writes them: worker/postgres/policies.ts):
 * the tenant's own and one agent's, as stored, for the precedence rule of shared/policy/policy.ts.
 */

import type { Db } from './db.ts';
import { and, eq, isNull, or } from './orm.ts';
import { compactionPolicies } from './schema.ts';

/**
 * The stored policies of a tenant (`tenant`) and, when `agentId` is given, of that agent (`agent`);
 * null where none is set. Values are the stored JSON, not yet validated.
 */
export async function readPolicies(
  db: Db,
  tenantId: string,
  agentId: string | null,
): Promise<{ tenant: unknown; agent: unknown }> {
  const rows = await db
    .select({ agentId: compactionPolicies.agentId, policy: compactionPolicies.policy })
    .from(compactionPolicies)
    .where(
      and(
        eq(compactionPolicies.tenantId, tenantId),
        agentId === null
          ? isNull(compactionPolicies.agentId)
          : or(isNull(compactionPolicies.agentId), eq(compactionPolicies.agentId, agentId)),
      ),
    );
  return {
    tenant: rows.find((r) => r.agentId === null)?.policy ?? null,
    agent: agentId === null ? null : (rows.find((r) => r.agentId === agentId)?.policy ?? null),
  };
}
