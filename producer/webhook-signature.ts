/**
 * Webhook signatures, Stripe's scheme: each delivery carries
 *
 *     Compactor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>
 *
 * A receiver verifies it over the raw body as received (before any JSON parsing) with
 * {@link verifyWebhookSignature}, which also refuses a timestamp outside a tolerance (a replay).
 * Several `v1=` entries may appear; one matching is enough. compactor signs with
 * {@link signatureHeader}, so both sides share this one file. It imports nothing but node:crypto:
 * a receiver can import (or copy) it without the rest of compactor.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'Compactor-Signature';
/** The header that carries the event id (the compaction id): deliveries may repeat, dedupe by it. */
export const EVENT_ID_HEADER = 'Compactor-Event-Id';
/** Default tolerance between the signature's timestamp and the receiver's clock, seconds. */
export const DEFAULT_TOLERANCE_S = 300;

/** A body as received: text (UTF-8) or bytes. */
export type RawBody = string | Uint8Array;

/**
 * The hex HMAC-SHA256 of `"<timestampS>.<rawBody>"` keyed with `secret` (UTF-8).
 * @param timestampS unix time, seconds.
 */
export function computeWebhookSignature(rawBody: RawBody, secret: string, timestampS: number): string {
  return createHmac('sha256', secret).update(`${timestampS}.`).update(rawBody).digest('hex');
}

/**
 * The `Compactor-Signature` value for `rawBody`: `t=<timestampS>,v1=<signature>`.
 * @param timestampS unix time, seconds (a whole number).
 */
export function signatureHeader(rawBody: RawBody, secret: string, timestampS: number): string {
  return `t=${timestampS},v1=${computeWebhookSignature(rawBody, secret, timestampS)}`;
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
 * Verifies a delivery: `header` (the `Compactor-Signature` value) must hold a timestamp and a `v1`
 * signature of `rawBody` under `secret`, the timestamp no further than `toleranceS` from `now`.
 * @returns the signature's timestamp, unix seconds.
 * @throws {WebhookSignatureError} `malformed` (no header, no `t=`, no `v1=`), `mismatch` (no `v1`
 *   matches: another body or another secret), or `stale` (a timestamp outside the tolerance).
 */
export function verifyWebhookSignature(
  rawBody: RawBody,
  header: string | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): { timestamp: number } {
  const toleranceS = options.toleranceS ?? DEFAULT_TOLERANCE_S;
  const now = options.now ?? Date.now();
  if (!header) throw new WebhookSignatureError('malformed', `no ${SIGNATURE_HEADER} header`);
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && value !== '') signatures.push(value);
  }
  if (timestamp === null) {
    throw new WebhookSignatureError('malformed', `${SIGNATURE_HEADER} has no t=<unix seconds> timestamp`);
  }
  if (signatures.length === 0) {
    throw new WebhookSignatureError('malformed', `${SIGNATURE_HEADER} has no v1=<hex HMAC-SHA256> signature`);
  }
  const expected = Buffer.from(computeWebhookSignature(rawBody, secret, timestamp), 'utf8');
  const matches = signatures.some((s) => {
    const given = Buffer.from(s, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) {
    throw new WebhookSignatureError(
      'mismatch',
      `${SIGNATURE_HEADER} does not match the body: the body was changed (verify the raw body, before ` +
        'parsing it) or it was signed with another secret',
    );
  }
  const skewS = Math.floor(now / 1000) - timestamp;
  if (Math.abs(skewS) > toleranceS) {
    throw new WebhookSignatureError(
      'stale',
      `${SIGNATURE_HEADER} timestamp ${timestamp} is ${Math.abs(skewS)} s ${skewS > 0 ? 'old' : 'in the future'}, ` +
        `beyond the tolerance of ${toleranceS} s: a replayed delivery, or a clock that is off`,
    );
  }
  return { timestamp };
}
