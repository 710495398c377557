/**
 * Decisions (shared/extractive/decisions.ts): a choice between alternatives by the assistant or
 * the user, with the reason given in the same message; a pick from a listed set of options; not
 * narration.
 */
import { describe, expect, it } from 'vitest';
import { isDecision, listedOptions } from '../../shared/extractive/decisions.ts';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;
const texts = (entries: Array<{ text: string }>) => entries.map((e) => e.text);

describe('decision sentences', () => {
  it('takes choices between alternatives and plans with a reason, not narration', () => {
    expect(isDecision("I'll use a queue here because the callbacks can re-enter.")).toBe(true);
    expect(isDecision("Let's go with SQLite rather than a JSON file.")).toBe(true);
    expect(isDecision('We switched to the streaming parser for large inputs.')).toBe(true);
    expect(isDecision('Wir nehmen Redis statt Memcached, weil es schon läuft.')).toBe(true);
    expect(isDecision("On garde l'ancien format au lieu de migrer les données.")).toBe(true);
    expect(isDecision("I'll look at the scheduler code first.")).toBe(false);
    expect(isDecision('Let me run the tests again.')).toBe(false);
    expect(isDecision('The log shows the raw template instead of the rendered value.')).toBe(false);
    expect(isDecision('Should we use a queue instead of callbacks?')).toBe(false);
  });

  it('takes choices in Chinese, Japanese and Korean, which have no spaces between words', () => {
    expect(isDecision('我们改用 pnpm，因为 npm 太慢了。')).toBe(true);
    expect(isDecision('組件測試用 vitest 而不是 jest。')).toBe(true);
    expect(isDecision('ここでは Redis の代わりに SQLite を使います。')).toBe(true);
    expect(isDecision('캐시 대신 데이터베이스를 사용합니다.')).toBe(true);
    expect(isDecision('我先看一下这个文件的内容。')).toBe(false);
    expect(isDecision('要用 pnpm 还是 npm？')).toBe(false);
  });

  it('takes a plan stated after its reason clause, in one sentence', () => {
    expect(
      isDecision("Since the token isn't exposed to scripts, I'll use a startup hook to capture it."),
    ).toBe(true);
    expect(isDecision('Because the mirror is down, we will try the vendored copy of the package.')).toBe(
      true,
    );
    expect(isDecision('Since the parser is slow, I looked at the profile.')).toBe(false);
  });

  it('takes a right way set against a wrong one: "should …, not …"', () => {
    expect(isDecision('The loader should read the header length from the file, not assume 64 bytes.')).toBe(
      true,
    );
    expect(isDecision('The output is wrong, not the input.')).toBe(false);
  });

  it('takes a switch to a different approach, with the failure before it as the reason', () => {
    expect(isDecision("Let's try a different approach by writing the config file with a heredoc.")).toBe(
      true,
    );
    const { messages } = transcript()
      .user('Update the config')
      .assistant(
        'The in-place edit is not working as expected. Let me try a different approach by rewriting the whole file.',
      );
    const decisions = texts(extractCheckpoint(null, messages, BIG).decisions);
    expect(decisions).toContain(
      'The in-place edit is not working as expected. Let me try a different approach by rewriting the whole file.',
    );
  });

  it('reads numbered and lettered option lists', () => {
    const options = listedOptions('Two ways:\n1. Cache the tokens in memory\n2. Store the tokens in Redis');
    expect(options.get('2')).toBe('Store the tokens in Redis');
    expect(options.get('second')).toBe('Store the tokens in Redis');
    expect(listedOptions('Only one:\n1. Do the thing now').size).toBe(0);
  });
});

describe('decisions in the checkpoint', () => {
  it('splits Chinese sentences at 。 and keeps the one that decides, not the narration around it', () => {
    const { messages } = transcript()
      .user('把构建脚本修好')
      .assistant('我看了一下配置文件。构建脚本改用 tsup，因为 rollup 的配置太复杂了。接下来运行测试。');
    const decisions = texts(extractCheckpoint(null, messages, BIG).decisions);
    expect(decisions.join('\n')).toContain('构建脚本改用 tsup，因为 rollup 的配置太复杂了。');
    expect(decisions.join('\n')).not.toContain('我看了一下配置文件');
  });

  it("keeps a choice first stated in the assistant's reasoning", () => {
    const { messages } = transcript()
      .user('Make the export resumable')
      .assistant(
        '[thinking]\nTwo ways exist. I decided to store a cursor file because the API has no resume token.',
      )
      .assistant('Working on it.');
    const decisions = texts(extractCheckpoint(null, messages, BIG).decisions);
    expect(decisions.join('\n')).toContain(
      'I decided to store a cursor file because the API has no resume token.',
    );
  });

  it('keeps the reason stated in the next sentence of the same message, with the seq', () => {
    const { messages } = transcript()
      .user('Make the importer faster')
      .assistant('I decided to batch the inserts. This avoids one round trip per row.');
    const c = extractCheckpoint(null, messages, BIG);
    expect(c.decisions).toContainEqual({
      text: 'I decided to batch the inserts. This avoids one round trip per row.',
      seq: 1,
    });
  });

  it("records the user's pick from the options the assistant listed", () => {
    const { messages } = transcript()
      .user('The report is slow, what can we do?')
      .assistant(
        'Options:\n1. Precompute the totals nightly\n2. Add an index on orders.created_at\n3. Paginate the report',
      )
      .user('2');
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.decisions)).toContain('the user picked 2: Add an index on orders.created_at');
  });

  it("takes a user's choice from a short message, not from a long pasted task", () => {
    const task = `Build the exporter. ${'Use CSV instead of JSON for the legacy clients. '.repeat(1)}${'Details follow. '.repeat(60)}`;
    const { messages } = transcript()
      .user(task)
      .assistant('Working on it.')
      .user("Let's go with Parquet instead of CSV, the analysts asked for it.");
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.decisions)).toEqual(["Let's go with Parquet instead of CSV, the analysts asked for it."]);
  });
});
