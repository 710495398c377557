/**
 * The digest an idempotent append is recorded with (`append_requests.request_hash`): what the
 * request asked for, so a retry is told from another request reusing its `Idempotency-Key`.
 * Pure: hashing only.
 */
import { createHash } from 'node:crypto';

/**
 * SHA-256 (hex) of the session named in the path and the JSON body as parsed: the same request
 * sent again, whatever its whitespace, has the same digest; another session, another message or
 * the same messages in another key order does not.
 */
export function requestHash(sessionId: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([sessionId, body]))
    .digest('hex');
}
