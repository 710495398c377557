/**
 * Start-up with dependencies that may not be up yet: retry with capped exponential backoff and
 * say clearly what is missing, once per change of state (unreachable, a different error, reachable
 * again), with each further attempt at debug level. A worker started before Postgres keeps trying
 * instead of dying, and its log does not fill with one error per attempt.
 */
import type { Logger } from 'pino';

export interface RetryOptions {
  logger: Logger;
  /** What is being waited for, e.g. "Postgres at postgres://db:5432/x". */
  what: string;
  /** First delay, ms. Default 500. */
  initialDelayMs?: number;
  /** Longest delay, ms. Default 10,000. */
  maxDelayMs?: number;
  /** Stops retrying (shutdown); the last error is thrown. */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` until it resolves.
 * @throws the last error once `signal` aborts.
 */
export async function retryUntilReady<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  let delay = options.initialDelayMs ?? 500;
  let lastError: string | null = null;
  const since = Date.now();
  for (let n = 1; ; n++) {
    try {
      const result = await attempt();
      if (lastError !== null) {
        options.logger.info(
          { state: 'restored', attempts: n, downMs: Date.now() - since },
          `${options.what} is reachable`,
        );
      }
      return result;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const err = (error as Error).message;
      const changed = err !== lastError;
      lastError = err;
      options.logger[changed ? 'error' : 'debug'](
        { state: 'lost', attempt: n, retryInMs: delay, err },
        `${options.what} is not reachable; retrying`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        options.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (options.signal?.aborted) throw error;
      delay = Math.min(delay * 2, options.maxDelayMs ?? 10_000);
    }
  }
}
