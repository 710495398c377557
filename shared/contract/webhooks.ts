/**
 * What a tenant's webhook is: the rules of its URL and secret, how a secret is made, and the BullMQ
 * job that carries one delivery. The signature scheme itself is in producer/webhook-signature.ts,
 * where receivers import it from.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** BullMQ queue of webhook deliveries (same Redis and key prefix as `compaction`). */
export const WEBHOOKS_QUEUE = 'webhooks';
/** BullMQ job name of one delivery of `session.compacted`. */
export const WEBHOOK_DELIVERY = 'session.compacted';
/** Attempts of one delivery: the first and 7 retries with exponential backoff. */
export const WEBHOOK_ATTEMPTS = 8;

/**
 * A webhook URL: http:// or https://, at most 2,000 characters, without credentials (fetch refuses
 * them; put a token in the path or query instead).
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

/** A signing secret: 16-1,000 printable ASCII characters without spaces. */
export const webhookSecretSchema = z
  .string()
  .min(16, 'must be at least 16 characters')
  .max(1_000, 'must be at most 1,000 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** A new signing secret: `whsec_` and 32 random bytes in base64url (256 bits). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * One delivery job (job id = `eventId`, so a second enqueue of the same event is a no-op). `body`
 * is the exact text POSTed and signed on every attempt.
 */
export const webhookJobSchema = z
  .object({
    tenantId: z.string().min(1),
    /** The compaction id: the `Compactor-Event-Id` header. */
    eventId: z.uuid(),
    /** The `session.compacted` event as JSON text. */
    body: z.string(),
  })
  .strict();

export type WebhookJob = z.infer<typeof webhookJobSchema>;
