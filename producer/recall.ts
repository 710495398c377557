/**
 * Recall: what compactions archived out of a session's context, searched and read back by the agent
 * whose session it is. `searchRecall` finds archived messages by their words (a file path, a command,
 * an error text) and gives their seqs with a snippet, best first; `readRecall` gives the originals of
 * a seq range exactly as the agent wrote them (images and documents included). Both follow the
 * archive's own rules: only the tenant's own sessions, nothing a retention pass expired, nothing a
 * restore put back into the live history (that is in the context again).
 */

import { InvalidInputError, SessionNotFoundError } from '../shared/contract/errors.ts';
import type { SessionFormat } from '../shared/contract/session-format.ts';
import { describeZodError } from '../shared/protocol/events.ts';
import {
  type RecallReadInput,
  type RecallReadResult,
  type RecallSearchInput,
  type RecallSearchResult,
  recallReadQuerySchema,
  recallSearchQuerySchema,
} from '../shared/recall/schemas.ts';
import { recallSnippet } from '../shared/recall/snippet.ts';
import type { Db } from './postgres/db.ts';
import { readArchive, searchArchive, sessionFormat } from './postgres/recall-query.ts';

/** Which session's archive to look in. */
export interface RecallTarget {
  tenantId: string;
  sessionId: string;
}

/**
 * Searches the archive of a session (and, with `scope: 'lineage'`, the default, of every session
 * it continued from or in) for the archived messages holding every word of `query`.
 * @example
 * const { hits } = await searchRecall(db, { tenantId: 'acme', sessionId: 's-1', query: 'src/auth/token.ts' });
 * // hits[0]: { sessionId: 's-1', seq: 42, snippet: '… edited «src/auth/token.ts» …', … }
 * @throws {InvalidInputError} naming the field when the query is empty, longer than 500 characters,
 *   or `limit` is not 1-50.
 * @throws {SessionNotFoundError} when the tenant has no such session.
 */
export async function searchRecall(
  db: Db,
  input: RecallTarget & RecallSearchInput,
): Promise<RecallSearchResult> {
  const { tenantId, sessionId, ...rest } = input;
  const parsed = recallSearchQuerySchema.safeParse(rest);
  if (!parsed.success) throw new InvalidInputError(describeZodError(parsed.error, 'search'));
  const rows = await searchArchive(db, tenantId, sessionId, parsed.data);
  if (rows.length === 0 && (await sessionFormat(db, tenantId, sessionId)) === undefined) {
    throw new SessionNotFoundError(tenantId, sessionId);
  }
  return {
    sessionId,
    hits: rows.map((r) => ({
      sessionId: r.session_id,
      seq: Number(r.seq),
      role: r.role,
      kind: r.kind,
      compactionId: r.compaction_id,
      archivedAt: new Date(r.archived_at).toISOString(),
      score: Number(r.score),
      snippet: recallSnippet(
        { text: r.around, cutBefore: r.cut_before, cutAfter: r.cut_after },
        parsed.data.query,
      ),
    })),
  };
}

/**
 * Reads back the archived originals of seqs `fromSeq..toSeq` of one session, by seq, their content
 * exactly as stored. Seqs the archive does not hold (still live, restored, expired by retention, or
 * never written) are absent. Returns messages while their stored content adds up to `maxBytes`
 * (default 1 MiB; the first one whatever its size); `nextSeq` says where to go on.
 * @throws {InvalidInputError} naming the field when the range is reversed, wider than 1,000 seqs, or
 *   `maxBytes` is not 1 B-8 MiB.
 * @throws {SessionNotFoundError} when the tenant has no such session.
 */
export async function readRecall(db: Db, input: RecallTarget & RecallReadInput): Promise<RecallReadResult> {
  const { tenantId, sessionId, ...rest } = input;
  const parsed = recallReadQuerySchema.safeParse(rest);
  if (!parsed.success) throw new InvalidInputError(describeZodError(parsed.error, 'read'));
  const format = await sessionFormat(db, tenantId, sessionId);
  if (format === undefined) throw new SessionNotFoundError(tenantId, sessionId);
  const rows = await readArchive(db, tenantId, sessionId, parsed.data);
  const cut = rows.find((r) => r.cut);
  return {
    sessionId,
    format: format as SessionFormat,
    messages: rows
      .filter((r) => !r.cut)
      .map((r) => ({
        seq: Number(r.seq),
        role: r.role,
        kind: r.kind,
        content: r.content,
        compactionId: r.compaction_id,
        archivedAt: new Date(r.archived_at).toISOString(),
        bytes: r.bytes,
      })),
    nextSeq: cut ? Number(cut.seq) : null,
  };
}
