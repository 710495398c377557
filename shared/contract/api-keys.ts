/**
 * API keys as data: their scopes, the shape of a key's text, and how a key is made and hashed.
 * Pure apart from Node's crypto (random bytes, SHA-256); the table and its reads are
 * worker/postgres/api-keys.ts.
 *
 * A key reads `<prefix>_<id>_<secret>`, e.g. `cpt_3f9a0c1b2d4e5f60_Vb1...` (GitHub's `ghp_` style):
 * - `cpt` a tenant key (acts on its own tenant only), `cpa` an admin key (acts on the tenant it
 *   names in `Compactor-Tenant`), so a key found in a log or a repository says what it opens;
 * - `id`: 16 hex characters, public: listed, logged, used to revoke;
 * - `secret`: 32 random bytes in base64url (43 characters). Only its SHA-256 is stored: a secret of
 *   256 random bits needs no slow password hash, and the digest is compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

import { ALL_SCOPES, type Scope } from './scopes.ts';

export { ALL_SCOPES, SCOPES, type Scope, TENANT_SCOPES } from './scopes.ts';

/** A key's kind, told by its prefix. */
export type KeyKind = 'tenant' | 'admin';

/** The prefix of each kind of key (before its first `_`). */
export const KEY_PREFIXES: Record<KeyKind, string> = { tenant: 'cpt', admin: 'cpa' };

/** The length of a key id, hex characters. */
const ID_CHARS = 16;

/** The text of a key: prefix, id and secret. */
const KEY_PATTERN = new RegExp(`^(cpt|cpa)_([0-9a-f]{${ID_CHARS}})_([A-Za-z0-9_-]{43})$`);

/** A key id as given on the command line or in a path. */
export const keyIdSchema = z
  .string()
  .regex(new RegExp(`^[0-9a-f]{${ID_CHARS}}$`), `must be a key id: ${ID_CHARS} hex characters`);

/** A key's name: what it is for, shown by `key list` (1-100 printable characters). */
export const keyNameSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}\p{Cf}\p{Cs}]*$/u, 'must not contain control or invisible formatting characters');

/** A list of scopes, each named, without repeats. */
export const scopesSchema = z
  .array(z.enum(ALL_SCOPES as [Scope, ...Scope[]]))
  .min(1)
  .refine((s) => new Set(s).size === s.length, 'must not repeat a scope');

/** A key's text, parsed (nothing checked against the table yet). */
export interface ParsedKey {
  kind: KeyKind;
  id: string;
  secret: string;
}

/**
 * Whether `text` looks like a key of ours: `cpt_`/`cpa_` and the rest of it. Null for anything
 * else (a bootstrap token from the environment, or garbage).
 */
export function parseKey(text: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(text);
  if (!match) return null;
  const [, prefix, id, secret] = match as unknown as [string, string, string, string];
  return { kind: prefix === KEY_PREFIXES.admin ? 'admin' : 'tenant', id, secret };
}

/** Whether `text` starts like one of our keys (for telling "malformed key" from "unknown token"). */
export function hasKeyPrefix(text: string): boolean {
  return /^(cpt|cpa)_/.test(text);
}

/** A new key of `kind`: its id, its text (to show once) and the SHA-256 of its secret (hex, to store). */
export function newKey(kind: KeyKind): { id: string; key: string; secretHash: string } {
  const id = randomBytes(ID_CHARS / 2).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, key: `${KEY_PREFIXES[kind]}_${id}_${secret}`, secretHash: hashSecret(secret) };
}

/** SHA-256 of a key's secret, hex: what the table stores. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether `secret` hashes to `storedHash` (hex), compared in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const given = createHash('sha256').update(secret, 'utf8').digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === given.length && timingSafeEqual(given, stored);
}

/**
 * Checks the scopes a key of `kind` is given.
 * @returns a message naming what is wrong, or null when they may be given.
 */
export function scopeProblem(kind: KeyKind, scopes: readonly Scope[]): string | null {
  if (kind === 'tenant' && scopes.includes('admin')) {
    return 'scopes: "admin" is for admin keys only (a tenant key acts on its own tenant)';
  }
  return null;
}
