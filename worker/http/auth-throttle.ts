/**
 * Failed authentication, throttled per client: after `failures` refused credentials within
 * `windowMs` from one client address, every request of that client is answered 429 (with
 * `retry-after`) without its credentials being checked, until the window ends; other clients are
 * not affected. Counted in this process's memory by rate-limiter-flexible (`RateLimiterMemory`):
 * each API or dashboard process counts its own clients, so N processes behind a balancer allow up
 * to N times the failures, still a few dozen guesses a minute against 256-bit secrets.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** Failed authentications a client may make per window, by default. */
export const DEFAULT_AUTH_FAILURES = 10;
/** The window those failures are counted in, by default, ms. */
export const DEFAULT_AUTH_WINDOW_MS = 60_000;

/** How failed authentication is throttled. */
export interface AuthThrottleOptions {
  /** Failures a client may make per window (default {@link DEFAULT_AUTH_FAILURES}). */
  failures?: number;
  /** The window, ms (default {@link DEFAULT_AUTH_WINDOW_MS}); whole seconds. */
  windowMs?: number;
}

/** The throttle of one app. */
export interface AuthThrottle {
  /** Whether `client` used up its failures: the ms until it may try again, or null. */
  blockedFor(client: string): Promise<number | null>;
  /** Counts a failure of `client`. */
  failed(client: string): Promise<void>;
}

/** A throttle counting failures per client in memory. */
export function authThrottle(options: AuthThrottleOptions = {}): AuthThrottle {
  const points = options.failures ?? DEFAULT_AUTH_FAILURES;
  const limiter = new RateLimiterMemory({
    points,
    duration: Math.max(1, Math.round((options.windowMs ?? DEFAULT_AUTH_WINDOW_MS) / 1000)),
    keyPrefix: 'compactor-auth',
  });
  return {
    async blockedFor(client) {
      const res = await limiter.get(client);
      return res !== null && res.consumedPoints >= points ? Math.max(res.msBeforeNext, 1) : null;
    },
    async failed(client) {
      await limiter.consume(client).catch((rejected: unknown) => {
        // Over the limit: what `blockedFor` answers from now on. Anything else is a real error.
        if (!(rejected instanceof RateLimiterRes)) throw rejected;
      });
    },
  };
}

/**
 * The address of the client that sent the request: the remote address of its connection, as
 * @hono/node-server hands it over (`env.incoming`); `unknown` when the app is served otherwise.
 * Behind a proxy this is the proxy's address.
 */
export function clientAddress(c: Context): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}

/** `retry-after` for a wait of `ms`: whole seconds, at least 1. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}
