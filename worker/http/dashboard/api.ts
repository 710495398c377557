/**
 * The ledger API: JSON, tenant-scoped (the tenant comes from the credentials; see context.ts).
 *
 * - `GET  /api/sessions?limit&cursor`: sessions with their size and last compaction
 * - `GET  /api/sessions/:sessionId`: one session, with its current checkpoint
 * - `GET  /api/sessions/:sessionId/compactions?limit&cursor`: its ledger, newest first
 * - `GET  /api/sessions/:sessionId/compactions/:compactionId?limit&cursor&content`: one compaction
 *   and the messages it archived (seq, role, kind, tokens; content, summary and the replaced
 *   checkpoint only with `content=true`)
 * - `POST /api/sessions/:sessionId/compact` `{ strategy?, waitMs? }`: enqueues a manual
 *   `session.run.completed` and waits (up to `waitMs`, default and at most 30 s) for its job to settle:
 *   200 with what happened (`outcome`: applied, skipped, failed, ... and a one-line `message`), or
 *   202 when it is still running then (the ledger will show it)
 * - `POST /api/sessions/:sessionId/compactions/:compactionId/restore` `{ dryRun? }`: restores it
 *   (`message` says what it did)
 *
 * `limit` is 1-200 (default 50); `cursor` is the `nextCursor` of the previous page. Errors are the
 * HTTP API's, `{ error: { type, message, field? } }` (../errors.ts): 400 bad input (the field
 * named), 401, 403 (another tenant named, or a write to a read-only dashboard), 404 unknown or
 * foreign session (the same answer), 409 a restore that must wait or cannot apply now.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { EnqueueResult } from '../../../producer/index.ts';
import type { Db } from '../../../producer/postgres/db.ts';
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import { InvalidInputError } from '../../../shared/contract/errors.ts';
import { idSchema, type RunCompletedInput } from '../../../shared/protocol/events.ts';
import { strategySchema } from '../../../shared/strategies/index.ts';
import {
  BadCursorError,
  getCompaction,
  getSession,
  listArchived,
  listLedger,
  listSessions,
} from '../../postgres/queries/dashboard.ts';
import { restoreCompaction } from '../../postgres/restore.ts';
import type { Lease } from '../../redis/lease.ts';
import { bodyReader } from '../body/body-reader.ts';
import { ApiError, sessionNotFound } from '../errors.ts';
import { type DashboardEnv, parseInput, scopeTenant } from './context.ts';
import type { JobWaiter } from './jobs.ts';
import { describeOutcome } from './outcome.ts';

/** What the API reads and writes through. */
export interface ApiDeps {
  db: Db;
  /** Enqueues an event (the producer's `runCompleted`). */
  enqueue(event: RunCompletedInput): Promise<EnqueueResult>;
  /** Waits for a compaction job to settle (jobs.ts). */
  jobs: Pick<JobWaiter, 'settle'>;
  leases: { acquire(tenantId: string, sessionId: string): Promise<Lease | null> };
  readOnly: boolean;
  logger: Logger;
}

const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2_000).optional(),
});
const compactionQuery = pageQuery.extend({ content: z.enum(['true', 'false', '1', '0']).optional() });
/**
 * How long "compact now" waits for the job at most, ms: a summary of a big session takes seconds,
 * and an HTTP request (and a person looking at a button) should not hang much longer.
 */
export const COMPACT_WAIT_MS = 30_000;

const compactBody = z
  .object({
    strategy: strategySchema.optional(),
    waitMs: z.number().int().min(0).max(COMPACT_WAIT_MS).optional(),
  })
  .strict();
const restoreBody = z.object({ dryRun: z.boolean().optional() }).strict();
/** A compaction id in a path. */
export const compactionId = z.uuid({ message: 'must be a compaction id (a UUID)' });

/** The API routes, to mount at `/api` behind authentication. */
export function apiRoutes(deps: ApiDeps): Hono<DashboardEnv> {
  const api = new Hono<DashboardEnv>();
  api.use('*', scopeTenant());
  api.use('*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      if (deps.readOnly) throw new ApiError('permission_error', 'the dashboard is read-only');
      const type = c.req.header('content-type') ?? '';
      if (!/^application\/json\b/i.test(type))
        throw new ApiError('unsupported_media_type_error', 'send content-type: application/json');
    }
    await next();
  });

  api.get('/sessions', async (c) => {
    const q = parseInput(pageQuery, c.req.query(), 'query');
    const page = await paged(() => listSessions(deps.db, c.get('tenantId'), q));
    return c.json({ sessions: page.items, nextCursor: page.nextCursor });
  });

  api.get('/sessions/:sessionId', async (c) => {
    return c.json({ session: await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId')) });
  });

  api.get('/sessions/:sessionId/compactions', async (c) => {
    const session = await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId'));
    const q = parseInput(pageQuery, c.req.query(), 'query');
    const page = await paged(() => listLedger(deps.db, session.tenantId, session.id, q));
    return c.json({ compactions: page.items, nextCursor: page.nextCursor });
  });

  api.get('/sessions/:sessionId/compactions/:compactionId', async (c) => {
    const session = await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId'));
    const id = parseInput(compactionId, c.req.param('compactionId'), 'path.compactionId');
    const q = parseInput(compactionQuery, c.req.query(), 'query');
    const content = q.content === 'true' || q.content === '1';
    const row = await ownCompaction(deps.db, session.tenantId, session.id, id);
    const archived = await paged(() => listArchived(deps.db, row, { ...q, content }));
    return c.json({
      compaction: content ? row : withoutContent(row),
      archived: {
        messages: archived.items,
        totalMessages: archived.totalMessages,
        totalTokens: archived.totalTokens,
        nextCursor: archived.nextCursor,
      },
    });
  });

  api.post('/sessions/:sessionId/compact', async (c) => {
    const session = await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId'));
    const body = parseInput(compactBody, await jsonBody(c.req.raw), 'body');
    const eventId = randomUUID();
    let result: EnqueueResult;
    try {
      result = await deps.enqueue({
        eventId,
        tenantId: session.tenantId,
        sessionId: session.id,
        trigger: 'manual',
        occurredAt: new Date().toISOString(),
        strategy: body.strategy,
      });
    } catch (error) {
      if (error instanceof InvalidInputError) throw new ApiError('invalid_request_error', error.message);
      throw new ApiError('unavailable_error', `could not enqueue: ${(error as Error).message}`);
    }
    const enqueued = { eventId, jobId: result.jobId, coalesced: result.coalesced };
    const log = { tenantId: session.tenantId, sessionId: session.id, eventId, jobId: result.jobId };
    const waitMs = body.waitMs ?? COMPACT_WAIT_MS;
    if (waitMs === 0) {
      deps.logger.info(log, 'manual compaction enqueued from the dashboard');
      return c.json({ ...enqueued, state: 'queued', outcome: 'running', message: 'enqueued' }, 202);
    }
    const started = performance.now();
    const settlement = await deps.jobs.settle(result.jobId, waitMs).catch((error: unknown) => {
      throw new ApiError(
        'unavailable_error',
        `enqueued, but the job cannot be followed: ${(error as Error).message}`,
      );
    });
    const jobResult = settlement.state === 'completed' ? settlement.result : null;
    const row = jobResult?.compactionId
      ? await getCompaction(deps.db, session.tenantId, session.id, jobResult.compactionId)
      : null;
    const described = describeOutcome(settlement, {
      waitedMs: performance.now() - started,
      coalesced: result.coalesced,
      tokens: row ? { before: row.tokensBefore, after: row.tokensAfter } : null,
    });
    deps.logger.info({ ...log, outcome: described.outcome }, 'manual compaction from the dashboard');
    return c.json(
      {
        ...enqueued,
        state: settlement.state,
        ...described,
        ...(settlement.state === 'completed' ? { result: settlement.result } : {}),
        ...(settlement.state === 'failed' ? { error: settlement.error } : {}),
        ...(row ? { compaction: withoutContent(row) } : {}),
      },
      settlement.state === 'running' ? 202 : 200,
    );
  });

  api.post('/sessions/:sessionId/compactions/:compactionId/restore', async (c) => {
    const session = await ownSession(deps.db, c.get('tenantId'), c.req.param('sessionId'));
    const id = parseInput(compactionId, c.req.param('compactionId'), 'path.compactionId');
    const body = parseInput(restoreBody, await jsonBody(c.req.raw), 'body');
    await ownCompaction(deps.db, session.tenantId, session.id, id);
    // The lease keeps a running compaction from paying for a summary the restore would fence off.
    const lease = await deps.leases.acquire(session.tenantId, session.id);
    if (!lease)
      throw new ApiError(
        'conflict_error',
        `session "${session.id}" is being compacted right now; try again shortly`,
      );
    try {
      const result = await restoreCompaction(deps.db, {
        tenantId: session.tenantId,
        sessionId: session.id,
        compactionId: id,
        dryRun: body.dryRun ?? false,
      });
      deps.logger.info(
        { tenantId: session.tenantId, sessionId: session.id, compactionId: id, status: result.status },
        'restore from the dashboard',
      );
      return c.json({
        status: result.status,
        message: restoreMessage(result.status, result.restoredSeqs.length),
        restoredSeqs: result.restoredSeqs,
        removedSummarySeq: result.removedSummarySeq,
        compaction: withoutContent(result.row),
      });
    } catch (error) {
      // Not applied, or later compactions still stand: the request is fine, the session's state is not.
      if (error instanceof InvalidInputError) throw new ApiError('conflict_error', error.message);
      throw error;
    } finally {
      await lease.release();
    }
  });

  return api;
}

/** The tenant's session. @throws {ApiError} 400 for a malformed id, 404 when unknown or foreign. */
export async function ownSession(db: Db, tenantId: string, rawId: string) {
  const sessionId = parseInput(idSchema, rawId, 'path.sessionId');
  const session = await getSession(db, tenantId, sessionId);
  if (!session) throw sessionNotFound(sessionId);
  return session;
}

/**
 * A compaction of the tenant's session.
 * @throws {ApiError} 404 when the session has no such compaction.
 */
export async function ownCompaction(
  db: Db,
  tenantId: string,
  sessionId: string,
  id: string,
): Promise<CompactionRow> {
  const row = await getCompaction(db, tenantId, sessionId, id);
  if (!row) throw new ApiError('not_found_error', `compaction ${id} not found for session "${sessionId}"`);
  return row;
}

/** What a restore did, in one line for a person. */
function restoreMessage(status: string, messages: number): string {
  const count = `${messages.toLocaleString('en-US')} archived message${messages === 1 ? '' : 's'}`;
  if (status === 'restored') return `restored: ${count} back in the session`;
  if (status === 'dry-run') return `dry run: would put ${count} back`;
  if (status === 'already-restored') return 'already restored: nothing changed';
  return status;
}

function withoutContent(row: CompactionRow) {
  const { summary: _s, checkpointBefore: _c, measuredEventIds: _m, ...rest } = row;
  return rest;
}

async function paged<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof BadCursorError)
      throw new ApiError('invalid_request_error', `query.cursor: ${error.message}`);
    throw error;
  }
}

/**
 * The most bytes a dashboard request body may have: its bodies are a strategy and a flag or two.
 * Larger is refused 413 before it is read to its end.
 */
export const DASHBOARD_MAX_BODY_BYTES = 64 * 1024;

/**
 * Reads the dashboard's request bodies by the API's rules (worker/http/api/body-reader.ts): size,
 * content coding, UTF-8, nesting, JSON; all on the event loop, the limit being small.
 */
const reader = bodyReader({ maxBodyBytes: DASHBOARD_MAX_BODY_BYTES, setting: "the dashboard's body limit" });

/**
 * A request's JSON body by the API's rules, `{}` when it has none.
 * @throws {ApiError} 413, 415 or 400 as the body reader refuses it.
 */
async function jsonBody(request: Request): Promise<unknown> {
  return (await reader.json(request, false)) ?? {};
}
