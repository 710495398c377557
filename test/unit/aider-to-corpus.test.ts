/**
 * The Aider converter (scripts/corpus/aider-to-corpus.ts) turns an `.aider.chat.history.md` into
 * corpus messages: the user's `#### ` input, the model's replies and Aider's `> ` output as
 * separate messages in order, one launch after another.
 */
import { describe, expect, it } from 'vitest';
import { aiderLaunches, aiderToCorpus } from '../../scripts/corpus/aider-to-corpus.ts';
import { corpusLines } from '../../scripts/corpus/pi-to-corpus.ts';

const HISTORY = [
  '',
  '# aider chat started at 2025-07-16 20:11:30',
  '',
  '> /opt/homebrew/bin/aider  ',
  '> Main model: gpt-4o with diff edit format  ',
  '',
  '#### add a `content` field to SignalSchema  ',
  '#### keep it under 280 characters  ',
  '',
  'Here is the *SEARCH/REPLACE* block:',
  '',
  'schemas/universal_signal_schema.ts',
  '```typescript',
  '<<<<<<< SEARCH',
  '=======',
  '  content: z.string().min(1).max(280),',
  '>>>>>>> REPLACE',
  '```',
  '',
  '> Applied edit to schemas/universal_signal_schema.ts  ',
  '> Commit 9760d2f feat: add content field  ',
  '> Skipping /Users/someone/afi-core/.aider.conf.json  ',
  '',
  '# aider chat started at 2025-07-22 17:49:27',
  '',
  '> Aider v0.85.2  ',
  '',
  '#### /exit  ',
  '',
].join('\n');

describe('aiderToCorpus', () => {
  const messages = aiderToCorpus(HISTORY);

  it('makes each run of user input, reply and Aider output one message, in order', () => {
    expect(messages.map((m) => [m.role, m.kind])).toEqual([
      ['tool', 'message'],
      ['user', 'message'],
      ['assistant', 'message'],
      ['tool', 'message'],
      ['tool', 'message'],
      ['user', 'message'],
    ]);
    expect(messages.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(messages[1]?.content).toBe('add a `content` field to SignalSchema\nkeep it under 280 characters');
    expect(messages[2]?.content).toContain('>>>>>>> REPLACE');
    expect(messages[3]?.content).toMatch(
      /^Applied edit to schemas\/universal_signal_schema\.ts\nCommit 9760d2f/,
    );
  });

  it('starts a launch with its heading as Aider output', () => {
    expect(messages[0]?.content).toBe(
      '# aider chat started at 2025-07-16 20:11:30\n\n/opt/homebrew/bin/aider\nMain model: gpt-4o with diff edit format',
    );
    expect(messages[4]?.content).toBe('# aider chat started at 2025-07-22 17:49:27\n\nAider v0.85.2');
  });

  it('splits a history into launches, so a range of them can be kept', () => {
    const launches = aiderLaunches(HISTORY);
    expect(launches).toHaveLength(2);
    expect(aiderToCorpus(launches[1] as string).map((m) => m.content)).toEqual([
      '# aider chat started at 2025-07-22 17:49:27\n\nAider v0.85.2',
      '/exit',
    ]);
  });

  it('writes the home folder of a path as ~', () => {
    expect(corpusLines(messages)).toContain('Skipping ~/afi-core/.aider.conf.json');
  });

  it('refuses a text that is not an Aider history', () => {
    expect(() => aiderToCorpus('# README\n\nhello\n')).toThrow(/aider chat started at/);
  });
});
