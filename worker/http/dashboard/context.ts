/**
 * What the dashboard's routes share: the request context (who is asking, for which tenant), and
 * input parsing with zod that names the bad field. Its errors are the HTTP API's `ApiError`s
 * (../errors.ts), answered in the API's shape `{ error: { type, message, field? } }`.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { printable } from '../../../shared/contract/errors.ts';
import { describeZodError, idSchema } from '../../../shared/protocol/events.ts';
import { ApiError } from '../errors.ts';
import type { Principal } from './auth.ts';

/** Hono's environment of the dashboard: set by the auth and tenant middlewares. */
export type DashboardEnv = { Variables: { principal: Principal; tenantId: string; nonce: string } };

/**
 * Parses `input` with `schema`.
 * @throws {ApiError} `invalid_request_error` naming the field in its message and as its `field`,
 *   e.g. `query.limit: Too big: expected number to be <=200` with field `query.limit`.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, root: string): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const path = parsed.error.issues[0]?.path ?? [];
  const field = printable([root, ...path.map(String)].join('.'));
  throw new ApiError('invalid_request_error', describeZodError(parsed.error, root), field);
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
        throw new ApiError('permission_error', 'this credential is scoped to its own tenant');
      }
      c.set('tenantId', principal.tenantId);
    } else if (named === undefined) {
      if (onMissing) return onMissing(c);
      throw new ApiError(
        'invalid_request_error',
        'query.tenant: required with the admin credential (name the tenant to see)',
      );
    } else {
      c.set('tenantId', named);
    }
    await next();
  };
  return handler;
}
