/**
 * The `compaction_policies` table: set, get, list and delete policies, validated with the zod schema of
 * shared/policy/policy.ts on write (bad input changes nothing), and the lookup the pipeline uses.
 * Every write also sends a `NOTIFY` on {@link POLICY_CHANGES_CHANNEL} in its transaction, delivered
 * on commit, so processes that cache policies (worker/postgres/policy-cache.ts) drop the old one.
 */

import type { Db, Tx } from '../../producer/postgres/db.ts';
import { and, asc, eq, isNull, or, sql } from '../../producer/postgres/orm.ts';
import { compactionPolicies } from '../../producer/postgres/schema.ts';
import { InvalidInputError, printable } from '../../shared/contract/errors.ts';
import { type Policy, policySchema } from '../../shared/policy/policy.ts';
import { describeZodError, idSchema } from '../../shared/protocol/events.ts';

/**
 * The channel of policy changes. Each notification's payload is the JSON `{"tenantId", "agentId"}`
 * of the policy written (`agentId` null: the tenant's own policy). Channels are per database, so
 * installs in other schemas of the same database hear each other's changes: a listener may only
 * drop more than it needs to, never miss one.
 */
export const POLICY_CHANGES_CHANNEL = 'compactor_policy_changes';

/** An agent's and its tenant's policies (either may be null). */
export interface Policies {
  agent: Policy | null;
  tenant: Policy | null;
}

/** Where the pipeline's reads take policies from: Postgres itself, or a cache of it. */
export interface PolicySource {
  /** The agent's (null: no agent) and the tenant's policies. */
  get(tenantId: string, agentId: string | null): Promise<Policies>;
}

/** A stored policy and whom it applies to. `agentId` null: the tenant's own policy. */
export interface PolicyRow {
  tenantId: string;
  agentId: string | null;
  policy: Policy;
  updatedAt: Date;
}

/**
 * Validates `input` and stores it as the policy of the tenant (agentId null) or of one agent.
 * @returns the policy as stored (defaults filled in).
 * @throws {InvalidInputError} naming the bad field; nothing is written.
 */
export async function setPolicy(
  db: Db,
  tenantId: string,
  agentId: string | null,
  input: unknown,
): Promise<PolicyRow> {
  checkId('tenant', tenantId);
  if (agentId !== null) checkId('agent', agentId);
  const parsed = policySchema.safeParse(input);
  if (!parsed.success)
    throw new InvalidInputError(`invalid policy: ${describeZodError(parsed.error, 'policy')}`);
  if (agentId !== null && parsed.data.limits !== undefined)
    throw new InvalidInputError(
      "invalid policy: policy.limits: limits are per tenant; set them on the tenant's own policy (without an agent)",
    );
  const [row] = await db.transaction(async (tx) => {
    const written = await tx
      .insert(compactionPolicies)
      .values({ tenantId, agentId, policy: parsed.data })
      .onConflictDoUpdate({
        target: [compactionPolicies.tenantId, compactionPolicies.agentId],
        set: { policy: parsed.data, updatedAt: sql`now()` },
      })
      .returning();
    await notifyChange(tx, tenantId, agentId);
    return written;
  });
  return toRow(row as typeof compactionPolicies.$inferSelect);
}

/** The tenant's (agentId null) or one agent's policy, or null when none is set. */
export async function getPolicy(db: Db, tenantId: string, agentId: string | null): Promise<PolicyRow | null> {
  const [row] = await db
    .select()
    .from(compactionPolicies)
    .where(
      and(
        eq(compactionPolicies.tenantId, tenantId),
        agentId === null ? isNull(compactionPolicies.agentId) : eq(compactionPolicies.agentId, agentId),
      ),
    );
  return row ? toRow(row) : null;
}

/**
 * Deletes the tenant's (agentId null) or one agent's policy; the sessions it governed then follow
 * the next policy in precedence (the tenant's, then the built-in default).
 * @returns the deleted policy, or null when none was set (nothing changed).
 */
export async function deletePolicy(
  db: Db,
  tenantId: string,
  agentId: string | null,
): Promise<PolicyRow | null> {
  const [row] = await db.transaction(async (tx) => {
    const deleted = await tx
      .delete(compactionPolicies)
      .where(
        and(
          eq(compactionPolicies.tenantId, tenantId),
          agentId === null ? isNull(compactionPolicies.agentId) : eq(compactionPolicies.agentId, agentId),
        ),
      )
      .returning();
    if (deleted.length > 0) await notifyChange(tx, tenantId, agentId);
    return deleted;
  });
  return row ? toRow(row) : null;
}

/** Every policy of a tenant: its own first, then its agents' by id. */
export async function listPolicies(db: Db, tenantId: string): Promise<PolicyRow[]> {
  const rows = await db
    .select()
    .from(compactionPolicies)
    .where(eq(compactionPolicies.tenantId, tenantId))
    .orderBy(sql`${compactionPolicies.agentId} nulls first`, asc(compactionPolicies.agentId));
  return rows.map(toRow);
}

/** Tells listeners, when `tx` commits, that the policy of (tenant, agent) changed. */
async function notifyChange(tx: Tx, tenantId: string, agentId: string | null): Promise<void> {
  await tx.execute(
    sql`select pg_notify(${POLICY_CHANGES_CHANNEL}, ${JSON.stringify({ tenantId, agentId })})`,
  );
}

/** The agent's and the tenant's policies in one query (either may be null). */
export async function policiesFor(db: Db, tenantId: string, agentId: string | null): Promise<Policies> {
  const rows = await db
    .select()
    .from(compactionPolicies)
    .where(
      and(
        eq(compactionPolicies.tenantId, tenantId),
        agentId === null
          ? isNull(compactionPolicies.agentId)
          : or(isNull(compactionPolicies.agentId), eq(compactionPolicies.agentId, agentId)),
      ),
    );
  const find = (agent: boolean) => rows.find((r) => (r.agentId !== null) === agent);
  const agentRow = agentId === null ? undefined : find(true);
  const tenantRow = find(false);
  return {
    agent: agentRow ? policySchema.parse(agentRow.policy) : null,
    tenant: tenantRow ? policySchema.parse(tenantRow.policy) : null,
  };
}

function toRow(row: typeof compactionPolicies.$inferSelect): PolicyRow {
  return {
    tenantId: row.tenantId,
    agentId: row.agentId,
    policy: policySchema.parse(row.policy),
    updatedAt: row.updatedAt,
  };
}

function checkId(what: string, id: string): void {
  const valid = idSchema.safeParse(id);
  if (!valid.success)
    throw new InvalidInputError(`${what} id "${printable(id)}": ${valid.error.issues[0]?.message}`);
}
