/**
 * A process's view of its Redis connection, told as changes of state: one log line when it is
 * lost, one when it is back. During an outage every client (the services' connection, each BullMQ
 * queue, worker and its blocking connection) fails each reconnection attempt, every 50 ms to 2 s;
 * logged one by one, or printed raw by an emitter without an `'error'` listener (BullMQ then writes
 * each error's stack to stderr), they would bury the worker's JSON log. Every Redis client and
 * BullMQ object of the process reports its errors here instead.
 */
import type { Logger } from 'pino';

/** Where a Redis client or BullMQ object reports its errors. */
export interface RedisStateLog {
  /**
   * An error of `source` (`worker`, `sweep queue`...). A connection error marks the connection
   * lost (logged once, until it is back); any other error is logged as `<source> error`, except
   * while the connection is lost (then it is a consequence, counted).
   */
  error(error: Error, source: string): void;
  /** The connection is ready (again): logged once when it had been lost. */
  ready(): void;
  /** Reports the `'error'` events of a Redis client or BullMQ object (so none is printed raw). */
  watch(emitter: ErrorEmitter, source: string): void;
  /** Whether the connection is lost now. */
  readonly lost: boolean;
}

/** Anything with `'error'` events. */
export interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Socket codes of a connection that failed or broke. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

/** ioredis's and BullMQ's words for a connection that is gone. */
const CONNECTION_MESSAGES =
  /Connection is closed|connect ETIMEDOUT|Stream isn't writeable|ECONNREFUSED|ECONNRESET/;

/** Whether `error` says the Redis connection failed (rather than a command). */
export function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGES.test(error.message);
}

/**
 * The state log of one Redis target.
 * @param redis the target as logs name it (no password).
 * @param options.probe a command on the process's main connection that resolves once Redis
 *   answers (a PING that waits for the reconnection): sent when the connection is lost, so the
 *   outage ends in the log even when the client that failed is not the main one.
 * @param options.now clock, ms (for how long the outage lasted).
 */
export function redisStateLog(
  logger: Logger,
  redis: string,
  options: { probe?: () => Promise<unknown>; now?: () => number } = {},
): RedisStateLog {
  const now = options.now ?? Date.now;
  let lostAt: number | null = null;
  let errors = 0;
  const log: RedisStateLog = {
    error(error, source) {
      if (lostAt !== null) {
        errors++;
        return;
      }
      if (!isConnectionError(error)) {
        logger.error({ err: error.message, redis }, `${source} error`);
        return;
      }
      lostAt = now();
      errors = 1;
      logger.error({ state: 'lost', err: error.message, source, redis }, 'Redis connection error; retrying');
      // A connection closed for good (shutdown) rejects: nothing to tell then.
      options.probe?.().then(
        () => log.ready(),
        () => {},
      );
    },
    ready() {
      if (lostAt === null) return;
      logger.info({ state: 'restored', redis, downMs: now() - lostAt, errors }, 'Redis connection restored');
      lostAt = null;
      errors = 0;
    },
    watch(emitter, source) {
      emitter.on('error', (error) => log.error(error, source));
    },
    get lost() {
      return lostAt !== null;
    },
  };
  return log;
}
