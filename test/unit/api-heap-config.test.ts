/**
 * `COMPACTOR_API_MAX_HEAP_MB`, the heap bound `compactor api` serves under, and how the child that
 * serves is started: this Node, its own flags, the bound, then the `compactor` entry and arguments.
 */
import { describe, expect, it } from 'vitest';
import { hasHeapFlag, relaunchArgv } from '../../worker/cli/heap.ts';
import { ConfigError, DEFAULT_API_MAX_HEAP_MB, loadConfig } from '../../worker/config/config.ts';

describe('COMPACTOR_API_MAX_HEAP_MB', () => {
  it('defaults to 256 MB; 0 turns the bound off', () => {
    expect(DEFAULT_API_MAX_HEAP_MB).toBe(256);
    expect(loadConfig({}).api?.maxHeapMb).toBe(256);
    expect(loadConfig({ COMPACTOR_API_MAX_HEAP_MB: '0' }).api?.maxHeapMb).toBe(0);
    expect(loadConfig({ COMPACTOR_API_MAX_HEAP_MB: '1024' }).api?.maxHeapMb).toBe(1024);
  });

  it('refuses a bound too small to serve with, or not a number of megabytes, naming the variable', () => {
    for (const value of ['10', '63', '100000', '1.5', 'lots']) {
      expect(() => loadConfig({ COMPACTOR_API_MAX_HEAP_MB: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ COMPACTOR_API_MAX_HEAP_MB: value }), value).toThrow(
        /COMPACTOR_API_MAX_HEAP_MB: must be/,
      );
    }
  });
});

describe('the process that serves compactor api', () => {
  it('is started again only when Node was not given a bound on its command line', () => {
    expect(hasHeapFlag([])).toBe(false);
    expect(hasHeapFlag(['--enable-source-maps'])).toBe(false);
    expect(hasHeapFlag(['--max-old-space-size=512'])).toBe(true);
    expect(hasHeapFlag(['--max-old-space-size', '512'])).toBe(true);
  });

  it("keeps Node's own flags and puts the bound before the entry and the command's arguments", () => {
    const argv = relaunchArgv(192, ['api', '--port', '3100'], ['--enable-source-maps']);
    expect(argv[0]).toBe('--enable-source-maps');
    expect(argv[1]).toBe('--max-old-space-size=192');
    expect(argv[2]).toMatch(/worker\/bin\/compactor(-dev)?\.js$/);
    expect(argv.slice(3)).toEqual(['api', '--port', '3100']);
  });
});
