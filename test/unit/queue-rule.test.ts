/**
 * One queue rule for both sides: a producer created without queue options lands on the queue that
 * `compactor worker` listens on under the same environment (backend, URL, prefix or schema).
 */
import { describe, expect, it } from 'vitest';
import { type ProducerOptions, resolveProducerOptions } from '../../producer/index.ts';
import { loadConfig } from '../../worker/config/config.ts';

const DB = 'postgres://postgres@db.internal:5432/app';

/** Where the worker's config puts the queue, in the producer's option names. */
function workerSide(env: Record<string, string>) {
  const c = loadConfig(env);
  return c.queueBackend === 'postgres'
    ? { postgres: c.databaseUrl, queueSchema: c.queueSchema, schema: c.databaseSchema }
    : c.redisCluster
      ? { redisCluster: env.COMPACTOR_REDIS_CLUSTER_NODES, prefix: c.queuePrefix }
      : { redisUrl: c.redisUrl, prefix: c.queuePrefix };
}

/** Where a producer given only `environment` puts it. */
function producerSide(env: Record<string, string>) {
  const { options } = resolveProducerOptions({ environment: env });
  const { redisUrl, redisCluster, postgres, queueSchema, schema, prefix } = options as ProducerOptions & {
    queueSchema?: string;
    schema?: string;
  };
  if (postgres !== undefined) return { postgres, queueSchema, schema: schema ?? 'compactor' };
  return redisCluster !== undefined ? { redisCluster, prefix } : { redisUrl, prefix };
}

describe('a producer without queue options', () => {
  it.each([
    ['nothing set: Postgres at the default database', {}],
    ['only DATABASE_URL: Postgres there', { DATABASE_URL: DB }],
    [
      'a queue schema of its own',
      { DATABASE_URL: DB, COMPACTOR_QUEUE_SCHEMA: 'jobs', COMPACTOR_SCHEMA: 'cpt' },
    ],
    ['REDIS_URL: Redis', { REDIS_URL: 'redis://cache:6380', COMPACTOR_QUEUE_PREFIX: 'team-a' }],
    ['Redis by name, at its default URL', { COMPACTOR_QUEUE_BACKEND: 'redis' }],
    ['a cluster: its hash-tagged prefix', { COMPACTOR_REDIS_CLUSTER_NODES: 'n1:7000,n2:7001' }],
    [
      'postgres by name beside a REDIS_URL',
      { COMPACTOR_QUEUE_BACKEND: 'postgres', REDIS_URL: 'redis://cache:6380' },
    ],
    ['empty values count as unset', { REDIS_URL: '', COMPACTOR_QUEUE_PREFIX: '' }],
  ])('%s, where the worker listens', (_name, env: Record<string, string>) => {
    expect(producerSide(env)).toEqual(workerSide(env));
  });

  it('refuses an unknown COMPACTOR_QUEUE_BACKEND, naming it', () => {
    expect(() => resolveProducerOptions({ environment: { COMPACTOR_QUEUE_BACKEND: 'kafka' } })).toThrow(
      /COMPACTOR_QUEUE_BACKEND: must be redis or postgres, got "kafka"/,
    );
  });

  it('keeps explicit options as given, whatever the environment says', () => {
    const given = { redisUrl: 'redis://elsewhere:6379', prefix: 'p', environment: { DATABASE_URL: DB } };
    expect(resolveProducerOptions(given)).toEqual({ options: given });
  });
});
