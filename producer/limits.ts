/**
 * The session-size limits of a tenant (shared/policy/limits.ts) as the writes of producer/sessions.ts
 * enforce them: read from the tenant's own policy in the writing transaction, so every writer (the
 * HTTP API, an agent service calling the library, the CLI's import) keeps them.
 */
import { type SQL, sql } from 'drizzle-orm';
import { SessionLimitError } from '../shared/contract/errors.ts';
import { DEFAULT_LIMITS, type SessionLimits } from '../shared/policy/limits.ts';
import type { Db } from './postgres/db.ts';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * One limit of the tenant's own policy, or `fallback` when it sets none, as an SQL expression: a
 * primary-key lookup of `compaction_policies`, evaluated in the statement that writes.
 */
export function limitSql(tenantId: string, field: keyof SessionLimits, fallback: number): SQL {
  return sql`coalesce((select (p.policy->'limits'->>${field})::bigint from compaction_policies p
    where p.tenant_id = ${tenantId} and p.agent_id is null), ${fallback}::bigint)`;
}

/** The tenant's session limits now: its policy's, each field over `defaults`. */
export async function sessionLimitsOf(
  tx: Pick<Tx, 'execute'>,
  tenantId: string,
  defaults: SessionLimits = DEFAULT_LIMITS,
): Promise<SessionLimits> {
  const rows = await tx.execute<{ messages: string; tokens: string }>(sql`
    select ${limitSql(tenantId, 'maxSessionMessages', defaults.maxSessionMessages)} as messages,
      ${limitSql(tenantId, 'maxSessionTokens', defaults.maxSessionTokens)} as tokens`);
  const row = rows[0];
  return {
    maxSessionMessages: Number(row?.messages ?? defaults.maxSessionMessages),
    maxSessionTokens: Number(row?.tokens ?? defaults.maxSessionTokens),
  };
}

/**
 * The limit a session holding `current` would pass by taking `adding`, or null when it fits.
 * Messages are checked first.
 */
export function limitPassed(
  sessionId: string,
  limits: SessionLimits,
  current: { messages: number; tokens: number },
  adding: { messages: number; tokens: number },
): SessionLimitError | null {
  const counts = [
    ['maxSessionMessages', current.messages, adding.messages],
    ['maxSessionTokens', current.tokens, adding.tokens],
  ] as const;
  for (const [limit, now, more] of counts) {
    if (now + more > limits[limit]) return new SessionLimitError(sessionId, limit, limits[limit], now, more);
  }
  return null;
}
