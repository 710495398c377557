/**
 * `POST /v1/sessions/{id}/messages` without HTTP: a parsed body checked against the append schema
 * and appended to the session's live history, under the tenant's limits and the request's
 * idempotency key. The API runs it on its event loop for small bodies and in a worker thread for
 * large ones (offload.ts), so both answer alike.
 */
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import {
  type AppendResult,
  appendToLiveSession,
  type ChatCompletionsMessage,
  type NativeMessage,
} from '../../../producer/index.ts';
import type { Db } from '../../../producer/postgres/db.ts';
import type { Limits } from '../../../shared/policy/limits.ts';
import { type ApiMessage, appendRequestSchema } from '../../../shared/protocol/api.ts';
import { parseInput } from '../errors.ts';
import { requestHash } from './idempotency.ts';

/** Who appends where, and how (the request's parts other than its body). */
export interface AppendTarget {
  tenantId: string;
  /** The session named in the path (its lineage is followed to the live session). */
  sessionId: string;
  /** The request's `Idempotency-Key`, if sent. */
  idempotencyKey?: string | undefined;
  /**
   * The limits of a tenant whose policy sets none (the API's defaults); the tenant policy's own
   * win, field by field, in the append's transaction.
   */
  defaultLimits: Limits;
}

/**
 * Appends the messages of `body` (the request's parsed JSON) to the target session.
 * @returns the live session written and the seqs given (or those of the first request with the key).
 * @throws {ApiError} 400 naming the first bad field of `body`.
 * @throws the producer's errors (session not found, limits, idempotency, tool_use ids), which
 *   api-errors.ts maps to answers.
 */
export async function appendBody(db: Db, body: unknown, target: AppendTarget): Promise<AppendResult> {
  const { messages, contextVersion } = parseInput(appendRequestSchema, body, 'body');
  const key = target.idempotencyKey;
  return appendToLiveSession(db, target.tenantId, target.sessionId, messages.map(nativeMessage), {
    ...(contextVersion === undefined ? {} : { contextVersion }),
    ...(key === undefined ? {} : { idempotency: { key, requestHash: requestHash(target.sessionId, body) } }),
    limits: target.defaultLimits,
  });
}

/**
 * A validated API message as the producer stores it. Its blocks may be of any type, which the
 * SDK's `MessageParam` type does not list; the producer keeps them exactly.
 */
export function nativeMessage({ pinned, ...message }: ApiMessage): NativeMessage {
  return { message: message as MessageParam | ChatCompletionsMessage, pinned: pinned ?? false };
}
