/**
 * A `fetch` for the Anthropic SDK (its `fetch` client option) over `node:http`/`node:https` with a
 * keep-alive agent: the same requests and answers as the platform's `fetch`, at a fraction of its
 * CPU per request. Node's global `fetch` (its bundled undici) runs every request and answer through
 * WHATWG streams and the full Fetch algorithm; at 128 summaries in flight that was a visible part
 * of a worker's event loop. (`undici.request`, undici's cheap path, is not exposed by Node itself
 * and would be a new dependency.)
 *
 * What it does: sends the method, headers and body (a string or bytes; any other body, such as a
 * stream or form data, goes to the platform's `fetch`, as does a URL that is not http or https);
 * answers with a standard `Response` whose body streams the answer as it arrives (server-sent
 * events included), with the status, status text and every header; honours `init.signal` before
 * the request, while waiting for the answer and while its body is read, with an `AbortError` as
 * `fetch` gives; and, as Node's documentation advises for keep-alive agents, sends a request again
 * once when a reused idle connection turns out to have been closed by the server (`ECONNRESET`
 * before any answer), which is what `fetch` does too. Redirects are not followed (the Messages API
 * sends none); a connection error rejects with a `TypeError` whose `cause` is the error, as
 * `fetch`'s does, so the SDK classifies it as a connection error and retries it as usual.
 *
 * Connections and a process's exit: a connection waiting in the pool is unreferenced (the agent
 * unrefs a socket it keeps), so idle connections never hold a process open and need no closing; a
 * connection is in use, and referenced, from its request until its answer has been read to the end
 * (it then goes back to the pool) or its body cancelled or aborted (the connection is destroyed).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** The signature the SDK's `fetch` option takes (the platform's). */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Options of {@link createKeepAliveFetch}. */
export interface KeepAliveFetchOptions {
  /**
   * Idle connections kept per origin for the next requests (the agent's `maxFreeSockets`). Default
   * 256: more than a worker's concurrency, so a busy worker never reconnects.
   */
  maxIdleSockets?: number;
  /** The `fetch` for what this one does not handle; default the platform's `globalThis.fetch`. */
  fallback?: FetchFunction;
}

/** Statuses whose answer has no body (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch`-compatible function over keep-alive `node:http` and `node:https` agents of its own.
 * @throws {RangeError} when `maxIdleSockets` is not a positive integer.
 */
export function createKeepAliveFetch(options: KeepAliveFetchOptions = {}): FetchFunction {
  const maxFreeSockets = options.maxIdleSockets ?? 256;
  if (!Number.isInteger(maxFreeSockets) || maxFreeSockets < 1) {
    throw new RangeError(
      `keep-alive fetch: maxIdleSockets must be a positive integer, got ${maxFreeSockets}`,
    );
  }
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxFreeSockets }),
    'https:': new HttpsAgent({ keepAlive: true, maxFreeSockets }),
  };
  const fallback = options.fallback ?? ((input, init) => globalThis.fetch(input, init));

  return async function keepAliveFetch(input, init = {}) {
    if (input instanceof Request) return fallback(input, init);
    const url = typeof input === 'string' ? new URL(input) : input;
    const body = bodyBytes(init.body);
    if (body === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      return fallback(input, init);
    }
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const method = (init.method ?? 'GET').toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== null) headers['content-length'] = String(body.byteLength);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = agents[url.protocol];
    const attempt = (retryStale: boolean): Promise<Response> =>
      new Promise((resolve, reject) => {
        const request = send(url, { method, headers, agent, ...(signal ? { signal } : {}) });
        request.once('response', (answer) => resolve(responseOf(answer, method, signal)));
        request.once('error', (error: NodeJS.ErrnoException) => {
          if (signal?.aborted) reject(abortError(signal));
          else if (retryStale && request.reusedSocket && error.code === 'ECONNRESET') resolve(attempt(false));
          else reject(new TypeError('fetch failed', { cause: error }));
        });
        request.end(body ?? undefined);
      });
    return attempt(true);
  };
}

/**
 * A request body as bytes: null for none, undefined when it is neither a string nor bytes (the
 * fallback sends those).
 */
function bodyBytes(body: RequestInit['body']): Uint8Array | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  return undefined;
}

/** The `Response` of an answer, its body streamed from the socket until read, cancelled or aborted. */
function responseOf(answer: IncomingMessage, method: string, signal: AbortSignal | undefined): Response {
  const headers = new Headers();
  const raw = answer.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  const status = answer.statusCode ?? 0;
  const init = { status, statusText: answer.statusMessage ?? '', headers };
  if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') {
    answer.resume();
    return new Response(null, init);
  }
  const onAbort = () => answer.destroy(abortError(signal as AbortSignal) as Error);
  signal?.addEventListener('abort', onAbort, { once: true });
  answer.once('close', () => signal?.removeEventListener('abort', onAbort));
  let done = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (error: unknown) => {
        if (done) return;
        done = true;
        controller.error(error);
      };
      answer.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) answer.pause();
      });
      answer.once('end', () => {
        if (done) return;
        done = true;
        controller.close();
      });
      answer.once('error', fail);
      // Closed before its end: the connection was lost mid-answer.
      answer.once('close', () => fail(new TypeError('terminated')));
    },
    pull() {
      answer.resume();
    },
    cancel() {
      done = true;
      answer.destroy();
    },
  });
  return new Response(stream, init);
}

/** The error `fetch` rejects with when its signal aborts: the signal's reason, else an `AbortError`. */
function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
