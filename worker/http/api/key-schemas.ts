/**
 * The key routes' parameters and responses (`/v1/admin/keys`) as zod schemas: parsed with them,
 * documented by them in the OpenAPI document. Pure: no I/O.
 */
import { z } from 'zod';
import {
  ALL_SCOPES,
  keyIdSchema,
  keyNameSchema,
  SCOPES,
  scopesSchema,
} from '../../../shared/contract/api-keys.ts';
import { idSchema } from '../../../shared/protocol/events.ts';

/** Longest grace period of a rotation, seconds (30 days). */
export const MAX_GRACE_SECONDS = 30 * 24 * 3600;

const scopeList = ALL_SCOPES.map((s) => `${s} (${SCOPES[s]})`).join('; ');

/** `{keyId}` in a path. */
export const keyPathSchema = z.object({ keyId: keyIdSchema.describe('The key id (as `list` shows it).') });

/** Body of `POST /v1/admin/keys`. */
export const createKeyBodySchema = z
  .strictObject({
    name: keyNameSchema.describe('What the key is for, e.g. "acme agent service".'),
    tenantId: idSchema
      .optional()
      .describe('The tenant of a tenant key (prefix cpt_): it acts on this tenant only.'),
    admin: z
      .literal(true)
      .optional()
      .describe('true for an admin key (prefix cpa_): acts on any tenant it names. Instead of tenantId.'),
    scopes: scopesSchema
      .optional()
      .describe(`Default: every scope its kind may hold (admin only for admin keys). ${scopeList}.`),
    expiresAt: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('When it stops working (ISO 8601, in the future); default: never.'),
  })
  .refine((b) => (b.tenantId === undefined) !== (b.admin === undefined), {
    message: 'give either tenantId (a tenant key) or "admin": true (an admin key)',
    path: ['tenantId'],
  })
  .meta({ title: 'CreateKeyRequest' });

/** Query of `GET /v1/admin/keys`. */
export const listKeysQuerySchema = z.object({
  tenant: idSchema.optional().describe("Only this tenant's keys."),
  all: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: revoked and expired keys too (default: only those still usable).'),
});

/** Body of `POST /v1/admin/keys/{keyId}/rotate`. */
export const rotateKeyBodySchema = z
  .strictObject({
    graceSeconds: z
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .optional()
      .describe('How long the old key keeps working, seconds (default 0: revoked now).'),
  })
  .meta({ title: 'RotateKeyRequest' });

/** A key as listed: never its secret. */
export const apiKeySchema = z
  .object({
    id: z.string(),
    kind: z.enum(['tenant', 'admin']),
    prefix: z.string().describe('The public beginning of the key (cpt_<id> or cpa_<id>).'),
    tenantId: z.string().nullable().describe('null for an admin key.'),
    name: z.string(),
    scopes: z.array(z.enum(ALL_SCOPES as [string, ...string[]])),
    state: z.enum(['active', 'expired', 'revoked']),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    lastUsedAt: z.string().nullable().describe('Written at most about once a minute.'),
    revokedAt: z
      .string()
      .nullable()
      .describe('When it was (or, in a rotation grace period, will be) revoked.'),
    rotatedFrom: z.string().nullable(),
  })
  .meta({ title: 'ApiKey' });

/** A key just issued, with its secret: shown this once. */
export const issuedKeySchema = z
  .object({
    key: apiKeySchema,
    secret: z
      .string()
      .describe('The whole key, to send as `Authorization: Bearer <secret>`. Never shown again.'),
  })
  .meta({ title: 'IssuedKey' });

/** A rotation: the new key with its secret, and the old key as it now stands. */
export const rotatedKeySchema = issuedKeySchema.extend({ old: apiKeySchema }).meta({ title: 'RotatedKey' });

/** The list of keys. */
export const keyListSchema = z.object({ keys: z.array(apiKeySchema) }).meta({ title: 'KeyList' });

/** A revoked key. */
export const revokedKeySchema = z.object({ key: apiKeySchema }).meta({ title: 'RevokedKey' });
