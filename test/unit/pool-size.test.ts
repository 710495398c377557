/**
 * The worker's Postgres pool: sized from its concurrency within Postgres's connection limit, or set
 * with COMPACTOR_DB_POOL_SIZE, which is validated like every other variable.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../worker/config/config.ts';
import { poolSizeFor } from '../../worker/runtime/services.ts';

describe('Postgres pool size', () => {
  it('gives a worker one connection per job plus two, between 10 and 32', () => {
    const config = loadConfig({});
    expect(config.dbPoolSize).toBeUndefined();
    expect(poolSizeFor(config, 1)).toBe(10);
    expect(poolSizeFor(config, 20)).toBe(22);
    expect(poolSizeFor(config, 128)).toBe(32);
  });

  it('takes COMPACTOR_DB_POOL_SIZE as given, whatever the concurrency', () => {
    const config = loadConfig({ COMPACTOR_DB_POOL_SIZE: '50' });
    expect(poolSizeFor(config, 4)).toBe(50);
    expect(poolSizeFor(config, 128)).toBe(50);
  });

  it('refuses a pool size that is not a whole number from 1 to 1,000, naming the variable', () => {
    for (const value of ['0', '-3', '2.5', 'many', '1001']) {
      expect(() => loadConfig({ COMPACTOR_DB_POOL_SIZE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ COMPACTOR_DB_POOL_SIZE: value })).toThrow(/COMPACTOR_DB_POOL_SIZE/);
    }
  });
});
