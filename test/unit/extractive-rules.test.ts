/**
 * The user's rules (shared/extractive/rule-markers.ts, instructions.ts): a constraint the user
 * states in any of several languages is kept verbatim with its seq until the user lifts it; text
 * the user relays (a quote, a forwarded mail) and tool output state no rule.
 */
import { describe, expect, it } from 'vitest';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { liftsRule, lineSentences, ruleStrength } from '../../shared/extractive/rule-markers.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;
const texts = (entries: Array<{ text: string }>) => entries.map((e) => e.text);

describe('rule sentences by their form', () => {
  it('reads prohibitions and obligations in several languages as strong rules', () => {
    for (const s of [
      'Never push directly to the release branch.',
      'Du darfst die Datenbank nicht löschen.',
      "N'utilise pas de bibliothèque externe.",
      'No toques los archivos de configuración.',
      'Je mag de API niet veranderen.',
      'Não altere os testes existentes.',
      'Non toccare il file di configurazione.',
      '不要修改测试文件。',
      'テストは変更しないでください。',
      '설정 파일은 절대 수정하지 마세요.',
    ])
      expect(ruleStrength(s), s).toBe('strong');
  });

  it('reads restrictions and polite requests as weak rules, descriptions as none', () => {
    expect(ruleStrength('Only touch files under lib/.')).toBe('weak');
    expect(ruleStrength('Bitte antworte auf Deutsch.')).toBe('weak');
    expect(ruleStrength('Por favor usa pnpm.')).toBe('weak');
    expect(ruleStrength('The parser crashes on empty input.')).toBeNull();
    expect(ruleStrength('Der Parser stürzt bei leeren Zeilen ab.')).toBeNull();
    expect(ruleStrength('No funciona con archivos vacíos.')).toBeNull();
  });

  it('reads an imperative without a marker word as a weak rule, in several languages', () => {
    for (const s of [
      'Use two spaces for indentation.',
      'Name the output file report.csv.',
      'Please write the changelog entry in French.',
      'Verwende pnpm für alle Skripte.',
      'Utilise le format ISO pour les dates.',
      'Responde en español.',
    ])
      expect(ruleStrength(s), s).toBe('weak');
    expect(ruleStrength('Reading the file now.')).toBeNull();
    expect(ruleStrength('User records are stored in Postgres.')).toBeNull();
  });

  it('reads Chinese, Japanese and Korean constraints without the common markers', () => {
    expect(ruleStrength('提交前务必运行全部测试。')).toBe('strong');
    expect(ruleStrength('切勿删除迁移文件。')).toBe('strong');
    expect(ruleStrength('用中文写提交信息。')).toBe('weak');
    expect(ruleStrength('日志保持英文。')).toBe('weak');
    expect(ruleStrength('コメントは英語で書いてください。')).toBe('weak');
    expect(ruleStrength('변수 이름은 영어로 작성하세요.')).toBe('weak');
    expect(ruleStrength('解析器在空文件上崩溃了。')).toBeNull();
  });

  it('reads permissions and cancellations as lifting a rule', () => {
    expect(liftsRule('You can use the network now.')).toBe(true);
    expect(liftsRule('Forget what I said about the cache.')).toBe(true);
    expect(liftsRule('Du darfst jetzt die Datenbank löschen.')).toBe(true);
    expect(liftsRule('Please use the network.')).toBe(false);
    expect(liftsRule('You can see the error in the log.')).toBe(false);
    expect(liftsRule('Vergiss nicht, die Tests zu starten.')).toBe(false);
  });

  it('splits Chinese and Japanese sentences on full-width stops', () => {
    expect(lineSentences('先运行测试。不要提交代码！好吗？')).toEqual([
      '先运行测试。',
      '不要提交代码！',
      '好吗？',
    ]);
  });
});

describe('the user rules in the checkpoint', () => {
  it('keeps a rule in another language verbatim with its seq', () => {
    const { messages } = transcript()
      .user('Repariere den Import.')
      .assistant('Ich schaue mir das an.')
      .user('Du darfst die Datei setup.cfg auf keinen Fall ändern.');
    const c = extractCheckpoint(null, messages, BIG);
    expect(c.userInstructions).toContainEqual({
      text: 'Du darfst die Datei setup.cfg auf keinen Fall ändern.',
      seq: 2,
    });
  });

  it('keeps each of a dozen rules one message states', () => {
    const subjects = [
      'alpha',
      'bravo',
      'charlie',
      'delta',
      'echo',
      'foxtrot',
      'golf',
      'hotel',
      'india',
      'juliet',
      'kilo',
      'lima',
      'mike',
      'november',
    ];
    const rules = subjects.map((s) => `Never rename the ${s} module.`);
    const { messages } = transcript()
      .user('Clean up the package layout')
      .assistant('Looking at it.')
      .user(`Some constraints for the clean-up. ${rules.join(' ')}`);
    const kept = texts(extractCheckpoint(null, messages, BIG).userInstructions);
    for (const rule of rules) expect(kept).toContain(rule);
  });

  it('keeps a long rule sentence whole, up to 400 characters', () => {
    const rule =
      'Never change the public signatures of the exported functions in the client package, including their parameter names, default values and the order of their overloads, because downstream services generate bindings from them at build time and a renamed parameter breaks every one of those builds without a compile error on our side.';
    expect(rule.length).toBeGreaterThan(300);
    const { messages } = transcript()
      .user('Refactor the client package')
      .assistant('Reading it.')
      .user(`One more thing. ${rule}`);
    expect(texts(extractCheckpoint(null, messages, BIG).userInstructions)).toContain(rule);
  });

  it('drops a rule once the user lifts it, keeping the lifting words', () => {
    const { messages } = transcript()
      .user('Add retries to the uploader.')
      .assistant('Sure.')
      .user('Do not touch the network layer.')
      .assistant('Understood.')
      .user('OK, you can edit the network layer now.');
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.userInstructions)).not.toContain('Do not touch the network layer.');
    expect(texts(c.userInstructions)).toContain('OK, you can edit the network layer now.');
  });

  it('ranks the rules of one message above its permissions, which lift nothing in it', () => {
    const { messages } = transcript().user(
      [
        'Never edit the generated files under gen/.',
        'You can also write helper scripts in gen/ now if it helps.',
        'You must run the linter before you finish.',
      ].join('\n'),
    );
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.userInstructions).slice(0, 2)).toEqual([
      'Never edit the generated files under gen/.',
      'You must run the linter before you finish.',
    ]);
  });

  it('takes no rule from a quoted block, a forwarded mail or tool output', () => {
    const { messages } = transcript()
      .user(
        [
          'See what the vendor wrote:',
          '> You must never call the billing endpoint more than once a minute.',
          '',
          'Summarize their position for me.',
        ].join('\n'),
      )
      .bash('cat CONTRIBUTING.md', 'Always run the linter. Never commit to main.', 0)
      .user(
        [
          'Fix the export button.',
          '',
          '---------- Forwarded message ---------',
          'From: Ops <ops@example.org>',
          'Subject: deploys',
          '',
          'Never deploy on Fridays.',
        ].join('\n'),
      );
    const c = extractCheckpoint(null, messages, BIG);
    const all = texts(c.userInstructions).join('\n');
    expect(all).not.toContain('billing endpoint');
    expect(all).not.toContain('linter');
    expect(all).not.toContain('Fridays');
  });
});
