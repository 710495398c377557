/**
 * Start-up with dependencies that may not be up yet: retry with capped exponential backoff and
 * say clearly, once per attempt, what is missing. A worker started before Postgres keeps trying
 * instead of dying.
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
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (options.signal?.aborted) throw error;
      options.logger.error(
        { attempt: n, retryInMs: delay, err: (error as Error).message },
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
