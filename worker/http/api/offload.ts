/**
 * The API's worker threads: where a tenant's large requests are handled, off the event loop that
 * every tenant's requests share. One API process serves every tenant on one event loop; a tenant
 * sending 10 MB appends or reading contexts of megabytes would otherwise hold it for the decoding,
 * parsing, validating, token counting, serializing and driver copies of each (tens to hundreds of
 * ms, more on a busy machine) while the other tenants' requests wait.
 *
 * - A body of at least {@link OFF_THREAD_BYTES} is moved (not copied) to a thread. Without a
 *   database the thread only reads its JSON, and the value comes back by structured clone. With one
 *   (`compactor api` gives its own), an append's whole handling runs there (offload-task.ts): the
 *   event loop sends the bytes and gets back the seqs, or the error to answer.
 * - A context read whose stored content is over {@link OFF_THREAD_CONTEXT_BYTES} (measured in
 *   Postgres before any message is read) is loaded, rendered and serialized in a thread, and its
 *   JSON body moved back as one buffer that the event loop only writes out.
 *
 * Smaller requests are handled where they are: a thread's round trip would cost them more than it
 * spares, and they never wait behind a large one in the threads' queue. The pool starts on the first
 * large request with at most one thread per core beyond the event loop's (at least one), none while
 * idle; each thread runs a few tasks at once (they wait on Postgres), holds at most two database
 * connections, and its heap is capped (its garbage is collected rather than left to grow). Running
 * from the TypeScript sources (tests, `tsx`), the threads load the same sources through tsx, as the
 * process does.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { LoadContextInput } from '../../../producer/context.ts';
import type { AppendResult } from '../../../producer/index.ts';
import { type JsonText, readJsonBytes } from '../body/json-text.ts';
import { ApiError, type ApiErrorBody } from '../errors.ts';
import type { AppendTarget } from './append.ts';
import type { OffloadThreadData, Outcome } from './offload-task.ts';

/** Bodies from this size (bytes) up are handled in a worker thread: about 1 ms of parsing. */
export const OFF_THREAD_BYTES = 256 * 1024;

/** Contexts whose stored content is larger (bytes) are read in a worker thread. */
export const OFF_THREAD_CONTEXT_BYTES = 512 * 1024;

/** An idle thread exits after this long (ms), giving back its memory. */
const IDLE_TIMEOUT_MS = 10_000;

/** Tasks one thread runs at once: they spend much of their time waiting on Postgres. */
const TASKS_PER_THREAD = 4;

/** Where the API's large requests are handled; see the module's comment. */
export interface ApiOffload {
  /**
   * Reads a request body's JSON (json-text.ts: UTF-8, nesting, JSON), in a thread from
   * {@link OFF_THREAD_BYTES} up.
   */
  readJson(bytes: Uint8Array): Promise<JsonText>;
  /**
   * Appends a large body's messages in a thread; null without a database (the caller appends on
   * the event loop).
   * @throws {ApiError} the answer for the append's failure, as the event loop's handler would give.
   * @throws {Error} an unexpected failure (answered 500), with its cause.
   */
  append:
    | ((bytes: Uint8Array, contentType: string | undefined, target: AppendTarget) => Promise<AppendResult>)
    | null;
  /**
   * Loads, renders and serializes a context in a thread: the response body, JSON. Null without a
   * database.
   * @throws {ApiError} / {Error} as `append`.
   */
  context: ((input: LoadContextInput) => Promise<Uint8Array>) | null;
  /** Stops the threads (their connections close with them). */
  close(): Promise<void>;
}

/**
 * The offload of an API whose bodies are at most `maxBodyBytes`, its threads connected to
 * `database` when given.
 */
export function apiOffload(options: {
  maxBodyBytes: number;
  database?: { url: string; schema?: string | undefined } | undefined;
}): ApiOffload {
  let pool: Piscina | undefined;
  const threads = () => {
    if (pool) return pool;
    const fromSources = import.meta.url.endsWith('.ts');
    const workerData: OffloadThreadData = {
      databaseUrl: options.database?.url,
      schema: options.database?.schema,
    };
    pool = new Piscina({
      filename: new URL(`./offload-task.${fromSources ? 'ts' : 'js'}`, import.meta.url).href,
      minThreads: 0,
      maxThreads: Math.max(1, availableParallelism() - 1),
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      idleTimeout: IDLE_TIMEOUT_MS,
      workerData,
      // A body decoded, parsed and validated, a few at once, with room to spare.
      resourceLimits: { maxOldGenerationSizeMb: 64 + Math.ceil((16 * options.maxBodyBytes) / 2 ** 20) },
      ...(fromSources ? { execArgv: ['--import', 'tsx'] } : {}),
    });
    return pool;
  };
  /** A view that owns its whole buffer is moved as it is; any other is copied first. */
  const movable = (bytes: Uint8Array) =>
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();

  const withDatabase = options.database !== undefined;
  return {
    async readJson(bytes) {
      if (bytes.byteLength < OFF_THREAD_BYTES) return readJsonBytes(bytes);
      const own = movable(bytes);
      return threads().run(own, { name: 'parse', transferList: [own.buffer as ArrayBuffer] });
    },
    append: withDatabase
      ? async (bytes, contentType, target) => {
          const own = movable(bytes);
          const task = { bytes: own, contentType, target };
          return taskValue<AppendResult>(
            await threads().run(task, { name: 'append', transferList: [own.buffer as ArrayBuffer] }),
          );
        }
      : null,
    context: withDatabase
      ? async (input) => taskValue<Uint8Array>(await threads().run(input, { name: 'context' }))
      : null,
    async close() {
      await pool?.destroy();
      pool = undefined;
    },
  };
}

/**
 * A task's value.
 * @throws {ApiError} the answer it carries; {Error} with the cause of an unexpected failure.
 */
function taskValue<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  const { type, message, field }: ApiErrorBody['error'] = outcome.error;
  if (type === 'api_error') throw new Error(outcome.cause ?? message);
  throw new ApiError(type, message, field);
}
