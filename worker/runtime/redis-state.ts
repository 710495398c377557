/**
 * A process's view of its queue connection (Redis, or Postgres on the `postgres` queue backend),
 * told as changes of state: one log line when it is lost, one when it is back. During an outage
 * every client (the services' connection, each BullMQ queue, worker and its blocking connection, or
 * each BullMQ object's pg pool and `LISTEN` connection) fails each reconnection attempt; logged one
 * by one, or printed raw by an emitter without an `'error'` listener (BullMQ then writes each
 * error's stack to stderr), they would bury the worker's JSON log. Every such client and BullMQ
 * object of the process reports its errors here instead.
 */
import type { Logger } from 'pino';

/** Where a Redis client, a pg pool or a BullMQ object reports its errors. */
export interface ConnectionStateLog {
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
  // Postgres: the server ended the connection (admin command, crash, shutdown), or it broke.
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

/** ioredis's, node-postgres's and BullMQ's words for a connection that is gone. */
const CONNECTION_MESSAGES =
  /Connection is closed|connect ETIMEDOUT|Stream isn't writeable|ECONNREFUSED|ECONNRESET|Connection terminated|terminating connection|not queryable/;

/** Whether `error` says the connection failed (rather than a command). */
export function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && CONNECTION_CODES.has(code)) || CONNECTION_MESSAGES.test(error.message);
}

/**
 * The state log of one queue connection target.
 * @param redis the target as logs name it (no password), in the field `redis` or `postgres`.
 * @param options.dependency what the connection is to, for the messages (default Redis).
 * @param options.probe a command on the process's main connection that resolves once it
 *   answers (a PING that waits for the reconnection): sent when the connection is lost, so the
 *   outage ends in the log even when the client that failed is not the main one.
 * @param options.now clock, ms (for how long the outage lasted).
 */
export function queueStateLog(
  logger: Logger,
  redis: string,
  options: { probe?: () => Promise<unknown>; now?: () => number; dependency?: 'Redis' | 'Postgres' } = {},
): ConnectionStateLog {
  const now = options.now ?? Date.now;
  const dependency = options.dependency ?? 'Redis';
  // The log field naming the target: `redis` or `postgres`.
  const field = dependency.toLowerCase();
  let lostAt: number | null = null;
  let errors = 0;
  const log: ConnectionStateLog = {
    error(error, source) {
      if (lostAt !== null) {
        errors++;
        return;
      }
      if (!isConnectionError(error)) {
        logger.error({ err: error.message, [field]: redis }, `${source} error`);
        return;
      }
      lostAt = now();
      errors = 1;
      logger.error(
        { state: 'lost', err: error.message, source, [field]: redis },
        `${dependency} connection error; retrying`,
      );
      // A connection closed for good (shutdown) rejects: nothing to tell then.
      options.probe?.().then(
        () => log.ready(),
        () => {},
      );
    },
    ready() {
      if (lostAt === null) return;
      logger.info(
        { state: 'restored', [field]: redis, downMs: now() - lostAt, errors },
        `${dependency} connection restored`,
      );
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
