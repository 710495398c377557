/**
 * Who is asking: the credentials of the API and the dashboard, and how a request proves it holds
 * one. Three kinds:
 * - keys issued at run time (`compactor key create`, worker/postgres/api-keys.ts), as a bearer
 *   token (or as the password of basic auth): a `cpt_` tenant key acts on its tenant, a `cpa_`
 *   admin key on any tenant, each with its scopes; refused once revoked or expired;
 * - the bootstrap admin from the environment (COMPACTOR_DASHBOARD_TOKEN as a bearer token, or
 *   COMPACTOR_DASHBOARD_USER/PASSWORD as basic auth): every scope, any tenant;
 * - the environment's tenant tokens (COMPACTOR_DASHBOARD_TOKENS, as a bearer token or as basic
 *   auth with the tenant id as user name): every tenant scope, on that tenant only.
 * Secrets are compared in constant time (SHA-256 of both sides, then `timingSafeEqual`); every
 * environment secret is compared on every request, so timing tells nothing about which matched.
 * A failure says why (`reason`, and the key id when the token named one), never the secret.
 */
import {
  ALL_SCOPES,
  hasKeyPrefix,
  parseKey,
  type Scope,
  secretMatches,
  TENANT_SCOPES,
} from '../../../shared/contract/api-keys.ts';
import { ConfigError } from '../../../shared/contract/errors.ts';
import { isLoopback, safeEqual } from '../access-checks.ts';

export { isLoopback, safeEqual };

import type { DashboardConfig } from '../../config/config.ts';
import { type KeyStore, stateOf } from '../../postgres/api-keys.ts';

export type { KeyStore };

/**
 * An authenticated caller: its role, its scopes, and the issued key it used (none for the
 * environment's credentials).
 */
export type Principal = ({ role: 'admin' } | { role: 'tenant'; tenantId: string }) & {
  scopes: readonly Scope[];
  keyId?: string;
};

/** The bootstrap admin: every scope. */
export const BOOTSTRAP_ADMIN: Principal = { role: 'admin', scopes: ALL_SCOPES };

/** The credentials: the environment's (the dashboard's configuration) and the issued keys. */
export type Credentials = Pick<
  DashboardConfig,
  'adminToken' | 'adminUser' | 'adminPassword' | 'tenantTokens'
> & { keys?: KeyStore | undefined };

/** Why a request's credentials were refused. */
export type AuthFailure = 'missing' | 'malformed' | 'unknown_key' | 'wrong_secret' | 'revoked' | 'expired';

/** The outcome of checking an `Authorization` header. */
export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; reason: AuthFailure; keyId?: string };

/** Thrown when the dashboard must not start as configured; the message says what to set. */
export class DashboardConfigError extends ConfigError {
  override name = 'DashboardConfigError';
}

/** Whether any credential is configured (a key store counts: keys may be issued at any time). */
export function hasCredentials(credentials: Credentials): boolean {
  return (
    credentials.adminToken !== undefined ||
    credentials.adminPassword !== undefined ||
    credentials.tenantTokens.length > 0 ||
    credentials.keys !== undefined
  );
}

/**
 * Refuses an unauthenticated dashboard except when asked for (`insecure`) on a loopback address.
 * @throws {DashboardConfigError} naming the variables to set.
 */
export function assertStartable(credentials: Credentials, host: string, insecure: boolean): void {
  if (hasCredentials(credentials)) return;
  if (!insecure) {
    throw new DashboardConfigError(
      'no dashboard credentials: set COMPACTOR_DASHBOARD_TOKEN, or COMPACTOR_DASHBOARD_USER and ' +
        'COMPACTOR_DASHBOARD_PASSWORD, and/or COMPACTOR_DASHBOARD_TOKENS (tenant:token,...), or ' +
        'issue a key (compactor key create); or pass --insecure with a loopback --host to run without authentication',
    );
  }
  if (!isLoopback(host)) {
    throw new DashboardConfigError(
      `--insecure is only allowed on a loopback host (127.0.0.1, ::1, localhost), not "${host}"`,
    );
  }
}

/**
 * Checks an `Authorization` header (`Bearer <token>` or `Basic <base64 user:password>`). A token
 * shaped like an issued key (`cpt_`/`cpa_`) is looked up in `credentials.keys`; any other is
 * compared with the environment's. Basic auth splits at the first `:`, so a tenant whose id holds
 * `:` uses its bearer token; an issued key as the password is taken whatever the user name.
 */
export async function authenticate(
  header: string | undefined,
  credentials: Credentials,
): Promise<AuthResult> {
  if (!header) return { ok: false, reason: 'missing' };
  const space = header.indexOf(' ');
  const scheme = header.slice(0, Math.max(space, 0)).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (space < 0 || value === '') return { ok: false, reason: 'malformed' };
  if (scheme === 'bearer') {
    return hasKeyPrefix(value) ? issuedKey(value, credentials.keys) : bearer(value, credentials);
  }
  if (scheme === 'basic') return basic(value, credentials);
  return { ok: false, reason: 'malformed' };
}

/** An issued key: its row by id, then its secret, then whether it is still in force. */
async function issuedKey(token: string, keys: KeyStore | undefined): Promise<AuthResult> {
  const parsed = parseKey(token);
  if (!parsed) return { ok: false, reason: 'malformed' };
  const keyId = parsed.id;
  const rows = keys ? await keys.find(parsed.id) : [];
  const [row] = rows;
  if (!row || rows.length > 1 || row.kind !== parsed.kind) return { ok: false, reason: 'unknown_key', keyId };
  if (!secretMatches(parsed.secret, row.secretSha256)) return { ok: false, reason: 'wrong_secret', keyId };
  const state = stateOf(row);
  if (state !== 'active') return { ok: false, reason: state, keyId };
  keys?.used(row);
  const scopes = row.scopes as Scope[];
  const principal: Principal =
    row.kind === 'admin'
      ? { role: 'admin', scopes, keyId }
      : { role: 'tenant', tenantId: row.tenantId, scopes, keyId };
  return { ok: true, principal };
}

function bearer(token: string, credentials: Credentials): AuthResult {
  // Compare against every secret (no early exit), then decide.
  const admin = credentials.adminToken !== undefined && safeEqual(token, credentials.adminToken);
  let tenant: string | undefined;
  for (const t of credentials.tenantTokens) if (safeEqual(token, t.token)) tenant = t.tenantId;
  return environmentPrincipal(admin, tenant);
}

async function basic(encoded: string, credentials: Credentials): Promise<AuthResult> {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { ok: false, reason: 'malformed' };
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if (hasKeyPrefix(password)) return issuedKey(password, credentials.keys);
  const { adminUser, adminPassword } = credentials;
  const userMatches = safeEqual(user, adminUser ?? '');
  const passwordMatches = safeEqual(password, adminPassword ?? '');
  const admin = adminUser !== undefined && adminPassword !== undefined && userMatches && passwordMatches;
  let tenant: string | undefined;
  for (const t of credentials.tenantTokens) {
    const userMatches = safeEqual(user, t.tenantId);
    if (safeEqual(password, t.token) && userMatches) tenant = t.tenantId;
  }
  return environmentPrincipal(admin, tenant);
}

/** The environment's admin (every scope) or tenant (every tenant scope), or an unknown secret. */
function environmentPrincipal(admin: boolean, tenant: string | undefined): AuthResult {
  if (admin) return { ok: true, principal: BOOTSTRAP_ADMIN };
  if (tenant !== undefined) {
    return { ok: true, principal: { role: 'tenant', tenantId: tenant, scopes: TENANT_SCOPES } };
  }
  return { ok: false, reason: 'unknown_key' };
}
