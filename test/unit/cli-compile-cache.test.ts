/**
 * Where `compactor` keeps Node's compile cache: the user's cache folder, as the XDG rule says.
 */
import { describe, expect, it } from 'vitest';
import { compileCacheDir } from '../../worker/cli/compile-cache.ts';

describe('compileCacheDir', () => {
  it('uses XDG_CACHE_HOME when it is an absolute path', () => {
    expect(compileCacheDir({ XDG_CACHE_HOME: '/var/cache/u' }, '/home/u')).toBe(
      '/var/cache/u/compactor/compile-cache',
    );
  });

  it('falls back to ~/.cache when XDG_CACHE_HOME is unset, empty or relative', () => {
    for (const env of [{}, { XDG_CACHE_HOME: '' }, { XDG_CACHE_HOME: 'cache' }]) {
      expect(compileCacheDir(env, '/home/u')).toBe('/home/u/.cache/compactor/compile-cache');
    }
  });
});
