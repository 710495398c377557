/**
 * The one reader of request bodies of the API: every route that takes a body, `/v1/mcp` included,
 * reads it here, under the same rules:
 *
 * 1. its content coding decoded and its size held to the body limit, received and decoded
 *    (body-bytes.ts: 415 for a coding not decoded, 413 past the limit, 400 for corrupt data);
 * 2. a non-empty body sent as `application/json` in UTF-8, checked before it is parsed (415);
 *    the nesting of a JSON body counted on its bytes as they arrive (json-nesting.ts): 400 at the
 *    first level past the limit, before the rest is received, so that a body of megabytes nested
 *    millions deep costs the event loop one chunk rather than its whole size (its connection is
 *    closed after the answer: the rest of the body is still on it);
 * 3. its bytes read as JSON (json-text.ts: 400 at the first malformed UTF-8 byte, named by its
 *    offset; 400 past the nesting limit, counted before the parser runs; 400 when not JSON), on the
 *    event loop when small, in a worker thread from `OFF_THREAD_BYTES` up (api/offload.ts).
 *
 * Errors are `ApiError`s in the documented shape; `/v1/mcp` answers them as JSON-RPC errors.
 */
import { JsonNestingScanner, nestingProblemAt } from '../../../shared/contract/json-nesting.ts';
import { ApiError } from '../errors.ts';
import { type ChunkCheck, readBodyBytes } from './body-bytes.ts';
import { assertJsonContentType, bodyValue, type JsonText, readJsonBytes } from './json-text.ts';

/** Where large bodies' JSON is read (the API's worker threads, worker/http/api/offload.ts). */
export interface JsonOffload {
  /** Reads bytes as {@link readJsonBytes} does, wherever it chooses to. */
  readJson(bytes: Uint8Array): Promise<JsonText>;
}

/** Reads request bodies; see the module's comment. */
export interface BodyReader {
  /**
   * The body's bytes, decoded and within the limit; when there are any, the content type is
   * checked to be JSON. For a route that hands the bytes on (a large append goes to a thread whole).
   * @throws {ApiError} 413, 415 or 400 as steps 1 and 2 of the module's comment.
   */
  bytes(request: Request): Promise<Uint8Array>;
  /**
   * The JSON value of bytes read by {@link bytes}.
   * @returns undefined for an empty body when not `required`.
   * @throws {ApiError} 400 as step 3, or for an empty body when `required`.
   */
  value(bytes: Uint8Array, request: Request, required: boolean): Promise<unknown>;
  /** {@link value} of {@link bytes}: the body's JSON value, by every rule. */
  json(request: Request, required: boolean): Promise<unknown>;
}

/** Requests whose body the reader refused, by any of its rules. */
const refused = new WeakSet<Request>();

/**
 * Whether a {@link BodyReader} refused `request`'s body (413, 415 or 400 by the rules of the
 * module's comment): the API counts such a refusal against its tenant's request rate
 * (api/tenant-limits.ts `penalize`).
 */
export function bodyRefused(request: Request): boolean {
  return refused.has(request);
}

/** `read()`, with `request` remembered as refused when it throws an `ApiError`. */
async function refusing<T>(request: Request, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ApiError) refused.add(request);
    throw error;
  }
}

/**
 * The reader of an API whose bodies are at most `maxBodyBytes` (named `setting` in a 413), whose
 * large bodies are read by `offload`. The dashboard's routes read theirs with it too.
 */
export function bodyReader(options: {
  maxBodyBytes: number;
  setting: string;
  /** Where large bodies are read; absent: every body is read on the event loop (keep the limit small). */
  offload?: JsonOffload;
}): BodyReader {
  const limit = { maxBytes: options.maxBodyBytes, setting: options.setting };
  const reader: BodyReader = {
    bytes(request) {
      return refusing(request, async () => {
        const contentType = request.headers.get('content-type') ?? undefined;
        const bytes = await readBodyBytes(request, limit, isJson(contentType) ? nestingCheck() : undefined);
        if (bytes.byteLength > 0) assertJsonContentType(contentType);
        return bytes;
      });
    },
    value(bytes, request, required) {
      return refusing(request, async () => {
        const read = options.offload ? await options.offload.readJson(bytes) : readJsonBytes(bytes);
        return bodyValue(read, request.headers.get('content-type') ?? undefined, required);
      });
    },
    async json(request, required) {
      return reader.value(await reader.bytes(request), request, required);
    },
  };
  return reader;
}

/** Whether a body sent with `contentType` is read as JSON (assertJsonContentType passes it). */
function isJson(contentType: string | undefined): boolean {
  try {
    assertJsonContentType(contentType);
    return true;
  } catch {
    return false;
  }
}

/** A check refusing a JSON body at its first level of nesting past the limit (400, field `body`). */
function nestingCheck(): ChunkCheck {
  const scanner = new JsonNestingScanner();
  return (chunk) => {
    const at = scanner.push(chunk);
    if (at !== null) throw new ApiError('invalid_request_error', `body: ${nestingProblemAt(at)}`, 'body');
  };
}
