/**
 * A recall hit's snippet shows where the query matched: the path a search named (also when the
 * query is only a part of it, which PostgreSQL's `ts_headline` missed), the words of a word query,
 * each between « and », with … where the message's text goes on.
 */
import { describe, expect, it } from 'vitest';
import { anchorPattern, queryWords, recallSnippet, SNIPPET_CHARS } from '../../shared/recall/snippet.ts';

const filler = (n: number) => 'lorem ipsum dolor sit amet '.repeat(n);
const whole = (text: string) => ({ text, cutBefore: false, cutAfter: false });

describe('recallSnippet', () => {
  it('shows a path deep in a long message, marked, when the query is the path', () => {
    const text = `${filler(40)}then I edited src/auth/refresh_token.ts to retry ${filler(40)}`;
    const snippet = recallSnippet(whole(text), 'src/auth/refresh_token.ts');
    expect(snippet).toContain('edited «src/auth/refresh_token.ts» to retry');
    expect(snippet.startsWith('… ')).toBe(true);
    expect(snippet.endsWith(' …')).toBe(true);
    expect(snippet.length).toBeLessThan(SNIPPET_CHARS + 60);
  });

  it('shows the path when the query is a part of it, as written or by its words', () => {
    const text = `${filler(40)}read_file {"path":"src/auth/refresh_token.ts"} ${filler(40)}`;
    expect(recallSnippet(whole(text), 'refresh_token')).toContain('"src/auth/«refresh_token».ts"');
    expect(recallSnippet(whole(text), 'auth/refresh_token.ts')).toContain('"src/«auth/refresh_token.ts»"');
    expect(recallSnippet(whole(text), 'token refresh')).toContain('src/auth/«refresh»_«token».ts');
  });

  it('marks every word of a word query where most of them stand together', () => {
    const text = `retry once. ${filler(30)}the token refresh fails after an hour; ${filler(30)}`;
    const snippet = recallSnippet(whole(text), 'Refresh TOKEN hour');
    expect(snippet).toContain('the «token» «refresh» fails after an «hour»;');
  });

  it('marks a word standing alone, not inside another word', () => {
    expect(recallSnippet(whole('the tests passed; see ts config'), 'ts')).toBe(
      'the tests passed; see «ts» config',
    );
  });

  it('shows a short message whole, and says where the text went on beyond the window', () => {
    expect(recallSnippet(whole('npm run test -- --grep refresh'), 'npm run test')).toBe(
      '«npm run test» -- --grep refresh',
    );
    expect(recallSnippet({ text: 'a b refresh c', cutBefore: true, cutAfter: true }, 'refresh')).toBe(
      '… a b «refresh» c …',
    );
  });

  it('gives the beginning, unmarked, when neither the query nor a word of it is in the text', () => {
    const snippet = recallSnippet(whole(filler(20)), 'zebra');
    expect(snippet.startsWith('lorem ipsum dolor')).toBe(true);
    expect(snippet.endsWith(' …')).toBe(true);
    expect(snippet).not.toContain('«');
  });
});

describe('the search anchor', () => {
  it("is the query's longest word, standing alone, for PostgreSQL", () => {
    expect(queryWords('src/auth/Refresh_token.ts')).toEqual(['refresh', 'token', 'auth', 'src', 'ts']);
    expect(anchorPattern('src/auth/refresh_token.ts')).toBe('(^|[^[:alnum:]])(refresh)([^[:alnum:]]|$)');
    expect(anchorPattern('-- //')).toBe('');
  });
});
