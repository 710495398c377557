/**
 * The tasks the API's worker threads run (offload.ts): reading a large body's JSON, a whole large
 * append, and a whole large context read, each on the thread's own connections to the database, so
 * that none of their decoding, parsing, validating, counting, serializing and copying holds the
 * event loop every tenant's requests share. A task answers an outcome, never throws: its error is
 * the API's answer (api-errors.ts), which the event loop sends as it would its own.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { type LoadContextInput, loadContext } from '../../../producer/context.ts';
import type { AppendResult } from '../../../producer/index.ts';
import { type Database, openDatabase } from '../../../producer/postgres/db.ts';
import { bodyValue, type JsonText, readJsonBytes } from '../body/json-text.ts';
import type { ApiErrorBody } from '../errors.ts';
import { toApiError } from './api-errors.ts';
import { type AppendTarget, appendBody } from './append.ts';
import { jsonPieces } from './stream-json.ts';

/** Where a thread's connections go: given to every thread of the pool as its `workerData`. */
export interface OffloadThreadData {
  /** The compactor database; absent: the thread only reads bodies. */
  databaseUrl?: string | undefined;
  /** Its schema (`COMPACTOR_SCHEMA`). */
  schema?: string | undefined;
}

/** A task's answer: its value, or the API's error (with the cause of an unexpected one, to log). */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: ApiErrorBody['error']; cause?: string };

/** Connections of this thread: few, and closed when idle, so a thread the pool retires holds none. */
const POOL_SIZE = 2;
const IDLE_CLOSE_S = 5;

/**
 * The CPU priority (nice) of these threads: below the event loop's, so that when a large request
 * and the other tenants' small ones want the same core, the small ones go first.
 */
const THREAD_NICE = 10;

let database: Database | undefined;

lowerThreadPriority();

/**
 * Lowers this thread's CPU priority to {@link THREAD_NICE}. On Linux a thread is a task of its own
 * whose nice `setpriority(PRIO_PROCESS, tid)` sets (setpriority(2), "Linux notes"); its id is
 * read from `/proc/thread-self`. Elsewhere, or without the right, the thread keeps the process's.
 */
function lowerThreadPriority(): void {
  try {
    const tid = /\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1];
    if (tid !== undefined) setPriority(Number(tid), THREAD_NICE);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}

function db() {
  const { databaseUrl, schema } = (workerData ?? {}) as OffloadThreadData;
  if (!databaseUrl) throw new Error('this API thread was started without a database');
  database ??= openDatabase(databaseUrl, {
    max: POOL_SIZE,
    idleTimeoutS: IDLE_CLOSE_S,
    applicationName: 'compactor-api',
    ...(schema ? { schema } : {}),
  });
  return database.db;
}

/** Reads a body's bytes as the event loop would (json-text.ts: a malformed UTF-8 byte is refused). */
export function parse(bytes: Uint8Array): JsonText {
  return readJsonBytes(bytes);
}

/** A large append, from its body's bytes to the rows written (append.ts). */
export async function append(task: {
  bytes: Uint8Array;
  contentType: string | undefined;
  target: AppendTarget;
}): Promise<Outcome<AppendResult>> {
  return outcome(task.target.sessionId, async () => {
    const body = bodyValue(parse(task.bytes), task.contentType, true);
    return appendBody(db(), body, task.target);
  });
}

/**
 * A large context read: loaded, rendered and serialized here; the JSON body comes back as one
 * buffer moved (not copied) to the event loop, which only writes it out.
 */
export async function context(input: LoadContextInput): Promise<unknown> {
  const read = await outcome(input.sessionId, async () => {
    const loaded = await loadContext(db(), input);
    return new TextEncoder().encode([...jsonPieces({ ...loaded }, ['messages'])].join(''));
  });
  if (!read.ok) return read;
  const body = read.value;
  return move({
    get [transferableSymbol]() {
      return [body.buffer];
    },
    get [valueSymbol]() {
      return { ok: true, value: body };
    },
  });
}

async function outcome<T>(sessionId: string, run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    const answer = toApiError(error, sessionId);
    return {
      ok: false,
      error: answer.body().error,
      ...(answer.type === 'api_error' ? { cause: error.message } : {}),
    };
  }
}

/**
 * The module's default task (reading a body). Piscina's worker loads a task module with a default
 * export through the ES module loader that tsx hooks (tests run the TypeScript sources); without
 * one it falls back to a loader that cannot read `.ts`.
 */
export default parse;
