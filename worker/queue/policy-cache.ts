/**
 * The policies a sweep reads, by tenant and agent: one query per (tenant, agent) per sweep, however
 * many sessions share them.
 */
import type { Policy } from '../../shared/policy/policy.ts';
import type { Db } from '../../shared/postgres/db.ts';
import { policiesFor } from '../postgres/policies.ts';

/** An agent's and its tenant's policies (either may be null). */
export interface Policies {
  agent: Policy | null;
  tenant: Policy | null;
}

/** Policies by tenant and agent, read once per sweep (bounded: evicts all past 10,000 entries). */
export class PolicyCache {
  private readonly entries = new Map<string, Policies>();
  constructor(private readonly db: Db) {}

  /** The agent's (null: none) and the tenant's policies, from the cache or Postgres. */
  async get(tenantId: string, agentId: string | null): Promise<Policies> {
    const key = `${tenantId}\u0000${agentId ?? ''}`;
    const hit = this.entries.get(key);
    if (hit) return hit;
    if (this.entries.size >= 10_000) this.entries.clear();
    const found = await policiesFor(this.db, tenantId, agentId);
    this.entries.set(key, found);
    return found;
  }
}
