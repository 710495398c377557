/**
 * The worker's Postgres pool: 10 connections whatever its concurrency, or set with
 * COMPACTOR_DB_POOL_SIZE, which is validated like every other variable.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../worker/config/config.ts';
import { poolSizeFor } from '../../worker/runtime/services.ts';

describe('Postgres pool size', () => {
  it('gives a worker 10 connections unless told otherwise', () => {
    const config = loadConfig({});
    expect(config.dbPoolSize).toBeUndefined();
    expect(poolSizeFor(config)).toBe(10);
  });

  it('takes COMPACTOR_DB_POOL_SIZE as given', () => {
    expect(poolSizeFor(loadConfig({ COMPACTOR_DB_POOL_SIZE: '50' }))).toBe(50);
    expect(poolSizeFor(loadConfig({ COMPACTOR_DB_POOL_SIZE: '3' }))).toBe(3);
  });

  it('refuses a pool size that is not a whole number from 1 to 1,000, naming the variable', () => {
    for (const value of ['0', '-3', '2.5', 'many', '1001']) {
      expect(() => loadConfig({ COMPACTOR_DB_POOL_SIZE: value })).toThrow(ConfigError);
      expect(() => loadConfig({ COMPACTOR_DB_POOL_SIZE: value })).toThrow(/COMPACTOR_DB_POOL_SIZE/);
    }
  });
});
