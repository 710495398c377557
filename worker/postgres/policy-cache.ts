/**
 * Policies by tenant and agent, cached in the process.
 *
 * A sweep reads them through a {@link PolicyCache} of its own: one query per (tenant, agent) per
 * sweep, however many sessions share them. A worker's jobs read them through one long-lived cache
 * kept current by `LISTEN`: every policy write (worker/postgres/policies.ts) sends a `NOTIFY` on
 * {@link POLICY_CHANGES_CHANNEL} in its own transaction, which Postgres delivers on commit, and the
 * cache drops what the change touched, so the next job reads the new policy. Notifications sent
 * while the listening connection was down are lost, so the cache is emptied each time it is
 * (re)established; entries also expire after {@link POLICY_MAX_AGE_MS}, which bounds how stale a
 * policy can be if a notification is missed for any other reason (a policy written by hand in SQL, without the notify).
 */
import type postgres from 'postgres';
import type { Db } from '../../producer/postgres/db.ts';
import { POLICY_CHANGES_CHANNEL, type Policies, type PolicySource, policiesFor } from './policies.ts';

/** Age after which an entry is read again, ms. */
const POLICY_MAX_AGE_MS = 60_000;
/** Entries kept before the cache is emptied. */
const MAX_ENTRIES = 10_000;

/** Options of {@link PolicyCache}. */
export interface PolicyCacheOptions {
  /**
   * The pool to `LISTEN` on (its own dedicated connection, which postgres.js re-establishes after a
   * loss). Absent: nothing invalidates the cache but {@link POLICY_MAX_AGE_MS} and
   * {@link PolicyCache.clear}, as fits a cache that lives for one sweep.
   */
  listen?: postgres.Sql;
  /**
   * Called when the listening connection could not be established; the cache then stays unused
   * (every read goes to Postgres) and `LISTEN` is not tried again.
   */
  onListenError?: (error: unknown) => void;
}

interface Entry {
  policies: Policies;
  at: number;
}

/** The agent's and its tenant's policies by (tenant, agent), from Postgres at most once per entry. */
export class PolicyCache implements PolicySource {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a read that began before one must not fill the cache. */
  private generation = 0;
  /**
   * Whether notifications reach this cache: always true without `listen`; with it, from the first
   * `LISTEN` on. Until then reads go to Postgres and fill nothing.
   */
  private listening: boolean;
  private listenStarted = false;

  constructor(
    private readonly db: Db,
    private readonly options: PolicyCacheOptions = {},
  ) {
    this.listening = options.listen === undefined;
  }

  /**
   * The agent's (null: none) and the tenant's policies, from the cache or Postgres. The first call
   * of a listening cache starts its `LISTEN`.
   */
  async get(tenantId: string, agentId: string | null): Promise<Policies> {
    if (!this.listenStarted && this.options.listen) this.startListening(this.options.listen);
    const key = keyOf(tenantId, agentId);
    const hit = this.entries.get(key);
    if (hit && performance.now() - hit.at < POLICY_MAX_AGE_MS) return hit.policies;
    const generation = this.generation;
    const found = await policiesFor(this.db, tenantId, agentId);
    if (this.listening && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { policies: found, at: performance.now() });
    }
    return found;
  }

  /**
   * Drops what a change of the policy of `tenantId` touched: with `agentId` null (the tenant's own
   * policy) every entry of the tenant, else the agent's.
   */
  invalidate(tenantId: string, agentId: string | null): void {
    this.generation += 1;
    if (agentId !== null) {
      this.entries.delete(keyOf(tenantId, agentId));
      return;
    }
    const prefix = keyOf(tenantId, '');
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }

  /** Drops every entry. */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /** Entries held now (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  private startListening(sql: postgres.Sql): void {
    this.listenStarted = true;
    sql
      .listen(
        POLICY_CHANGES_CHANNEL,
        (payload) => this.onNotification(payload),
        // Called on every (re)connection: what was sent meanwhile is lost.
        () => {
          this.clear();
          this.listening = true;
        },
      )
      // The pool's end stops listening; a failed LISTEN is not tried again on every read.
      .catch((error: unknown) => this.options.onListenError?.(error));
  }

  private onNotification(payload: string): void {
    const change = parseChange(payload);
    if (change) this.invalidate(change.tenantId, change.agentId);
    else this.clear();
  }
}

/** The key of a (tenant, agent); the tenant's own entries all start with `keyOf(tenant, '')`. */
function keyOf(tenantId: string, agentId: string | null): string {
  return `${tenantId}\u0000${agentId ?? ''}`;
}

/** A notification's change, or null when the payload is not one (the cache then empties). */
function parseChange(payload: string): { tenantId: string; agentId: string | null } | null {
  try {
    const value = JSON.parse(payload) as { tenantId?: unknown; agentId?: unknown };
    if (typeof value.tenantId !== 'string') return null;
    if (value.agentId !== null && typeof value.agentId !== 'string') return null;
    return { tenantId: value.tenantId, agentId: value.agentId };
  } catch {
    return null;
  }
}
