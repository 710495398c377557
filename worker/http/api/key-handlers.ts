/**
 * The handlers of the key routes (`/v1/admin/keys`, routes.ts): issue, list, revoke and rotate
 * keys through worker/postgres/api-keys.ts. The app (app.ts) checks the `admin` scope first.
 */
import type { Context } from 'hono';
import type { Db } from '../../../producer/postgres/db.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { createKey, listKeys, revokeKey, rotateKey } from '../../postgres/api-keys.ts';
import { ApiError, fieldOfMessage, parseInput } from '../errors.ts';
import {
  createKeyBodySchema,
  keyPathSchema,
  listKeysQuerySchema,
  rotateKeyBodySchema,
} from './key-schemas.ts';
import type { OperationId } from './routes.ts';

/** The key routes' operation ids. */
type KeyOperation = Extract<OperationId, 'createKey' | 'listKeys' | 'revokeKey' | 'rotateKey'>;

/** Reads a request's JSON body (app.ts's reader; `required`: an empty body is a 400). */
type ReadJson<C extends Context> = (c: C, required: boolean) => Promise<unknown>;

/** The handlers, on `db`, reading bodies with `readJson`. */
export function keyHandlers<C extends Context>(
  db: Db,
  readJson: ReadJson<C>,
): Record<KeyOperation, (c: C) => Promise<Response>> {
  return {
    async createKey(c) {
      const body = parseInput(createKeyBodySchema, await readJson(c, true), 'body');
      const issued = await createKey(db, {
        tenantId: body.tenantId ?? null,
        name: body.name,
        scopes: body.scopes,
        expiresAt: body.expiresAt === undefined ? null : new Date(body.expiresAt),
      }).catch(badInput);
      return c.json(issued, 201);
    },

    async listKeys(c) {
      const query = parseInput(listKeysQuerySchema, c.req.query(), 'query');
      const keys = await listKeys(db, { tenantId: query.tenant, all: query.all === 'true' });
      return c.json({ keys }, 200);
    },

    async revokeKey(c) {
      const { keyId } = parseInput(keyPathSchema, c.req.param(), 'path');
      const key = await revokeKey(db, keyId);
      if (!key) throw noUsableKey(keyId);
      return c.json({ key }, 200);
    },

    async rotateKey(c) {
      const { keyId } = parseInput(keyPathSchema, c.req.param(), 'path');
      // No body asks for nothing; a body of JSON `null` is a body, and not the object it must be.
      const sent = await readJson(c, false);
      const body = parseInput(rotateKeyBodySchema, sent === undefined ? {} : sent, 'body');
      const rotated = await rotateKey(db, keyId, { graceMs: (body.graceSeconds ?? 0) * 1000 });
      if (!rotated) throw noUsableKey(keyId);
      return c.json({ ...rotated.issued, old: rotated.old }, 201);
    },
  };
}

function noUsableKey(keyId: string): ApiError {
  return new ApiError('not_found_error', `no usable key "${keyId}" (unknown, revoked or expired)`);
}

/** The store's refusal of a bad field, as a 400 naming it. */
function badInput(error: unknown): never {
  if (!(error instanceof InvalidInputError)) throw error;
  const message = error.message.replace(/^invalid key: /, '');
  throw new ApiError('invalid_request_error', message, fieldOfMessage(message));
}
