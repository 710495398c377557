/**
 * The `webhooks` and `webhook_deliveries` tables: a tenant's webhook (set, read, removed; its URL
 * and secret validated on write, bad input changing nothing) and the log of every delivery attempt.
 * The secret leaves this module only for signing ({@link webhookForDelivery}) and, once, when it
 * was generated ({@link setWebhook}).
 */

import type { z } from 'zod';
import { type Db, executePrepared } from '../../producer/postgres/db.ts';
import { and, desc, eq, sql } from '../../producer/postgres/orm.ts';
import { type WebhookDeliveryRow, webhookDeliveries, webhooks } from '../../producer/postgres/schema.ts';
import { InvalidInputError, printable } from '../../shared/contract/errors.ts';
import { newWebhookSecret, webhookSecretSchema, webhookUrlSchema } from '../../shared/contract/webhooks.ts';
import { describeZodError, idSchema } from '../../shared/protocol/events.ts';
import {
  assertWebhookTarget,
  type HostLookup,
  STRICT_WEBHOOK_TARGETS,
  type WebhookTargetPolicy,
} from '../outbound/webhook-targets.ts';

/** A tenant's webhook as shown to people: everything but the secret. */
export interface Webhook {
  tenantId: string;
  url: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What {@link setWebhook} stores. */
export interface WebhookInput {
  url: string;
  /** The signing secret; absent: a new webhook gets a generated one, an existing one keeps its own. */
  secret?: string | undefined;
  /** Default true. */
  enabled?: boolean | undefined;
}

/**
 * The `NOTIFY` channel every change of a tenant's webhook is told on (the payload is the tenant id),
 * so workers caching whether a tenant has one (webhook-presence.ts) drop what they hold.
 */
export const WEBHOOKS_CHANNEL = 'compactor_webhooks';

/** Where {@link setWebhook} lets a URL point. */
export interface WebhookTargetOptions {
  /** The operator's address policy; default {@link STRICT_WEBHOOK_TARGETS} (public https only). */
  targets?: WebhookTargetPolicy;
  /** Resolves host names for the check (tests hand in their own); default `dns.lookup`. */
  lookup?: HostLookup;
}

/**
 * Stores the tenant's webhook (one per tenant: a second call replaces the URL, and the secret when
 * one is given). The URL must pass the address policy (worker/outbound/webhook-targets.ts): https,
 * no internal address or name, nor a name resolving to one, unless the operator allows it.
 * @returns the webhook, and the secret when it was generated now (to be shown once), else null.
 * @throws {InvalidInputError} naming the bad tenant id, URL or secret, or the address policy's
 *   refusal (`WebhookTargetError`); nothing is written.
 */
export async function setWebhook(
  db: Db,
  tenantId: string,
  input: WebhookInput,
  options: WebhookTargetOptions = {},
): Promise<{ webhook: Webhook; generatedSecret: string | null }> {
  checkTenant(tenantId);
  const url = valid(webhookUrlSchema, input.url, 'url');
  const given = input.secret === undefined ? null : valid(webhookSecretSchema, input.secret, 'secret');
  await assertWebhookTarget(url, options.targets ?? STRICT_WEBHOOK_TARGETS, options.lookup);
  const generated = newWebhookSecret();
  const [row] = await db.execute<{ inserted: boolean } & Record<string, unknown>>(sql`
    with up as (
      insert into webhooks (tenant_id, url, secret, enabled)
      values (${tenantId}, ${url}, ${given ?? generated}, ${input.enabled ?? true})
      on conflict (tenant_id) do update set
        url = excluded.url,
        secret = coalesce(${given}::text, webhooks.secret),
        enabled = excluded.enabled,
        updated_at = now()
      returning tenant_id, url, enabled, created_at, updated_at, (xmax = 0) as inserted
    )
    select up.*, pg_notify(${WEBHOOKS_CHANNEL}, ${tenantId})::text as notified from up`);
  if (!row) throw new Error('setWebhook: the upsert returned no row');
  return { webhook: webhookOf(row), generatedSecret: row.inserted && given === null ? generated : null };
}

/** The tenant's webhook (without its secret), or null when none is set. */
export async function getWebhook(db: Db, tenantId: string): Promise<Webhook | null> {
  const [row] = await db
    .select({
      tenantId: webhooks.tenantId,
      url: webhooks.url,
      enabled: webhooks.enabled,
      createdAt: webhooks.createdAt,
      updatedAt: webhooks.updatedAt,
    })
    .from(webhooks)
    .where(eq(webhooks.tenantId, tenantId));
  return row ?? null;
}

/**
 * Removes the tenant's webhook; deliveries already enqueued then find none and end without a
 * request. Its delivery log stays.
 * @returns the removed webhook, or null when none was set (nothing changed).
 */
export async function removeWebhook(db: Db, tenantId: string): Promise<Webhook | null> {
  const [row] = await db.execute<Record<string, unknown>>(sql`
    with gone as (
      delete from webhooks where tenant_id = ${tenantId}
      returning tenant_id, url, enabled, created_at, updated_at
    )
    select gone.*, pg_notify(${WEBHOOKS_CHANNEL}, ${tenantId})::text as notified from gone`);
  return row ? webhookOf(row) : null;
}

/** Whether the tenant has an enabled webhook (one primary-key lookup per applied compaction). */
export async function hasEnabledWebhook(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db
    .select({ enabled: webhooks.enabled })
    .from(webhooks)
    .where(eq(webhooks.tenantId, tenantId));
  return row?.enabled === true;
}

/**
 * The checkpoint of a session (the one an applied compaction's history continues in), for its
 * `session.compacted` event; null when the session has none. One prepared statement.
 */
export async function checkpointOf(db: Db, tenantId: string, sessionId: string): Promise<unknown> {
  const [row] = await executePrepared<{ checkpoint: unknown }>(
    db,
    sql`select checkpoint from sessions where tenant_id = ${tenantId} and id = ${sessionId}`,
  );
  return row?.checkpoint ?? null;
}

/** Where and how to deliver now: the URL and the secret, or null when no enabled webhook is set. */
export async function webhookForDelivery(
  db: Db,
  tenantId: string,
): Promise<{ url: string; secret: string } | null> {
  const [row] = await db
    .select({ url: webhooks.url, secret: webhooks.secret, enabled: webhooks.enabled })
    .from(webhooks)
    .where(eq(webhooks.tenantId, tenantId));
  return row?.enabled ? { url: row.url, secret: row.secret } : null;
}

/** One delivery attempt, as {@link recordDelivery} stores it. */
export type DeliveryRecord = Omit<WebhookDeliveryRow, 'id' | 'attemptedAt'>;

/** Appends one attempt to the delivery log. */
export async function recordDelivery(db: Db, record: DeliveryRecord): Promise<void> {
  await db.insert(webhookDeliveries).values(record);
}

/**
 * The tenant's delivery attempts, newest first (at most `limit`, default 20); with `eventId`, only
 * that event's.
 */
export async function deliveriesOf(
  db: Db,
  tenantId: string,
  options: { eventId?: string; limit?: number } = {},
): Promise<WebhookDeliveryRow[]> {
  return db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.tenantId, tenantId),
        options.eventId === undefined ? undefined : eq(webhookDeliveries.eventId, options.eventId),
      ),
    )
    .orderBy(desc(webhookDeliveries.attemptedAt), desc(webhookDeliveries.attempt))
    .limit(options.limit ?? 20);
}

function webhookOf(row: Record<string, unknown>): Webhook {
  return {
    tenantId: row.tenant_id as string,
    url: row.url as string,
    enabled: row.enabled as boolean,
    createdAt: new Date(row.created_at as string | Date),
    updatedAt: new Date(row.updated_at as string | Date),
  };
}

/** `value` as `schema` reads it. @throws {InvalidInputError} naming `field` and what is wrong. */
function valid<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new InvalidInputError(`invalid webhook: ${describeZodError(parsed.error, field)}`);
  return parsed.data;
}

function checkTenant(tenantId: string): void {
  const valid = idSchema.safeParse(tenantId);
  if (!valid.success)
    throw new InvalidInputError(`tenant id "${printable(tenantId)}": ${valid.error.issues[0]?.message}`);
}
