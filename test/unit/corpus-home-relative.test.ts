/**
 * The corpus converters' path rules (scripts/corpus/pi-to-corpus.ts): a recorded machine's user
 * folder is written as `~`, macOS's and Linux's alike, and a URL that merely holds `/home/` is left
 * as it is; a run of three or more `../` is written as `../../`, in every string a converter writes.
 */
import { describe, expect, it } from 'vitest';
import { corpusValue, homeRelative, shallowParents } from '../../scripts/corpus/pi-to-corpus.ts';
import { trajectoryToJsonl } from '../../scripts/corpus/swe-agent-to-chat.ts';

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

  it('writes a run of three or more ../ as ../../, and leaves shorter ones', () => {
    expect(shallowParents("import x from '../../../../agents/registry.js'")).toBe(
      "import x from '../../agents/registry.js'",
    );
    expect(shallowParents('../../../a and ../b and ../../c')).toBe('../../a and ../b and ../../c');
  });

  it('applies both rules to every string of what a converter writes, keys aside', () => {
    const value = { '../../../key': ['cd /Users/me/p && cat ../../../x', 3, null, { k: '/home/ci/y' }] };
    expect(corpusValue(value)).toEqual({ '../../../key': ['cd ~/p && cat ../../x', 3, null, { k: '~/y' }] });
    const trajectory = JSON.stringify({
      history: [{ role: 'user', content: 'open /home/dev/repo/../../../../etc' }],
    });
    expect(JSON.parse(trajectoryToJsonl(trajectory)).messages[0].content).toBe('open ~/repo/../../etc');
  });
});
