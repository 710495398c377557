/**
 * Redis Cluster seed nodes as compactor reads them from its settings, and the hash-tag rule its
 * queue prefix must follow there: pure parsing, with no Redis client, so the configuration and the
 * command line can check a setting without loading ioredis (producer/redis/redis.ts opens the
 * connections and re-exports these).
 */
import { ConfigError } from '../../shared/contract/errors.ts';

/** A Redis Cluster node address. */
export interface RedisNode {
  host: string;
  port: number;
}

/** The seed nodes of a Redis Cluster and the credentials every node takes. */
export interface RedisClusterSeed {
  /** At least one reachable node; the client discovers the rest (`CLUSTER SLOTS`). */
  nodes: RedisNode[];
  username?: string | undefined;
  password?: string | undefined;
  /** Connect with TLS (`rediss://` seed nodes). */
  tls?: boolean | undefined;
}

/**
 * The hash tag of a key as Redis Cluster reads it: the text between the first `{` and the first
 * `}` after it, when that text is not empty (Redis Cluster specification, "Hash tags"); else null
 * (then the whole key is hashed).
 */
export function hashTagOf(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return null;
  return key.slice(open + 1, close);
}

/**
 * Checks that `prefix` holds a hash tag, as a queue prefix must on a Redis Cluster. It is refused,
 * not wrapped in braces: a worker that wrapped it would use other keys than a producer, an agent
 * service's `session-events` consumer or a Bull Board given the same setting, and their queues
 * would silently part. One spelling, everywhere, is the prefix.
 * @param setting what the user set it as (`COMPACTOR_QUEUE_PREFIX`, `prefix`), for the message.
 * @throws {ConfigError} naming the setting and the fix.
 */
export function assertClusterPrefix(prefix: string, setting: string): void {
  if (hashTagOf(prefix) !== null) return;
  const bare = prefix.replace(/[{}]/g, '');
  throw new ConfigError(
    `${setting}: "${prefix}" has no hash tag; on a Redis Cluster every key of a queue must hash to one ` +
      `slot, so the prefix needs a non-empty {…} part: use "{${bare || 'compactor'}}"`,
  );
}

/**
 * Parses seed nodes: comma-separated `host:port`, `[ipv6]:port`, or `redis://` / `rediss://` URLs
 * (`rediss://user:password@host:port`), at least one. Credentials and TLS apply to every node, so
 * URLs that disagree on them are refused; a URL may not name a database (a cluster has only 0).
 * @param setting the variable or option it came from, for messages.
 * @throws {ConfigError} `<setting>: <what is wrong with which entry>`.
 */
export function parseClusterNodes(text: string, setting = 'COMPACTOR_REDIS_CLUSTER_NODES'): RedisClusterSeed {
  const parsed = readClusterNodes(text);
  if (typeof parsed === 'string') throw new ConfigError(`${setting}: ${parsed}`);
  return parsed;
}

/** {@link parseClusterNodes} without the throw: the seed, or what is wrong (for zod's messages). */
export function readClusterNodes(text: string): RedisClusterSeed | string {
  try {
    return seedOf(text);
  } catch (error) {
    if (error instanceof Problem) return error.message;
    throw error;
  }
}

class Problem extends Error {}

function seedOf(text: string): RedisClusterSeed {
  const entries = text.split(',').map((e) => e.trim());
  const fail = (why: string): never => {
    throw new Problem(why);
  };
  if (entries.every((e) => e === '')) fail('no seed node; give host:port[,host:port…]');
  const nodes: RedisNode[] = [];
  let auth: { username?: string; password?: string; tls: boolean } | undefined;
  for (const [i, entry] of entries.entries()) {
    const where = `entry ${i + 1} ("${entry}")`;
    if (entry === '') fail(`entry ${i + 1} is empty (a stray comma?)`);
    let node: RedisNode;
    let these: { username?: string; password?: string; tls: boolean } = { tls: false };
    if (entry.includes('://')) {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        return fail(`${where} is not a URL`);
      }
      if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
        fail(`${where} must start with redis:// or rediss://`);
      if (url.pathname !== '' && url.pathname !== '/')
        fail(`${where} names a database; a Redis Cluster has only database 0, so leave the path out`);
      node = {
        host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port ? portOf(url.port, where, fail) : 6379,
      };
      these = {
        ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
        ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
        tls: url.protocol === 'rediss:',
      };
    } else {
      const match = /^(?:\[([^\]]+)\]|([^:[\]\s]+)):([^:]*)$/.exec(entry);
      if (!match) fail(`${where} must be host:port (or [ipv6]:port, or a redis:// URL)`);
      node = { host: (match?.[1] ?? match?.[2]) as string, port: portOf(match?.[3] ?? '', where, fail) };
    }
    if (node.host === '') fail(`${where} has no host`);
    if (auth === undefined) auth = these;
    else if (auth.username !== these.username || auth.password !== these.password || auth.tls !== these.tls)
      fail(`${where} has other credentials or TLS than entry 1; every node of a cluster takes the same`);
    if (nodes.some((n) => n.host === node.host && n.port === node.port)) fail(`${where} is given twice`);
    nodes.push(node);
  }
  return { nodes, ...auth };
}

function portOf(text: string, where: string, fail: (why: string) => never): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 1 && port <= 65_535)) fail(`${where}: the port must be a number from 1 to 65535`);
  return port;
}
