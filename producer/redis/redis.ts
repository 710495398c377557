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
import type { RedisClusterSeed } from './cluster-seeds.ts';

export {
  assertClusterPrefix,
  hashTagOf,
  parseClusterNodes,
  type RedisClusterSeed,
  type RedisNode,
  readClusterNodes,
} from './cluster-seeds.ts';

/** Which Redis: one server by URL, or a cluster by its seed nodes. */
export type RedisTarget =
  | { url: string; cluster?: undefined }
  | { url?: undefined; cluster: RedisClusterSeed };

/** A connection to either: both take BullMQ's `connection` and the same commands. */
export type RedisConnection = Redis | Cluster;

// The default prefixes belong to the queue rule both sides share (shared/protocol/queue-backend.ts).
export { DEFAULT_CLUSTER_QUEUE_PREFIX, DEFAULT_QUEUE_PREFIX } from '../../shared/protocol/queue-backend.ts';

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
