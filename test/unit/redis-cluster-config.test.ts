/**
 * Redis Cluster settings: seed nodes parse or fail naming the entry; the queue prefix defaults to
 * `{compactor}` on a cluster and must hold a hash tag there, while a single Redis keeps `compactor`.
 */
import { describe, expect, it } from 'vitest';
import { producerTarget } from '../../producer/index.ts';
import { assertClusterPrefix, hashTagOf, parseClusterNodes } from '../../producer/redis/redis.ts';
import { ConfigError, loadConfig, redisTargetOf } from '../../worker/config/config.ts';

describe('seed nodes', () => {
  it('parses host:port, [ipv6]:port and redis:// entries', () => {
    expect(parseClusterNodes('127.0.0.1:7000, redis-a:7001,[::1]:7002')).toEqual({
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: 'redis-a', port: 7001 },
        { host: '::1', port: 7002 },
      ],
      tls: false,
    });
    expect(parseClusterNodes('rediss://app:s%40cret@a:7000,rediss://app:s%40cret@b')).toEqual({
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 6379 },
      ],
      username: 'app',
      password: 's@cret',
      tls: true,
    });
  });

  it.each([
    ['', /no seed node/],
    ['127.0.0.1:7000,', /entry 2 is empty/],
    ['127.0.0.1', /entry 1 \("127.0.0.1"\) must be host:port/],
    ['127.0.0.1:70000', /entry 1 \("127.0.0.1:70000"\): the port must be a number from 1 to 65535/],
    ['a:1,a:1', /entry 2 \("a:1"\) is given twice/],
    ['redis://a:1/2', /names a database/],
    ['http://a:1', /must start with redis:\/\/ or rediss:\/\//],
    ['redis://u:p@a:1,b:2', /entry 2 \("b:2"\) has other credentials or TLS than entry 1/],
  ])('refuses %j naming what is wrong', (text, message) => {
    expect(() => parseClusterNodes(text)).toThrow(ConfigError);
    expect(() => parseClusterNodes(text)).toThrow(/^COMPACTOR_REDIS_CLUSTER_NODES: /);
    expect(() => parseClusterNodes(text)).toThrow(message);
  });
});

describe('hash tags', () => {
  it('reads the tag as Redis Cluster does: first { to the next }, not empty', () => {
    expect(hashTagOf('{compactor}:compaction:wait')).toBe('compactor');
    expect(hashTagOf('a{b}c{d}')).toBe('b');
    expect(hashTagOf('{}x{y}')).toBeNull();
    expect(hashTagOf('compactor')).toBeNull();
    expect(hashTagOf('{open')).toBeNull();
  });

  it('refuses a cluster prefix without one, naming the setting and the fix', () => {
    expect(() => assertClusterPrefix('{acme}', 'prefix')).not.toThrow();
    expect(() => assertClusterPrefix('acme', 'prefix')).toThrow(
      'prefix: "acme" has no hash tag; on a Redis Cluster every key of a queue must hash to one slot, so the prefix needs a non-empty {…} part: use "{acme}"',
    );
  });
});

describe('the environment', () => {
  it('a single Redis keeps its URL and the unchanged default prefix', () => {
    const config = loadConfig({});
    expect(config.queuePrefix).toBe('compactor');
    expect(redisTargetOf(config)).toEqual({ url: 'redis://127.0.0.1:6379' });
  });

  it('a cluster defaults to the hash-tagged prefix', () => {
    const config = loadConfig({ COMPACTOR_REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000' });
    expect(config.queuePrefix).toBe('{compactor}');
    expect(redisTargetOf(config)).toEqual({
      cluster: {
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '10.0.0.2', port: 7000 },
        ],
        tls: false,
      },
    });
    expect(
      loadConfig({ COMPACTOR_REDIS_CLUSTER_NODES: 'a:1', COMPACTOR_QUEUE_PREFIX: '{acme}' }).queuePrefix,
    ).toBe('{acme}');
  });

  it('refuses an untagged prefix, bad nodes, and a URL beside the nodes', () => {
    expect(() =>
      loadConfig({ COMPACTOR_REDIS_CLUSTER_NODES: 'a:1', COMPACTOR_QUEUE_PREFIX: 'acme' }),
    ).toThrow(/COMPACTOR_QUEUE_PREFIX: "acme" has no hash tag.*use "\{acme\}"/);
    expect(() => loadConfig({ COMPACTOR_REDIS_CLUSTER_NODES: 'a' })).toThrow(
      'invalid environment: COMPACTOR_REDIS_CLUSTER_NODES: entry 1 ("a") must be host:port',
    );
    expect(() => loadConfig({ COMPACTOR_REDIS_CLUSTER_NODES: 'a:1', REDIS_URL: 'redis://b:2' })).toThrow(
      /REDIS_URL and COMPACTOR_REDIS_CLUSTER_NODES are both set/,
    );
  });

  it('the producer takes the same settings and rules', () => {
    expect(producerTarget({ redisUrl: 'redis://x:1', prefix: 'p' })).toEqual({ url: 'redis://x:1' });
    expect(producerTarget({ redisCluster: 'a:1', prefix: '{p}' })).toEqual({
      cluster: { nodes: [{ host: 'a', port: 1 }], tls: false },
    });
    expect(() => producerTarget({ redisCluster: 'a:1', prefix: 'p' })).toThrow(
      /^prefix: "p" has no hash tag/,
    );
    expect(() => producerTarget({ prefix: 'p' })).toThrow(/give redisUrl .*, redisCluster .* or postgres/);
  });
});
