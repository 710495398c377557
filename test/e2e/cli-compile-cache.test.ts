/**
 * `compactor` keeps Node's compile cache in the user's cache folder, and leaves it off when
 * `NODE_DISABLE_COMPILE_CACHE=1` says so.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCompactor } from '../support/processes.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-compile-cache-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the compile cache', () => {
  it('is written under XDG_CACHE_HOME/compactor/compile-cache', async () => {
    const cache = path.join(dir, 'on');
    // The tests' children run with the cache off (childEnv): this one runs as a user's would.
    const run = await runCompactor(['--version'], { XDG_CACHE_HOME: cache }, [
      'env',
      '-u',
      'NODE_DISABLE_COMPILE_CACHE',
      process.execPath,
      BIN,
    ]);
    expect(run.code).toBe(0);
    expect(await readdir(path.join(cache, 'compactor', 'compile-cache'))).not.toEqual([]);
  });

  it('is not written when NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const cache = path.join(dir, 'off');
    const run = await runCompactor(['--version'], { XDG_CACHE_HOME: cache, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    await expect(readdir(cache)).rejects.toThrow(/ENOENT/);
  });
});
