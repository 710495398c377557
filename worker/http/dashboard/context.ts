/**
 * What the dashboard's routes share: the request context (who is asking, for which tenant), the
 * error type answered as `{ error: { status, message } }`, and input parsing with zod that names
 * the bad field.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { describeZodError, idSchema } from '../../../shared/protocol/events.ts';
import type { Principal } from './auth.ts';

/** Hono's environment of the dashboard: set by the auth and tenant middlewares. */
export type DashboardEnv = { Variables: { principal: Principal; tenantId: string; nonce: string } };

/** An error answered with its status: `{ error: { status, message } }` (or an HTML page). */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 500 | 503,
    message: string,
  ) {
    super(message);
  }
}

/** The answer for an unknown session, and for another tenant's: the caller cannot tell them apart. */
export function sessionNotFound(sessionId: string): HttpError {
  return new HttpError(404, `session "${sessionId}" not found`);
}

/**
 * Parses `input` with `schema`.
 * @throws {HttpError} 400 naming the field, e.g. `query.limit: Too big: expected number to be <=200`.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root: string): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new HttpError(400, describeZodError(parsed.error, root));
  return parsed.data;
}

/**
 * Resolves the tenant a request may see: a tenant credential's own; the admin names one in
 * `?tenant=`. A tenant credential naming another tenant is refused (403), before any lookup.
 * @param onMissing what an admin request without `?tenant=` gets (a 400, or a page asking for it).
 */
export function scopeTenant(onMissing?: (c: Context<DashboardEnv>) => Response | Promise<Response>) {
  const handler: MiddlewareHandler<DashboardEnv> = async (c, next) => {
    const principal = c.get('principal');
    const named = c.req.query('tenant');
    if (named !== undefined) parseInput(idSchema, named, 'query.tenant');
    if (principal.role === 'tenant') {
      if (named !== undefined && named !== principal.tenantId) {
        throw new HttpError(403, 'this credential is scoped to its own tenant');
      }
      c.set('tenantId', principal.tenantId);
    } else if (named === undefined) {
      if (onMissing) return onMissing(c);
      throw new HttpError(400, 'query.tenant: required with the admin credential (name the tenant to see)');
    } else {
      c.set('tenantId', named);
    }
    await next();
  };
  return handler;
}
