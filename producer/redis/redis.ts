/**
 * Where compactor's Redis is, and the one place that opens a connection to it: a single server by
 * URL (`REDIS_URL`, as always), or a Redis Cluster by seed nodes (`COMPACTOR_REDIS_CLUSTER_NODES`).
 *
 * What a cluster asks of compactor, and where each rule comes from:
 * - BullMQ runs Lua scripts over many keys of one queue, and Redis Cluster refuses a script whose
 *   keys are in different hash slots (CROSSSLOT). BullMQ's guide ("Redis Cluster", docs.bullmq.io
 *   /patterns/redis-cluster) says to put the queue prefix in braces, a hash tag: Redis then hashes
 *   only the text between the first `{` and the next `}` (Redis Cluster specification, "Hash
 *   tags"), so every key of the queue lands in one slot. compactor's own keys (the session leases,
 *   `<prefix>:lease:…`) are single-key commands and single-key scripts, so any slot would do; they
 *   carry the same prefix and so share the queues' slot.
 * - BullMQ takes an ioredis `Cluster` as its `connection`; its blocking connections must have
 *   `maxRetriesPerRequest: null`, which for a Cluster BullMQ reads from `redisOptions` (BullMQ's
 *   RedisConnection checks `client.options.redisOptions` and refuses a Worker otherwise).
 * - `natMap` is not set: the nodes announce the addresses clients reach them by (true on one host,
 *   and for clusters whose nodes announce routable addresses; a NATed cluster needs more than this).
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
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

/** Which Redis: one server by URL, or a cluster by its seed nodes. */
export type RedisTarget =
  | { url: string; cluster?: undefined }
  | { url?: undefined; cluster: RedisClusterSeed };

/** A connection to either: both take BullMQ's `connection` and the same commands. */
export type RedisConnection = Redis | Cluster;

// The default prefixes belong to the queue rule both sides share (shared/protocol/queue-backend.ts).
export { DEFAULT_CLUSTER_QUEUE_PREFIX, DEFAULT_QUEUE_PREFIX } from '../../shared/protocol/queue-backend.ts';

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

/** How a connection behaves while Redis is away; the fields mean what they mean in ioredis. */
export interface ConnectionBehaviour {
  /** `null`: a command waits for a reconnect (BullMQ's Workers and QueueEvents need this). */
  maxRetriesPerRequest: number | null;
  /** false: commands fail at once while disconnected instead of queueing in memory. */
  enableOfflineQueue?: boolean;
  lazyConnect?: boolean;
  /** ms to connect to one node. */
  connectTimeout?: number;
}

/**
 * Opens a connection to `target`. A cluster gets a `Cluster` whose node connections carry
 * `maxRetriesPerRequest` (in `redisOptions`, where BullMQ looks) and the seed's credentials and TLS.
 */
export function connectRedis(target: RedisTarget, behaviour: ConnectionBehaviour): RedisConnection {
  const { maxRetriesPerRequest, enableOfflineQueue, lazyConnect, connectTimeout } = behaviour;
  if (target.cluster) {
    const seed = target.cluster;
    const redisOptions: RedisOptions = {
      maxRetriesPerRequest,
      ...(connectTimeout !== undefined ? { connectTimeout } : {}),
      ...(seed.username ? { username: seed.username } : {}),
      ...(seed.password ? { password: seed.password } : {}),
      ...(seed.tls ? { tls: {} } : {}),
    };
    const options: ClusterOptions = {
      redisOptions,
      ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
      ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    };
    return new Cluster(
      seed.nodes.map((n) => ({ ...n })),
      options,
    );
  }
  return new Redis(target.url, {
    maxRetriesPerRequest,
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    ...(connectTimeout !== undefined ? { connectTimeout } : {}),
  });
}

/**
 * A new connection to what `connection` is connected to, with `overrides`. ioredis spells this
 * differently for the two: `Redis.duplicate(options)`, `Cluster.duplicate(nodes, options)` whose
 * options replace (not merge) `redisOptions`, so the node options are merged here.
 */
export function duplicateConnection(
  connection: RedisConnection,
  overrides: Partial<ConnectionBehaviour> = {},
): RedisConnection {
  if (isCluster(connection)) {
    const { maxRetriesPerRequest, connectTimeout, enableOfflineQueue, lazyConnect } = overrides;
    return connection.duplicate(undefined, {
      redisOptions: {
        ...connection.options.redisOptions,
        ...(maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest } : {}),
        ...(connectTimeout !== undefined ? { connectTimeout } : {}),
      },
      ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
      ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    });
  }
  return connection.duplicate(overrides);
}

/** Whether `connection` is a Redis Cluster client. */
export function isCluster(connection: RedisConnection): connection is Cluster {
  return connection.isCluster;
}

/** The target's address for logs, without a password. */
export function describeTarget(target: RedisTarget): string {
  if (target.cluster) return `cluster ${target.cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  try {
    const u = new URL(target.url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
