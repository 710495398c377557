/**
 * Whether a tenant has an enabled webhook, asked after every applied compaction: cached per tenant
 * and kept true by Postgres `LISTEN`, so the hot path does not pay a query per compaction.
 *
 * Every change of a webhook notifies {@link WEBHOOKS_CHANNEL} with the tenant id in the writing
 * statement itself (delivered when it commits); a notification drops that tenant's entry. When the
 * listening connection (re)connects, notifications may have been missed, so the whole cache is
 * dropped. A lookup that raced a notification for its tenant is not cached. Until the listener is
 * up (or if `LISTEN` fails), every call reads Postgres.
 */
import type postgres from 'postgres';
import type { Db } from '../../producer/postgres/db.ts';
import { hasEnabledWebhook, WEBHOOKS_CHANNEL } from './webhooks.ts';

export interface WebhookPresence {
  /** Whether `tenantId` has an enabled webhook now. @throws when Postgres cannot be reached. */
  has(tenantId: string): Promise<boolean>;
  /** Stops listening (the pool itself stays open). */
  close(): Promise<void>;
}

/** A cache over `db`, listening on `sql` (postgres.js holds one dedicated connection for it). */
export function watchWebhookPresence(db: Db, sql: postgres.Sql): WebhookPresence {
  const cache = new Map<string, boolean>();
  const changes = new Map<string, number>();
  let listening: Promise<{ unlisten(): Promise<void> } | null> | undefined;
  let live = false;
  const listen = () => {
    listening ??= sql
      .listen(
        WEBHOOKS_CHANNEL,
        (tenantId) => {
          changes.set(tenantId, (changes.get(tenantId) ?? 0) + 1);
          cache.delete(tenantId);
        },
        () => {
          // First listen, or a reconnect after which notifications may have been lost.
          cache.clear();
          live = true;
        },
      )
      .catch(() => null);
    return listening;
  };
  return {
    async has(tenantId) {
      const cached = cache.get(tenantId);
      if (cached !== undefined) return cached;
      await listen();
      const before = changes.get(tenantId) ?? 0;
      const found = await hasEnabledWebhook(db, tenantId);
      if (live && (changes.get(tenantId) ?? 0) === before) cache.set(tenantId, found);
      return found;
    },
    async close() {
      const handle = await listening;
      live = false;
      cache.clear();
      await handle?.unlisten().catch(() => {});
    },
  };
}
