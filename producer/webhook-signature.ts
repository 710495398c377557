/**
 * Webhook signatures, as the Standard Webhooks specification (standardwebhooks.com) defines them:
 * each delivery carries
 *
 *     webhook-id: msg_...                   the delivery's id: the same on every retry, dedupe by it
 *     webhook-timestamp: <unix seconds>
 *     webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">
 *
 * keyed with the secret's bytes: a `whsec_<base64>` secret is the base64 after the prefix (the
 * standard alphabet or base64url); any other (older, chosen) secret is its UTF-8 bytes, which
 * Standard Webhooks libraries take as a raw key. The id is signed, so a delivery cannot be replayed
 * under another id. A receiver verifies the raw body as received (before any JSON parsing) with
 * {@link verifyWebhookSignature} or any Standard Webhooks library, which also refuse a timestamp
 * outside a tolerance (a replay). Several space-separated signatures may appear; one matching is
 * enough. compactor signs with {@link webhookHeaders}, so both sides share this one file. It imports
 * nothing but node:crypto: a receiver can import (or copy) it without the rest of compactor.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the delivery's id (receivers dedupe by it). */
export const WEBHOOK_ID_HEADER = 'webhook-id';
/** The header that carries the signature's time, unix seconds. */
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
/** The header that carries the signatures, `v1,<base64>` separated by spaces. */
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
/** Default tolerance between the signature's timestamp and the receiver's clock, seconds. */
export const DEFAULT_TOLERANCE_S = 300;

/** A body as received: text (UTF-8) or bytes. */
export type RawBody = string | Uint8Array;

/**
 * A delivery's headers: a fetch `Headers`, or a record such as node's `request.headers` (names in any
 * case; a repeated header's first value counts).
 */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

/**
 * The HMAC key of `secret`: the bytes of the base64 after `whsec_`, or the UTF-8 bytes of any other
 * secret.
 */
export function webhookKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : null;
  if (encoded !== null && /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) {
    return Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/**
 * The base64 HMAC-SHA256 of `"<messageId>.<timestampS>.<rawBody>"` keyed with {@link webhookKey}.
 * @param timestampS unix time, seconds.
 */
export function computeWebhookSignature(
  messageId: string,
  timestampS: number,
  rawBody: RawBody,
  secret: string,
): string {
  return createHmac('sha256', webhookKey(secret))
    .update(`${messageId}.${timestampS}.`)
    .update(rawBody)
    .digest('base64');
}

/**
 * The three headers of a delivery of `rawBody` (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<signature>`).
 * @param timestampS unix time, seconds (a whole number).
 */
export function webhookHeaders(
  messageId: string,
  timestampS: number,
  rawBody: RawBody,
  secret: string,
): Record<string, string> {
  return {
    [WEBHOOK_ID_HEADER]: messageId,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestampS),
    [WEBHOOK_SIGNATURE_HEADER]: `v1,${computeWebhookSignature(messageId, timestampS, rawBody, secret)}`,
  };
}

/** Why a signature was refused. */
export type SignatureFailure = 'malformed' | 'mismatch' | 'stale';

/** A refused signature; `reason` says which check failed, the message says what to look at. */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
  constructor(
    readonly reason: SignatureFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Options of {@link verifyWebhookSignature}. */
export interface VerifyOptions {
  /** Largest accepted distance between the signature's timestamp and `now`, seconds. Default 300. */
  toleranceS?: number;
  /** The receiver's clock, ms since the epoch. Default `Date.now()`. */
  now?: number;
}

/**
 * Verifies a delivery: `headers` must hold a `webhook-id`, a `webhook-timestamp` and a
 * `webhook-signature` with a `v1` signature of the id, the timestamp and `rawBody` under `secret`,
 * the timestamp no further than `toleranceS` from `now`. Signatures are compared in constant time.
 * @returns the delivery's id (dedupe by it) and the signature's timestamp, unix seconds.
 * @throws {WebhookSignatureError} `malformed` (a header missing, a timestamp that is not a number,
 *   no `v1,` signature), `mismatch` (no `v1` matches: another body, id, timestamp or secret), or
 *   `stale` (a timestamp outside the tolerance).
 */
export function verifyWebhookSignature(
  rawBody: RawBody,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyOptions = {},
): { id: string; timestamp: number } {
  const toleranceS = options.toleranceS ?? DEFAULT_TOLERANCE_S;
  const now = options.now ?? Date.now();
  const id = header(headers, WEBHOOK_ID_HEADER);
  const timestampText = header(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signatureText = header(headers, WEBHOOK_SIGNATURE_HEADER);
  const missing = [
    [WEBHOOK_ID_HEADER, id],
    [WEBHOOK_TIMESTAMP_HEADER, timestampText],
    [WEBHOOK_SIGNATURE_HEADER, signatureText],
  ].find(([, value]) => !value)?.[0];
  if (missing || !id || !timestampText || !signatureText) {
    throw new WebhookSignatureError('malformed', `no ${missing} header`);
  }
  if (!/^\d{1,12}$/.test(timestampText.trim())) {
    throw new WebhookSignatureError('malformed', `${WEBHOOK_TIMESTAMP_HEADER} is not unix seconds`);
  }
  const timestamp = Number(timestampText.trim());
  const signatures = signatureText
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  if (signatures.length === 0) {
    throw new WebhookSignatureError('malformed', `${WEBHOOK_SIGNATURE_HEADER} has no v1,<base64> signature`);
  }
  const expected = Buffer.from(computeWebhookSignature(id, timestamp, rawBody, secret), 'utf8');
  const matches = signatures.some((s) => {
    const given = Buffer.from(s, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) {
    throw new WebhookSignatureError(
      'mismatch',
      `${WEBHOOK_SIGNATURE_HEADER} does not match: the body, id or timestamp was changed (verify the ` +
        'raw body, before parsing it) or it was signed with another secret',
    );
  }
  const skewS = Math.floor(now / 1000) - timestamp;
  if (Math.abs(skewS) > toleranceS) {
    throw new WebhookSignatureError(
      'stale',
      `${WEBHOOK_TIMESTAMP_HEADER} ${timestamp} is ${Math.abs(skewS)} s ${skewS > 0 ? 'old' : 'in the future'}, ` +
        `beyond the tolerance of ${toleranceS} s: a replayed delivery, or a clock that is off`,
    );
  }
  return { id, timestamp };
}

/** One header's value (the first, when repeated), by its lower-case name. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}
