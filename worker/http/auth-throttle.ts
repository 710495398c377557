/**
 * Failed authentication, throttled per client: after `failures` refused credentials within
 * `windowMs` from one client address (requests that send none do not count: a browser sends one
 * before answering each basic-auth challenge), every request of that client is answered 429 (with
 * `retry-after`) without its credentials being checked, until the window ends; other clients are
 * not affected. Counted in this process's memory by rate-limiter-flexible (`RateLimiterMemory`):
 * each API or dashboard process counts its own clients, so N processes behind a balancer allow up
 * to N times the failures, still a few dozen guesses a minute against 256-bit secrets.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { type AuthResult, authenticate, type Credentials, type Principal } from './dashboard/auth.ts';

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

/** What {@link RequestAuthenticator} decides about a request. */
export type Admission =
  | { ok: true; principal: Principal }
  /** The client used up its failures: refuse it (429) for this long, ms. */
  | { ok: false; throttledMs: number }
  /** Its credentials were refused (401), for this reason (already counted and logged). */
  | { ok: false; refused: Extract<AuthResult, { ok: false }> };

/** Checks a request's credentials under the throttle of its client. */
export type RequestAuthenticator = (c: Context) => Promise<Admission>;

/**
 * The authentication both servers run: a throttled client is refused before its credentials are
 * read; a refused credential (not a missing one) counts against its client and is logged at info with its reason and
 * key id (never the secret), the client's address and the path.
 */
export function requestAuthenticator(
  credentials: Credentials,
  logger: Logger,
  options: AuthThrottleOptions = {},
): RequestAuthenticator {
  const throttle = authThrottle(options);
  return async (c) => {
    const client = clientAddress(c);
    const waitMs = await throttle.blockedFor(client);
    if (waitMs !== null) return { ok: false, throttledMs: waitMs };
    const result = await authenticate(c.req.header('authorization'), credentials);
    if (result.ok) return result;
    // A request without credentials is no guess: browsers send one before each basic-auth challenge.
    if (result.reason !== 'missing') await throttle.failed(client);
    const keyId = result.keyId ? { keyId: result.keyId } : {};
    logger.info({ reason: result.reason, ...keyId, client, path: c.req.path }, 'authentication failed');
    return { ok: false, refused: result };
  };
}
