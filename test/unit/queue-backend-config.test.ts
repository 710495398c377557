/**
 * Which queue backend an environment picks: the one it names, else Redis when it names a Redis,
 * else Postgres; and the settings of the Postgres backend refused with a message naming them.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../worker/config/config.ts';

describe('COMPACTOR_QUEUE_BACKEND', () => {
  it('defaults to postgres when no Redis is named, in its own schema of the database', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/app' });
    expect(config.queueBackend).toBe('postgres');
    expect(config.queueSchema).toBe('compactor_queue');
  });

  it('defaults to redis when REDIS_URL or the cluster nodes are set', () => {
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379' }).queueBackend).toBe('redis');
    expect(loadConfig({ COMPACTOR_REDIS_CLUSTER_NODES: 'a:7000,b:7001' }).queueBackend).toBe('redis');
  });

  it('takes the backend it is told, whatever else is set', () => {
    expect(loadConfig({ COMPACTOR_QUEUE_BACKEND: 'redis' }).queueBackend).toBe('redis');
    expect(loadConfig({ COMPACTOR_QUEUE_BACKEND: 'postgres', REDIS_URL: 'redis://x:1' }).queueBackend).toBe(
      'postgres',
    );
  });

  it('refuses another backend name, naming the variable and the choices', () => {
    expect(() => loadConfig({ COMPACTOR_QUEUE_BACKEND: 'kafka' })).toThrow(ConfigError);
    expect(() => loadConfig({ COMPACTOR_QUEUE_BACKEND: 'kafka' })).toThrow(
      /COMPACTOR_QUEUE_BACKEND: must be redis or postgres/,
    );
  });

  it("refuses a queue schema that is compactor's own schema, or not a plain identifier", () => {
    expect(() => loadConfig({ COMPACTOR_QUEUE_SCHEMA: 'compactor' })).toThrow(
      /COMPACTOR_QUEUE_SCHEMA and COMPACTOR_SCHEMA are both "compactor"/,
    );
    expect(() => loadConfig({ COMPACTOR_QUEUE_SCHEMA: 'Queue-1' })).toThrow(
      /COMPACTOR_QUEUE_SCHEMA: must be/,
    );
    expect(loadConfig({ COMPACTOR_QUEUE_SCHEMA: 'jobs' }).queueSchema).toBe('jobs');
  });
});
