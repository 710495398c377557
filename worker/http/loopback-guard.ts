/**
 * What keeps a server started with `--insecure` (no credentials, on a loopback address) to this
 * machine. Binding to 127.0.0.1 is not enough: a page of any site can have the browser resolve its
 * own name to 127.0.0.1 (DNS rebinding) and then talk to the server as a same-origin page, with
 * `Host: attacker.example:3000` and a matching `Origin`. So an open server answers only requests
 * whose `Host` is a loopback name or address (localhost, 127.0.0.0/8, [::1], with any port): 403
 * otherwise. And a write that carries an `Origin` must come from a loopback origin of this very
 * server (the same host and port as the checked `Host`): 403 otherwise. Pure (no I/O).
 */
import type { MiddlewareHandler } from 'hono';
import { isLoopback } from './dashboard/auth.ts';

/** The host name of a `Host` header (`name`, `name:port`, `[v6]`, `[v6]:port`), or null when malformed. */
function hostnameOf(host: string): string | null {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
  return match?.[1] ?? null;
}

/** Whether a `Host` header names this machine: localhost, 127.x.x.x or [::1], with or without a port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = hostnameOf(host);
  return name !== null && isLoopback(name.replace(/\.$/, ''));
}

/**
 * Whether a request's `Origin` may write to a server answering on `host` (its checked `Host`): an
 * http(s) origin whose host and port are that same loopback host. `null` (sandboxed frames, some
 * redirects) is not allowed.
 */
export function isAllowedLoopbackOrigin(origin: string, host: string | undefined): boolean {
  if (!isLoopbackHost(host)) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLoopbackHost(url.host) && url.host.toLowerCase() === host?.trim().toLowerCase();
}

/** Methods that change nothing, which a cross-origin page may send without a preflight anyway. */
const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];

/**
 * The guard of an open (`--insecure`) server: 403 for a `Host` that is not loopback, and for a
 * write whose `Origin` is not this server's loopback origin. `respond` builds the server's own
 * error body.
 */
export function loopbackOnly(respond: (message: string) => Response): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host');
    if (!isLoopbackHost(host)) {
      return respond(
        'this server runs without credentials (--insecure) and answers only Host localhost, 127.0.0.1 or [::1]',
      );
    }
    const origin = c.req.header('origin');
    if (
      !SAFE_METHODS.includes(c.req.method) &&
      origin !== undefined &&
      !isAllowedLoopbackOrigin(origin, host)
    ) {
      return respond('cross-site request refused: Origin is not this server');
    }
    await next();
  };
}
