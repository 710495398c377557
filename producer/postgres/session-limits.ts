/**
 * The session-size limits of a tenant's own policy (shared/policy/limits.ts), read in the
 * statement or the transaction that writes, so every writer keeps them (producer/limits.ts).
 */

import { DEFAULT_LIMITS, type SessionLimits } from '../../shared/policy/limits.ts';
import type { Tx } from './db.ts';
import { type SQL, sql } from './orm.ts';

/**
 * One limit of the tenant's own policy, or `fallback` when it sets none, as an SQL expression: a
 * primary-key lookup of `compaction_policies`, evaluated in the statement that writes.
 */
export function limitSql(tenantId: string, field: keyof SessionLimits, fallback: number): SQL {
  return sql`coalesce((select (p.policy->'limits'->>${field})::bigint from compaction_policies p
    where p.tenant_id = ${tenantId} and p.agent_id is null), ${fallback}::bigint)`;
}

/** The tenant's limits an append checks, now: its policy's, each field over `defaults`. */
export async function sessionLimitsOf(
  tx: Pick<Tx, 'execute'>,
  tenantId: string,
  defaults: SessionLimits = DEFAULT_LIMITS,
): Promise<SessionLimits> {
  const rows = await tx.execute<{ messages: string; tokens: string; context: string }>(sql`
    select ${limitSql(tenantId, 'maxSessionMessages', defaults.maxSessionMessages)} as messages,
      ${limitSql(tenantId, 'maxSessionTokens', defaults.maxSessionTokens)} as tokens,
      ${limitSql(tenantId, 'maxContextTokens', defaults.maxContextTokens)} as context`);
  const row = rows[0];
  return {
    maxSessionMessages: Number(row?.messages ?? defaults.maxSessionMessages),
    maxSessionTokens: Number(row?.tokens ?? defaults.maxSessionTokens),
    maxContextTokens: Number(row?.context ?? defaults.maxContextTokens),
  };
}
