/**
 * Idempotent appends: an append given an idempotency key records the key in `append_requests` in
 * the same transaction as its messages. The key is claimed first (an `INSERT … ON CONFLICT DO
 * UPDATE` that waits for a concurrent transaction holding the same key to end), so of two requests
 * with one key, at once or one after the other, exactly one appends; the other gets the seqs the
 * first one appended. Keys are kept at least {@link APPEND_REQUEST_TTL_MS}, then deleted by
 * {@link pruneAppendRequests}.
 */
import { IdempotencyKeyReusedError, InvalidInputError } from '../shared/contract/errors.ts';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../shared/protocol/api.ts';
import {
  claimAppendRequest,
  deleteAppendRequestsBefore,
  recordAppendRequest,
} from './postgres/append-requests.ts';
import type { Db, Tx } from './postgres/db.ts';

/** How long an append's idempotency key is honoured at least, ms (24 hours). */
export const APPEND_REQUEST_TTL_MS = 24 * 60 * 60 * 1000;

export { MAX_IDEMPOTENCY_KEY_LENGTH };

/** What makes an append idempotent (see `AppendOptions.idempotency` in sessions.ts). */
export interface AppendIdempotency {
  /** The client's key, 1-255 characters; one append per tenant and key. */
  key: string;
  /**
   * A digest of what the request asked for (the session and the messages): the same key with
   * another digest is refused with {@link IdempotencyKeyReusedError}.
   */
  requestHash: string;
}

/** An append recorded under a key earlier. */
export interface RecordedAppend {
  sessionId: string;
  seqs: number[];
}

/** @throws {InvalidInputError} naming the field, when the key or the hash is unusable. */
export function checkIdempotency(idempotency: AppendIdempotency): void {
  const { key, requestHash } = idempotency;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new InvalidInputError(
      `idempotency.key: expected 1-${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${typeof key === 'string' ? key.length : typeof key}`,
    );
  }
  if (typeof requestHash !== 'string' || requestHash.length === 0) {
    throw new InvalidInputError('idempotency.requestHash: expected a digest of the request');
  }
}

/**
 * Claims `key` for this transaction. Waits while another open transaction holds the same key, then
 * either claims it (the caller appends, then calls {@link recordAppend}) or finds the append that
 * used it.
 * @returns null when claimed; the earlier append when the key was used for this same request.
 * @throws {IdempotencyKeyReusedError} when the key was used for another request.
 */
export async function claimIdempotencyKey(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  idempotency: AppendIdempotency,
): Promise<RecordedAppend | null> {
  const row = await claimAppendRequest(tx, {
    tenantId,
    idempotencyKey: idempotency.key,
    requestHash: idempotency.requestHash,
    sessionId,
  });
  if (!row || row.inserted) return null;
  if (row.requestHash !== idempotency.requestHash) {
    throw new IdempotencyKeyReusedError(
      `idempotency key "${idempotency.key}" was already used for a different request ` +
        '(another session or other messages); use a new key for a new request',
    );
  }
  const seqs: number[] = [];
  for (let seq = row.firstSeq; seq <= row.lastSeq; seq++) seqs.push(seq);
  return { sessionId: row.sessionId, seqs };
}

/** Records where the append that claimed `key` went, in the claiming transaction. */
export async function recordAppend(
  tx: Tx,
  tenantId: string,
  key: string,
  appended: RecordedAppend,
): Promise<void> {
  await recordAppendRequest(tx, tenantId, key, {
    sessionId: appended.sessionId,
    firstSeq: appended.seqs[0] ?? -1,
    lastSeq: appended.seqs[appended.seqs.length - 1] ?? -1,
  });
}

/**
 * Deletes idempotency keys older than `olderThanMs` (default {@link APPEND_REQUEST_TTL_MS}), at most
 * `limit` rows (default 10,000) per call, oldest first. A retry carrying a deleted key appends again.
 * @returns the number of keys deleted.
 */
export async function pruneAppendRequests(
  db: Pick<Db, 'execute'>,
  options: { olderThanMs?: number; limit?: number } = {},
): Promise<number> {
  return deleteAppendRequestsBefore(
    db,
    options.olderThanMs ?? APPEND_REQUEST_TTL_MS,
    options.limit ?? 10_000,
  );
}
