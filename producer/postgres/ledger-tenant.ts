/**
 * How the ledger's lookups of one session name its tenant. `compactions` is indexed by
 * `(tenant_id, session_id, created_at)` for them, beside the tenant's unique key and id; compared
 * with a parameter, `tenant_id` is weighed by what the statistics counted of that tenant, and for a
 * tenant they saw none of (new since the last ANALYZE: a small deployment that adds one) that is
 * none at all. Every index that starts with `tenant_id` then looks as cheap as the one that also
 * names the session, and the planner may take any of them and filter every ledger row of the
 * tenant, on each lookup, until the next ANALYZE. Compared with a one-row subquery instead, the
 * tenant is weighed as any tenant (one in the column's distinct values), and the session's index is
 * the cheap one. Only for `compactions`, which is not partitioned: a lookup of `messages` or
 * `archived_messages` needs the parameter itself for Postgres to prune the other tenants'
 * partitions. On Citus, which routes a statement to one shard by a plain value of the distribution
 * column, this would return the parameter itself (docs/guide/distributed-postgres.md). Pure.
 */
import { type SQL, sql } from './orm.ts';

/** `tenantId` as a one-row subquery, `(select $n::text)`, for a ledger lookup (see the file's comment). */
export function ledgerTenant(tenantId: string): SQL {
  return sql`(select ${tenantId}::text)`;
}
