/**
 * The corpus converters' home-folder rule (scripts/corpus/pi-to-corpus.ts `homeRelative`): a
 * recorded machine's user folder is written as `~`, macOS's and Linux's alike, and a URL that
 * merely holds `/home/` is left as it is.
 */
import { describe, expect, it } from 'vitest';
import { homeRelative } from '../../scripts/corpus/pi-to-corpus.ts';

describe('homeRelative', () => {
  it('writes /Users/<name> and /home/<name> as ~', () => {
    expect(homeRelative('cd /Users/someone/project && ls')).toBe('cd ~/project && ls');
    expect(homeRelative('log in: /home/runner/.npm/_logs/x.log')).toBe('log in: ~/.npm/_logs/x.log');
    expect(homeRelative('{"path":"/home/dev/src/a.ts"}')).toBe('{"path":"~/src/a.ts"}');
    expect(homeRelative('/home/dev/x')).toBe('~/x');
  });

  it('leaves a /home/ inside a URL alone', () => {
    expect(homeRelative('see https://example.com/home/page')).toBe('see https://example.com/home/page');
  });
});
