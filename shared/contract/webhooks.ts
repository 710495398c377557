/**
 * What a tenant's webhook is: the rules of its URL and secret, how a secret is made, the id a
 * delivery carries, the BullMQ job that carries one delivery, and the classes of a failed attempt
 * a tenant is told. The signature scheme itself is in producer/webhook-signature.ts, where
 * receivers import it from; which addresses a URL may reach is worker/outbound/webhook-targets.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/** BullMQ queue of webhook deliveries (same Redis and key prefix as `compaction`). */
export const WEBHOOKS_QUEUE = 'webhooks';
/** BullMQ job name of one delivery of `session.compacted`. */
export const WEBHOOK_DELIVERY = 'session.compacted';
/** Attempts of one delivery: the first and 7 retries with exponential backoff. */
export const WEBHOOK_ATTEMPTS = 8;

/**
 * A webhook URL as text: http:// or https://, at most 2,000 characters, without credentials (put
 * a token in the path or query instead). Which schemes and hosts are allowed is the address
 * policy's to say (worker/outbound/webhook-targets.ts: https only by default, no internal
 * addresses).
 */
export const webhookUrlSchema = z
  .string()
  .max(2_000, 'must be at most 2,000 characters')
  .refine(
    (v) => {
      try {
        const url = new URL(v);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { message: 'must be an http:// or https:// URL' },
  )
  .refine((v) => !URL.canParse(v) || (new URL(v).username === '' && new URL(v).password === ''), {
    message: 'must not hold a user name or password',
  });

/** The prefix of a Standard Webhooks secret. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * A signing secret as Standard Webhooks spells it: `whsec_` and the key, 24 to 64 random bytes, in
 * base64 (the standard alphabet, or base64url). Every Standard Webhooks library takes it as is.
 */
export const webhookSecretSchema = z
  .string()
  .max(200, 'must be at most 200 characters')
  .refine((v) => v.startsWith(WEBHOOK_SECRET_PREFIX), {
    message: 'must start with whsec_ (a Standard Webhooks secret: whsec_ and 24-64 bytes in base64)',
  })
  .refine((v) => !v.startsWith(WEBHOOK_SECRET_PREFIX) || secretKeyBytes(v) !== null, {
    message: 'must be whsec_ and 24-64 bytes in base64 (generate one with: openssl rand -base64 32)',
  });

/** The key bytes of a `whsec_<base64>` secret of 24 to 64 bytes, or null when it is not one. */
function secretKeyBytes(secret: string): number | null {
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) return null;
  const bytes = Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64').length;
  return bytes >= 24 && bytes <= 64 ? bytes : null;
}

/** A new signing secret: `whsec_` and 32 random bytes in standard base64 (256 bits). */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The `webhook-id` of the delivery of compaction `compactionId` of tenant `tenantId`: `msg_` and
 * the first 24 bytes of SHA-256 of both, in base64url. The same on every attempt (receivers dedupe
 * by it), and never the same for two tenants even if they could choose their ids.
 */
export function webhookMessageId(tenantId: string, compactionId: string): string {
  const digest = createHash('sha256').update(`${tenantId}\n${compactionId}`, 'utf8').digest();
  return `msg_${digest.subarray(0, 24).toString('base64url')}`;
}

/**
 * One delivery job (job id = `eventId`, so a second enqueue of the same event is a no-op). `body`
 * is the exact text POSTed and signed on every attempt.
 */
export const webhookJobSchema = z
  .object({
    tenantId: z.string().min(1),
    /** The compaction id (the `webhook-id` header is derived from it and the tenant). */
    eventId: z.uuid(),
    /** The `session.compacted` event as JSON text. */
    body: z.string(),
  })
  .strict();

export type WebhookJob = z.infer<typeof webhookJobSchema>;

/**
 * Why an attempt got no response, as a tenant is told it: the class alone, never the address, port
 * or system error (those stay in the operator's record: the `error` column begins with the class,
 * then `: ` and the detail).
 */
export const DELIVERY_FAILURES = {
  timedOut: 'timed out',
  connectionFailed: 'connection failed',
  refusedByPolicy: 'refused by address policy',
} as const;

/** One of {@link DELIVERY_FAILURES}. */
export type DeliveryFailure = (typeof DELIVERY_FAILURES)[keyof typeof DELIVERY_FAILURES];

/**
 * What a tenant sees of a failed attempt: `HTTP <status>` when the receiver answered, else the class
 * of the failure (`timed out`, `connection failed`, `refused by address policy`); null when it was
 * delivered. `error` is the operator's record (see {@link DELIVERY_FAILURES}).
 */
export function tenantDeliveryError(attempt: {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
}): string | null {
  if (attempt.delivered) return null;
  if (attempt.statusCode !== null) return `HTTP ${attempt.statusCode}`;
  const failure = Object.values(DELIVERY_FAILURES).find(
    (f) => attempt.error === f || attempt.error?.startsWith(`${f}: `),
  );
  return failure ?? 'delivery failed';
}
