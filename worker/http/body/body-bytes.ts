/**
 * A request body's bytes, as every body-taking route of the API reads them: decoded of its
 * `Content-Encoding` (gzip, deflate or br; RFC 9110 §8.4) and held to the body limit, counted on the
 * bytes received and again on the bytes decoded. Decoding streams through Node's zlib, whose work
 * runs on libuv's thread pool rather than the event loop, and stops as soon as the decoded bytes
 * pass the limit: a decompression bomb is inflated by at most one chunk past it, then refused.
 */
import { pipeline, Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ApiError } from '../errors.ts';

/** The content codings the API decodes, by their names in `Content-Encoding` (lower case). */
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** How a body is limited, and how the limit is named in a refusal. */
export interface BodyLimit {
  /** The most bytes a body may have, received and decoded. */
  maxBytes: number;
  /** Where the limit is set, named in the 413 (`COMPACTOR_API_MAX_BODY_BYTES`). */
  setting: string;
}

/**
 * A check of a body's decoded bytes as they arrive, in order, each chunk once: it throws (an
 * `ApiError`) to refuse the body there, before the rest of it is received.
 */
export type ChunkCheck = (chunk: Uint8Array) => void;

/** Requests whose body was refused before it was read to its end. */
const unread = new WeakSet<Request>();
/** Requests whose body was read to its end. */
const readWhole = new WeakSet<Request>();

/**
 * The most bytes of a body that was never read (a request answered before its body was needed: 401,
 * 403, 404, 429) that the server reads and drops to keep the connection for the client's next
 * request: 64 KiB. Past it, or at an unknown length, closing the connection costs less.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * Whether the answer to `request` should close its connection (`connection: close`) rather than
 * leave the rest of its body on it: when its body was refused before it was read to its end (the
 * rest is still on the connection, or the stream was cancelled, so a client reusing it would find it
 * closed), or when its body was never read and is longer than {@link DRAIN_LIMIT_BYTES} or of
 * unknown length (chunked). Otherwise Node keeps a keep-alive connection by reading the whole rest
 * of the body and dropping it: megabytes for each request a tenant sends past its rate.
 */
export function bodyLeftUnread(request: Request): boolean {
  if (unread.has(request)) return true;
  if (readWhole.has(request) || request.method === 'GET' || request.method === 'HEAD') return false;
  if (request.headers.has('transfer-encoding')) return true;
  const length = request.headers.get('content-length');
  return length !== null && Number(length) > DRAIN_LIMIT_BYTES;
}

/**
 * The content coding of a request, from its `Content-Encoding` header: null for none (or only
 * `identity`).
 * @throws {ApiError} 415 for a coding the API does not decode, or for more than one.
 */
export function contentCoding(header: string | null): string | null {
  const codings = (header ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return null;
  const unknown = codings.find((coding) => !Object.hasOwn(DECODERS, coding));
  if (unknown !== undefined) {
    throw new ApiError(
      'unsupported_media_type_error',
      `Content-Encoding: "${unknown.slice(0, 40)}" is not supported; send the body as is, or with gzip, deflate or br`,
      'Content-Encoding',
    );
  }
  if (codings.length > 1) {
    throw new ApiError(
      'unsupported_media_type_error',
      `Content-Encoding: one coding at most (got "${codings.join(', ').slice(0, 80)}")`,
      'Content-Encoding',
    );
  }
  return codings[0] as string;
}

/**
 * Reads `request`'s body: its bytes as sent, or decoded of its content coding, each decoded chunk
 * passed to `check` as it arrives.
 * @throws {ApiError} 415 for a content coding the API does not decode ({@link contentCoding});
 *   413 when the body, as received or decoded, passes `limit.maxBytes` (a `Content-Length` over it
 *   is refused before a byte is read); 400 when the coded body is not valid data of its coding;
 *   whatever `check` throws. A body refused before its end is left unread ({@link bodyLeftUnread}).
 */
export async function readBodyBytes(
  request: Request,
  limit: BodyLimit,
  check?: ChunkCheck,
): Promise<Uint8Array> {
  try {
    const bytes = await readToEnd(request, limit, check);
    readWhole.add(request);
    return bytes;
  } catch (error) {
    if (request.body !== null) unread.add(request);
    throw error;
  }
}

async function readToEnd(request: Request, limit: BodyLimit, check?: ChunkCheck): Promise<Uint8Array> {
  const coding = contentCoding(request.headers.get('content-encoding'));
  const declared = request.headers.get('content-length');
  if (declared !== null && !request.headers.has('transfer-encoding') && Number(declared) > limit.maxBytes) {
    throw tooLarge(limit, coding);
  }
  if (request.body === null) return new Uint8Array(0);
  const received = capped(request.body, limit.maxBytes, () => tooLarge(limit, coding));
  if (coding === null) return collect(received, limit.maxBytes, () => tooLarge(limit, coding), check);
  const decoder = (DECODERS[coding] as () => Transform)();
  let decodeError: unknown;
  decoder.once('error', (error) => (decodeError = error));
  const decoded = pipeline(Readable.from(received, { objectMode: false }), decoder, () => {});
  try {
    return await collect(decoded, limit.maxBytes, () => tooLarge(limit, coding), check);
  } catch (error) {
    if (error !== decodeError || error instanceof ApiError) throw error;
    throw new ApiError(
      'invalid_request_error',
      `body: not valid ${coding} data (Content-Encoding: ${coding}): ${(error as Error).message}`,
      'body',
    );
  } finally {
    decoded.destroy();
  }
}

/** The chunks of `body`, refused with `refuse()` once they pass `maxBytes`. */
async function* capped(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  refuse: () => ApiError,
): AsyncGenerator<Uint8Array> {
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw refuse();
    yield chunk;
  }
}

/**
 * The chunks of `source` as one buffer of their own (movable to a worker thread as it is), each
 * passed to `check` first.
 * @throws {ApiError} `refuse()` once they pass `maxBytes`; whatever `source` or `check` throws.
 */
async function collect(
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
  refuse: () => ApiError,
  check: ChunkCheck | undefined,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.byteLength;
    if (size > maxBytes) throw refuse();
    check?.(chunk);
    chunks.push(chunk);
  }
  if (size === 0) return new Uint8Array(0);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function tooLarge(limit: BodyLimit, coding: string | null): ApiError {
  const decoded = coding === null ? '' : ` decoded (Content-Encoding: ${coding})`;
  return new ApiError(
    'request_too_large',
    `request body larger than ${limit.maxBytes} bytes${decoded} (${limit.setting})`,
  );
}
