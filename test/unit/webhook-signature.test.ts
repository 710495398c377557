/**
 * Webhook signatures (Standard Webhooks) as a receiver checks them, and the rules of a webhook's
 * secret and URL text. The known signature is the specification's own example, checked apart from
 * this code with `printf 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
 * openssl dgst -sha256 -mac HMAC -macopt hexkey:<the secret's bytes> -binary | base64`.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  computeWebhookSignature,
  verifyWebhookSignature,
  WebhookSignatureError,
  webhookHeaders,
} from '../../producer/webhook-signature.ts';
import {
  newWebhookSecret,
  tenantDeliveryError,
  webhookMessageId,
  webhookSecretSchema,
  webhookUrlSchema,
} from '../../shared/contract/webhooks.ts';

const T = 1_614_265_330;
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const BODY = '{"test": 2432232314}';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KNOWN = 'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const at = (seconds: number) => seconds * 1000;
const headers = (signature = `v1,${KNOWN}`, id = ID, t = String(T)) => ({
  'webhook-id': id,
  'webhook-timestamp': t,
  'webhook-signature': signature,
});

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
  it('is the base64 HMAC-SHA256 of "<id>.<t>.<raw body>" keyed with the secret\'s bytes', () => {
    expect(computeWebhookSignature(ID, T, BODY, SECRET)).toBe(KNOWN);
    expect(computeWebhookSignature(ID, T, Buffer.from(BODY), SECRET)).toBe(KNOWN);
    expect(webhookHeaders(ID, T, BODY, SECRET)).toEqual(headers());
    // The same key bytes in base64url (secrets generated before the standard alphabet) sign alike.
    const bytes = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    expect(computeWebhookSignature(ID, T, BODY, `whsec_${bytes.toString('base64url')}`)).toBe(KNOWN);
  });

  it('is what the standardwebhooks package verifies, and it refuses a changed id', () => {
    const secret = newWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const signed = webhookHeaders('msg_abc', now, BODY, secret);
    expect(new Webhook(secret).verify(BODY, signed)).toEqual({ test: 2432232314 });
    expect(() => new Webhook(secret).verify(BODY, { ...signed, 'webhook-id': 'msg_abd' })).toThrow(
      'No matching signature found',
    );
    // A secret chosen before secrets were whsec_: its UTF-8 bytes are the key (the package's raw format).
    const legacy = 'flaky-receiver-secret-0123456789';
    const raw = webhookHeaders('msg_abc', now, BODY, legacy);
    expect(new Webhook(legacy, { format: 'raw' }).verify(BODY, raw)).toEqual({ test: 2432232314 });
  });
});

describe('verifyWebhookSignature', () => {
  it('accepts the raw body, as text or bytes, signed within the tolerance', () => {
    expect(verifyWebhookSignature(BODY, headers(), SECRET, { now: at(T) })).toEqual({ id: ID, timestamp: T });
    expect(verifyWebhookSignature(Buffer.from(BODY), headers(), SECRET, { now: at(T + 299) })).toEqual({
      id: ID,
      timestamp: T,
    });
    // Several signatures (a secret being rotated): one that matches is enough; names in any case.
    expect(
      verifyWebhookSignature(
        BODY,
        {
          'Webhook-Id': ID,
          'Webhook-Timestamp': String(T),
          'Webhook-Signature': `v1,${'A'.repeat(43)}= v1,${KNOWN}`,
        },
        SECRET,
        { now: at(T) },
      ),
    ).toEqual({ id: ID, timestamp: T });
    // A fetch Headers object.
    expect(verifyWebhookSignature(BODY, new Headers(headers()), SECRET, { now: at(T) }).id).toBe(ID);
  });

  it('refuses a tampered body, another id, another timestamp, another secret, or the JSON re-serialized', () => {
    expect(refusal(() => verifyWebhookSignature('{"test": 1}', headers(), SECRET, { now: at(T) }))).toMatch(
      /^mismatch: webhook-signature does not match/,
    );
    expect(
      refusal(() =>
        verifyWebhookSignature(BODY, headers(`v1,${KNOWN}`, 'msg_other'), SECRET, { now: at(T) }),
      ),
    ).toMatch(/^mismatch/);
    expect(
      refusal(() =>
        verifyWebhookSignature(BODY, headers(`v1,${KNOWN}`, ID, String(T + 1)), SECRET, { now: at(T) }),
      ),
    ).toMatch(/^mismatch/);
    expect(
      refusal(() => verifyWebhookSignature(BODY, headers(), newWebhookSecret(), { now: at(T) })),
    ).toMatch(/^mismatch/);
    expect(
      refusal(() => verifyWebhookSignature('{"test":2432232314}', headers(), SECRET, { now: at(T) })),
    ).toMatch(/^mismatch/);
  });

  it('refuses a timestamp outside the tolerance, old or in the future', () => {
    expect(refusal(() => verifyWebhookSignature(BODY, headers(), SECRET, { now: at(T + 301) }))).toBe(
      `stale: webhook-timestamp ${T} is 301 s old, beyond the tolerance of 300 s: a replayed delivery, or a clock that is off`,
    );
    expect(refusal(() => verifyWebhookSignature(BODY, headers(), SECRET, { now: at(T - 400) }))).toMatch(
      /^stale: .* is 400 s in the future/,
    );
    expect(
      verifyWebhookSignature(BODY, headers(), SECRET, { now: at(T + 301), toleranceS: 600 }).timestamp,
    ).toBe(T);
  });

  it('refuses a missing or malformed header, saying what is missing', () => {
    expect(refusal(() => verifyWebhookSignature(BODY, {}, SECRET))).toBe('malformed: no webhook-id header');
    const { 'webhook-signature': _s, ...unsigned } = headers();
    expect(refusal(() => verifyWebhookSignature(BODY, unsigned, SECRET))).toBe(
      'malformed: no webhook-signature header',
    );
    expect(refusal(() => verifyWebhookSignature(BODY, headers(`v1,${KNOWN}`, ID, 'abc'), SECRET))).toBe(
      'malformed: webhook-timestamp is not unix seconds',
    );
    expect(refusal(() => verifyWebhookSignature(BODY, headers(`v2,${KNOWN}`), SECRET))).toBe(
      'malformed: webhook-signature has no v1,<base64> signature',
    );
  });
});

describe('a webhook', () => {
  it('gets a generated secret of 256 random bits in the Standard Webhooks form', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newWebhookSecret()).not.toBe(a);
    expect(webhookSecretSchema.safeParse(a).success).toBe(true);
    expect(webhookSecretSchema.safeParse(SECRET).success).toBe(true);
    for (const bad of ['short', 'flaky-receiver-secret-0123456789', 'whsec_c2hvcnQ=', 'whsec_not base64!!']) {
      expect(webhookSecretSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('has a delivery id of its tenant and compaction: the same on retries, another for another tenant', () => {
    const compaction = '0b9a3f0e-6a54-4f5e-9a51-0d3c7c0f6a11';
    expect(webhookMessageId('acme', compaction)).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
    expect(webhookMessageId('acme', compaction)).toBe(webhookMessageId('acme', compaction));
    expect(webhookMessageId('evil', compaction)).not.toBe(webhookMessageId('acme', compaction));
  });

  it('posts to an http or https URL without credentials (the address policy decides which)', () => {
    expect(webhookUrlSchema.safeParse('https://example.com/hooks?token=x').success).toBe(true);
    for (const bad of ['ftp://example.com/', 'example.com/hook', 'https://user:pw@example.com/', '']) {
      expect(webhookUrlSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('tells a tenant the class of a failed attempt, never its address or system error', () => {
    expect(tenantDeliveryError({ delivered: true, statusCode: 204, error: null })).toBeNull();
    expect(
      tenantDeliveryError({ delivered: false, statusCode: 503, error: 'HTTP 503 Service Unavailable' }),
    ).toBe('HTTP 503');
    expect(
      tenantDeliveryError({
        delivered: false,
        statusCode: null,
        error: 'connection failed: ECONNREFUSED connect ECONNREFUSED 10.0.0.5:5432',
      }),
    ).toBe('connection failed');
    expect(tenantDeliveryError({ delivered: false, statusCode: null, error: 'something new' })).toBe(
      'delivery failed',
    );
  });
});
