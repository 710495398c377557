/**
 * Webhook signatures (Stripe's scheme) as a receiver checks them, and the rules of a webhook's URL
 * and secret. The known signature was computed apart from this code, with
 * `printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test`.
 */
import { describe, expect, it } from 'vitest';
import {
  computeWebhookSignature,
  signatureHeader,
  verifyWebhookSignature,
  WebhookSignatureError,
} from '../../producer/webhook-signature.ts';
import { newWebhookSecret, webhookSecretSchema, webhookUrlSchema } from '../../shared/contract/webhooks.ts';

const T = 1_700_000_000;
const BODY = '{"a":1}';
const SECRET = 'whsec_test';
const KNOWN = '38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789';
const at = (seconds: number) => seconds * 1000;

/** The reason a verification is refused with. */
function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookSignatureError) return `${error.reason}: ${error.message}`;
    throw error;
  }
  throw new Error('expected the signature to be refused');
}

describe('signing', () => {
  it('is the hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret, as t=...,v1=...', () => {
    expect(computeWebhookSignature(BODY, SECRET, T)).toBe(KNOWN);
    expect(computeWebhookSignature(Buffer.from(BODY), SECRET, T)).toBe(KNOWN);
    expect(signatureHeader(BODY, SECRET, T)).toBe(`t=${T},v1=${KNOWN}`);
  });
});

describe('verifyWebhookSignature', () => {
  const header = `t=${T},v1=${KNOWN}`;

  it('accepts the raw body, as text or bytes, signed within the tolerance', () => {
    expect(verifyWebhookSignature(BODY, header, SECRET, { now: at(T) })).toEqual({ timestamp: T });
    expect(verifyWebhookSignature(Buffer.from(BODY), header, SECRET, { now: at(T + 299) })).toEqual({
      timestamp: T,
    });
    // Several v1 signatures (a secret being rotated): one that matches is enough.
    expect(
      verifyWebhookSignature(BODY, `t=${T}, v1=${'0'.repeat(64)}, v1=${KNOWN}`, SECRET, { now: at(T) }),
    ).toEqual({ timestamp: T });
  });

  it('refuses a tampered body, another secret, or the same JSON re-serialized', () => {
    expect(refusal(() => verifyWebhookSignature('{"a":2}', header, SECRET, { now: at(T) }))).toMatch(
      /^mismatch: Compactor-Signature does not match the body/,
    );
    expect(refusal(() => verifyWebhookSignature(BODY, header, 'whsec_other', { now: at(T) }))).toMatch(
      /^mismatch/,
    );
    expect(refusal(() => verifyWebhookSignature('{ "a": 1 }', header, SECRET, { now: at(T) }))).toMatch(
      /^mismatch/,
    );
  });

  it('refuses a timestamp outside the tolerance, old or in the future', () => {
    expect(refusal(() => verifyWebhookSignature(BODY, header, SECRET, { now: at(T + 301) }))).toBe(
      `stale: Compactor-Signature timestamp ${T} is 301 s old, beyond the tolerance of 300 s: a replayed delivery, or a clock that is off`,
    );
    expect(refusal(() => verifyWebhookSignature(BODY, header, SECRET, { now: at(T - 400) }))).toMatch(
      /^stale: .* is 400 s in the future/,
    );
    expect(verifyWebhookSignature(BODY, header, SECRET, { now: at(T + 301), toleranceS: 600 })).toEqual({
      timestamp: T,
    });
    expect(
      refusal(() => verifyWebhookSignature(BODY, header, SECRET, { now: at(T + 61), toleranceS: 60 })),
    ).toMatch(/^stale/);
  });

  it('refuses a missing or malformed header, saying what is missing', () => {
    expect(refusal(() => verifyWebhookSignature(BODY, undefined, SECRET))).toBe(
      'malformed: no Compactor-Signature header',
    );
    expect(refusal(() => verifyWebhookSignature(BODY, `v1=${KNOWN}`, SECRET))).toMatch(
      /^malformed: .* no t=/,
    );
    expect(refusal(() => verifyWebhookSignature(BODY, 't=abc,v1=x', SECRET))).toMatch(/^malformed: .* no t=/);
    expect(refusal(() => verifyWebhookSignature(BODY, `t=${T}`, SECRET))).toMatch(/^malformed: .* no v1=/);
    expect(refusal(() => verifyWebhookSignature(BODY, `t=${T},v0=${KNOWN}`, SECRET))).toMatch(/^malformed/);
  });
});

describe('a webhook', () => {
  it('gets a generated secret of 256 random bits that its own rules accept', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newWebhookSecret()).not.toBe(a);
    expect(webhookSecretSchema.safeParse(a).success).toBe(true);
    expect(webhookSecretSchema.safeParse('short').success).toBe(false);
    expect(webhookSecretSchema.safeParse('has a space in it!!').success).toBe(false);
  });

  it('posts to an http or https URL without credentials', () => {
    expect(webhookUrlSchema.safeParse('https://example.com/hooks?token=x').success).toBe(true);
    expect(webhookUrlSchema.safeParse('http://127.0.0.1:8080/').success).toBe(true);
    for (const bad of ['ftp://example.com/', 'example.com/hook', 'https://user:pw@example.com/', '']) {
      expect(webhookUrlSchema.safeParse(bad).success, bad).toBe(false);
    }
  });
});
