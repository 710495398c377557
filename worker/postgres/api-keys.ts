/**
 * The `api_keys` table: keys issued, listed, rotated and revoked at run time, and the lookup that
 * authenticates a request with one. A key's secret leaves this module once, when it is made
 * ({@link createKey}, {@link rotateKey}); the table holds its SHA-256 only. Bad input throws
 * {@link InvalidInputError} naming the field and changes nothing.
 */

import type { z } from 'zod';
import type { Db } from '../../producer/postgres/db.ts';
import { and, asc, eq, gt, isNull, lt, or, sql } from '../../producer/postgres/orm.ts';
import { type ApiKeyRow, apiKeys } from '../../producer/postgres/schema.ts';
import {
  ALL_SCOPES,
  KEY_PREFIXES,
  type KeyKind,
  keyIdSchema,
  keyNameSchema,
  newKey,
  type Scope,
  scopeProblem,
  scopesSchema,
  TENANT_SCOPES,
} from '../../shared/contract/api-keys.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { describeZodError, idSchema } from '../../shared/protocol/events.ts';

/** The `tenant_id` of admin keys (no tenant id is empty). */
const ADMIN_TENANT = '';

/** How often a key's `last_used_at` is written at most, ms. */
export const LAST_USED_EVERY_MS = 60_000;

/** Where a key stands now. */
export type KeyState = 'active' | 'expired' | 'revoked';

/** A key as shown to people and scripts: everything but its secret. */
export interface ApiKey {
  id: string;
  kind: KeyKind;
  /** The key's public beginning (`cpt_<id>`), to recognise it without its secret. */
  prefix: string;
  /** The tenant a tenant key acts on; null for an admin key. */
  tenantId: string | null;
  name: string;
  scopes: Scope[];
  state: KeyState;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** When it was revoked, or (after a rotation with a grace period) will be. */
  revokedAt: Date | null;
  /** The key this one replaced by a rotation. */
  rotatedFrom: string | null;
}

/** What {@link createKey} issues. */
export interface NewKeyInput {
  /** The tenant of a tenant key; null for an admin key. */
  tenantId: string | null;
  name: string;
  /** Default: every scope its kind may hold. */
  scopes?: Scope[] | undefined;
  /** Default: never expires. Must be in the future. */
  expiresAt?: Date | null | undefined;
}

/** A key just made: shown to people, and its text, to hand over once. */
export interface IssuedKey {
  key: ApiKey;
  /** The whole key (`cpt_<id>_<secret>`); never stored, never shown again. */
  secret: string;
}

/**
 * Issues a key.
 * @throws {InvalidInputError} naming a bad tenant id, name, scope or expiry; nothing is written.
 */
export async function createKey(
  db: Db,
  input: NewKeyInput,
  rotatedFrom: string | null = null,
): Promise<IssuedKey> {
  const row = validRow(input);
  const made = newKey(row.kind);
  const [inserted] = await db
    .insert(apiKeys)
    .values({ ...row, id: made.id, secretSha256: made.secretHash, rotatedFrom })
    .returning();
  if (!inserted) throw new Error('createKey: the insert returned no row');
  return { key: keyOf(inserted), secret: made.key };
}

/** Which keys {@link listKeys} lists. */
export interface KeyFilter {
  /** Only this tenant's keys; absent: every tenant's and the admin keys. */
  tenantId?: string | undefined;
  /** Only admin keys. */
  admin?: boolean | undefined;
  /** Revoked and expired keys too (default: only those still usable). */
  all?: boolean | undefined;
}

/** Keys, oldest first, never their secrets. */
export async function listKeys(db: Db, filter: KeyFilter = {}): Promise<ApiKey[]> {
  if (filter.tenantId !== undefined) checkTenant(filter.tenantId);
  const rows = await db
    .select()
    .from(apiKeys)
    .where(
      and(
        filter.tenantId === undefined ? undefined : eq(apiKeys.tenantId, filter.tenantId),
        filter.admin ? eq(apiKeys.kind, 'admin') : undefined,
        filter.all ? undefined : usable(),
      ),
    )
    .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id));
  return rows.map(keyOf);
}

/**
 * Revokes a key now (also one still in a rotation's grace period): every request with it is
 * refused from this statement's commit on.
 * @param tenantId when given, only a key of this tenant is revoked.
 * @returns the revoked key, or null when no usable key has that id (nothing changed).
 * @throws {InvalidInputError} for a malformed id.
 */
export async function revokeKey(db: Db, id: string, tenantId?: string): Promise<ApiKey | null> {
  checkId(id);
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.id, id), ownedBy(tenantId), usable()))
    .returning();
  return row ? keyOf(row) : null;
}

/**
 * Rotates a key: issues a new one with the same tenant, kind, name, scopes and expiry, and revokes
 * the old one after `graceMs` (default 0: now), in one transaction.
 * @returns the new key (with its secret) and the old one as it now stands; null when no usable key
 *   has that id (nothing changed).
 * @throws {InvalidInputError} for a malformed id or a negative grace.
 */
export async function rotateKey(
  db: Db,
  id: string,
  options: { graceMs?: number | undefined; tenantId?: string | undefined } = {},
): Promise<{ issued: IssuedKey; old: ApiKey } | null> {
  checkId(id);
  const graceMs = options.graceMs ?? 0;
  if (!Number.isInteger(graceMs) || graceMs < 0) {
    throw new InvalidInputError(`grace: must be a whole number of ms, 0 or more, got ${graceMs}`);
  }
  return db.transaction(async (tx) => {
    const [old] = await tx
      .update(apiKeys)
      .set({ revokedAt: sql`now() + make_interval(secs => ${graceMs / 1000})` })
      .where(and(eq(apiKeys.id, id), ownedBy(options.tenantId), usable()))
      .returning();
    if (!old) return null;
    const issued = await createKey(
      tx as unknown as Db,
      {
        tenantId: old.kind === 'admin' ? null : old.tenantId,
        name: old.name,
        scopes: old.scopes as Scope[],
        expiresAt: old.expiresAt,
      },
      old.id,
    );
    return { issued, old: keyOf(old) };
  });
}

/**
 * The stored rows of a key id (for authentication: compare the secret, then the state). Ids are
 * random, so there is one row or none; the caller refuses more than one.
 */
export async function findKey(db: Db, id: string): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).where(eq(apiKeys.id, id)).limit(2);
}

/** Records that a key was used now, unless that was written less than a minute ago. */
export async function touchKey(db: Db, tenantId: string, id: string): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(apiKeys.tenantId, tenantId),
        eq(apiKeys.id, id),
        or(
          isNull(apiKeys.lastUsedAt),
          lt(apiKeys.lastUsedAt, sql`now() - make_interval(secs => ${LAST_USED_EVERY_MS / 1000})`),
        ),
      ),
    );
}

/** Where the API and the dashboard look issued keys up (worker/http/dashboard/auth.ts). */
export interface KeyStore {
  /** The stored rows of a key id (none, or one: ids are random). */
  find(id: string): Promise<ApiKeyRow[]>;
  /** Records that the key was used (at most about once a minute per key; never fails the request). */
  used(row: ApiKeyRow): void;
}

/**
 * The key store on `db`. Nothing is cached: every request reads its key's row (one index lookup),
 * so a revocation holds from its commit on. `last_used_at` is written at most once a minute per
 * key by this process (and by the statement's own condition across processes), off the request's
 * path; a failed write goes to `onError`.
 */
export function keyStore(db: Db, onError: (error: Error) => void = () => {}): KeyStore {
  const written = new Map<string, number>();
  return {
    find: (id) => findKey(db, id),
    used(row) {
      const now = Date.now();
      if (now - (written.get(row.id) ?? 0) < LAST_USED_EVERY_MS) return;
      written.set(row.id, now);
      touchKey(db, row.tenantId, row.id).catch(onError);
    },
  };
}

/** Whether any key can still be used (a server with no credentials but these may start). */
export async function hasUsableKeys(db: Db): Promise<boolean> {
  const [row] = await db.select({ id: apiKeys.id }).from(apiKeys).where(usable()).limit(1);
  return row !== undefined;
}

/** Where a stored key stands at `now`. */
export function stateOf(row: Pick<ApiKeyRow, 'revokedAt' | 'expiresAt'>, now = new Date()): KeyState {
  if (row.revokedAt !== null && row.revokedAt <= now) return 'revoked';
  if (row.expiresAt !== null && row.expiresAt <= now) return 'expired';
  return 'active';
}

/** Neither revoked nor expired now (a revocation set in the future, a rotation's grace, is not yet). */
function usable() {
  return and(
    or(isNull(apiKeys.revokedAt), gt(apiKeys.revokedAt, sql`now()`)),
    or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)),
  );
}

function ownedBy(tenantId: string | undefined) {
  if (tenantId === undefined) return undefined;
  checkTenant(tenantId);
  return eq(apiKeys.tenantId, tenantId);
}

/** The row to insert for `input`, validated. */
function validRow(input: NewKeyInput) {
  const kind: KeyKind = input.tenantId === null ? 'admin' : 'tenant';
  if (input.tenantId !== null) checkTenant(input.tenantId);
  const name = valid(keyNameSchema, input.name, 'name');
  const scopes = valid(
    scopesSchema,
    input.scopes ?? (kind === 'admin' ? ALL_SCOPES : TENANT_SCOPES),
    'scopes',
  );
  const problem = scopeProblem(kind, scopes);
  if (problem) throw new InvalidInputError(`invalid key: ${problem}`);
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt !== null && !(expiresAt.getTime() > Date.now())) {
    throw new InvalidInputError(
      `invalid key: expiresAt: must be in the future, got ${expiresAt.toISOString()}`,
    );
  }
  return { tenantId: input.tenantId ?? ADMIN_TENANT, kind, name, scopes, expiresAt };
}

function keyOf(row: ApiKeyRow): ApiKey {
  const kind = row.kind as KeyKind;
  return {
    id: row.id,
    kind,
    prefix: `${KEY_PREFIXES[kind]}_${row.id}`,
    tenantId: kind === 'admin' ? null : row.tenantId,
    name: row.name,
    scopes: row.scopes as Scope[],
    state: stateOf(row),
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    lastUsedAt: row.lastUsedAt,
    revokedAt: row.revokedAt,
    rotatedFrom: row.rotatedFrom,
  };
}

/** `value` as `schema` reads it. @throws {InvalidInputError} naming `field` and what is wrong. */
function valid<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`invalid key: ${describeZodError(parsed.error, field)}`);
  return parsed.data;
}

function checkTenant(tenantId: string): void {
  valid(idSchema, tenantId, 'tenant');
}

function checkId(id: string): void {
  valid(keyIdSchema, id, 'id');
}
