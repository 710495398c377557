/**
 * Reads request bodies as JSON, the large ones off the event loop. One API process serves every
 * tenant on one event loop: a tenant sending 10 MB bodies would otherwise hold it for the decoding
 * and parsing of each (tens of ms, more on a busy machine) while the other tenants' requests wait.
 * Bodies of at least {@link OFF_THREAD_BYTES} are moved (not copied) to a worker thread of a
 * Piscina pool, which decodes and parses them; the value comes back by structured clone, a copy of
 * the parsed value that costs the event loop far less than the parse. Smaller bodies are read where
 * they are: a thread's round trip would cost them more than it spares.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { type JsonText, readJsonText } from './json-text.ts';

/** Bodies from this size (bytes) up are parsed in a worker thread: about 1 ms of parsing. */
export const OFF_THREAD_BYTES = 256 * 1024;

/** An idle parser thread exits after this long (ms), giving back its memory. */
const IDLE_TIMEOUT_MS = 10_000;

const utf8 = new TextDecoder();

/** A reader of JSON request bodies; see {@link jsonBodyReader}. */
export type JsonBodyReader = (bytes: Uint8Array) => Promise<JsonText>;

/**
 * A reader of JSON request bodies of at most `maxBodyBytes`: it reads a body in a worker thread from
 * {@link OFF_THREAD_BYTES} up, else on the event loop, and moves a large body's bytes to the thread
 * (a view that owns its whole buffer is detached, the buffer moved; any other view is copied). Its pool starts on the first large body with at most one thread per
 * core beyond the event loop's (at least one), none while idle; a thread's heap is capped at about
 * eight times the largest body (a body decoded, parsed and cloned back, with room to spare), so its
 * garbage is collected rather than left to grow. Running from the TypeScript sources (tests, `tsx`),
 * the threads load the same sources through tsx, as the process does.
 * The reader throws only when a worker thread fails (it could not start, or ran out of memory).
 */
export function jsonBodyReader(maxBodyBytes: number): JsonBodyReader {
  let pool: Piscina<Uint8Array, JsonText> | undefined;
  const parserPool = () => {
    if (pool) return pool;
    const fromSources = import.meta.url.endsWith('.ts');
    pool = new Piscina<Uint8Array, JsonText>({
      filename: new URL(`./json-body-task.${fromSources ? 'ts' : 'js'}`, import.meta.url).href,
      minThreads: 0,
      maxThreads: Math.max(1, availableParallelism() - 1),
      idleTimeout: IDLE_TIMEOUT_MS,
      resourceLimits: { maxOldGenerationSizeMb: 32 + Math.ceil((8 * maxBodyBytes) / 2 ** 20) },
      ...(fromSources ? { execArgv: ['--import', 'tsx'] } : {}),
    });
    return pool;
  };
  return async (bytes) => {
    if (bytes.byteLength < OFF_THREAD_BYTES) return readJsonText(utf8.decode(bytes));
    const own =
      bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    return parserPool().run(own, { transferList: [own.buffer as ArrayBuffer] });
  };
}
