/**
 * Who is asking: the dashboard's credentials and how a request proves it holds one. Pure apart
 * from hashing. Two roles:
 * - `admin` (COMPACTOR_DASHBOARD_TOKEN as a bearer token, or COMPACTOR_DASHBOARD_USER/PASSWORD as
 *   basic auth): Bull Board, `/metrics`, and any tenant's sessions (naming the tenant);
 * - `tenant` (an entry of COMPACTOR_DASHBOARD_TOKENS, as a bearer token or as basic auth with the
 *   tenant id as user name): that tenant's sessions only.
 * Secrets are compared in constant time (SHA-256 of both sides, then `timingSafeEqual`), and every
 * configured secret is compared on every request, so timing tells nothing about which one matched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../../../shared/contract/errors.ts';
import type { DashboardConfig } from '../../../shared/runtime/config.ts';

/** An authenticated caller. */
export type Principal = { role: 'admin' } | { role: 'tenant'; tenantId: string };

/** The credentials part of the dashboard's configuration. */
export type Credentials = Pick<
  DashboardConfig,
  'adminToken' | 'adminUser' | 'adminPassword' | 'tenantTokens'
>;

/** The outcome of checking an `Authorization` header. */
export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'missing' | 'invalid' };

/** Thrown when the dashboard must not start as configured; the message says what to set. */
export class DashboardConfigError extends ConfigError {
  override name = 'DashboardConfigError';
}

/** Whether any credential is configured. */
export function hasCredentials(credentials: Credentials): boolean {
  return (
    credentials.adminToken !== undefined ||
    credentials.adminPassword !== undefined ||
    credentials.tenantTokens.length > 0
  );
}

/** Whether `host` only accepts connections from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
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
        'COMPACTOR_DASHBOARD_PASSWORD, and/or COMPACTOR_DASHBOARD_TOKENS (tenant:token,...); ' +
        'or pass --insecure with a loopback --host to run without authentication',
    );
  }
  if (!isLoopback(host)) {
    throw new DashboardConfigError(
      `--insecure is only allowed on a loopback host (127.0.0.1, ::1, localhost), not "${host}"`,
    );
  }
}

/**
 * Checks an `Authorization` header (`Bearer <token>` or `Basic <base64 user:password>`).
 * Basic auth splits at the first `:`, so a tenant whose id holds `:` uses its bearer token.
 */
export function authenticate(header: string | undefined, credentials: Credentials): AuthResult {
  if (!header) return { ok: false, reason: 'missing' };
  const space = header.indexOf(' ');
  const scheme = header.slice(0, Math.max(space, 0)).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (space < 0 || value === '') return { ok: false, reason: 'invalid' };
  if (scheme === 'bearer') return bearer(value, credentials);
  if (scheme === 'basic') return basic(value, credentials);
  return { ok: false, reason: 'invalid' };
}

function bearer(token: string, credentials: Credentials): AuthResult {
  // Compare against every secret (no early exit), then decide.
  const admin = credentials.adminToken !== undefined && safeEqual(token, credentials.adminToken);
  let tenant: string | undefined;
  for (const t of credentials.tenantTokens) if (safeEqual(token, t.token)) tenant = t.tenantId;
  if (admin) return { ok: true, principal: { role: 'admin' } };
  if (tenant !== undefined) return { ok: true, principal: { role: 'tenant', tenantId: tenant } };
  return { ok: false, reason: 'invalid' };
}

function basic(encoded: string, credentials: Credentials): AuthResult {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { ok: false, reason: 'invalid' };
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const { adminUser, adminPassword } = credentials;
  const userMatches = safeEqual(user, adminUser ?? '');
  const passwordMatches = safeEqual(password, adminPassword ?? '');
  const admin = adminUser !== undefined && adminPassword !== undefined && userMatches && passwordMatches;
  let tenant: string | undefined;
  for (const t of credentials.tenantTokens) {
    const userMatches = safeEqual(user, t.tenantId);
    if (safeEqual(password, t.token) && userMatches) tenant = t.tenantId;
  }
  if (admin) return { ok: true, principal: { role: 'admin' } };
  if (tenant !== undefined) return { ok: true, principal: { role: 'tenant', tenantId: tenant } };
  return { ok: false, reason: 'invalid' };
}

/** Constant-time equality of two strings of any lengths (compares their SHA-256 digests). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
