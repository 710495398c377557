/**
 * Patterns rewritten to stay linear on adversarial transcript text (`npm run bench:regex` measures
 * them): each rewrite must decide exactly what the pattern it replaced decided. Each is pinned on
 * realistic inputs, and compared with the old pattern (kept here as the reference) on generated
 * texts short enough for the old pattern to finish.
 */
import { describe, expect, it } from 'vitest';
import { checklist } from '../../shared/extractive/state.ts';
import { headingTitle } from '../../shared/extractive/summaries.ts';
import { foundIn, instructionSentences } from '../../shared/fidelity/score.ts';
import { OPEN_REST_CHARS, scriptWrites } from '../../shared/text/shell.ts';
import { classifyUserMessage, isMarkupOnly, lastQuestion } from '../../shared/text/user-messages.ts';

/** A deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` texts of 0 to `most` pieces drawn from `pieces`, the same on every run. */
function generated(pieces: string[], count: number, most: number, seed = 42): string[] {
  const next = random(seed);
  const texts: string[] = [];
  for (let n = 0; n < count; n++) {
    let text = '';
    const length = Math.floor(next() * (most + 1));
    for (let i = 0; i < length; i++) text += pieces[Math.floor(next() * pieces.length)];
    texts.push(text);
  }
  return texts;
}

describe('machine markup only (a user message that is only reminders and IDE notices)', () => {
  /** The pattern `isMarkupOnly` replaced: it backtracks exponentially in the number of elements. */
  const MARKUP_ONLY = /^(?:\s*<(ide[_-][\w-]+|[a-z]+(?:-[a-z]+)+)(?:\s[^>]*)?>[\s\S]*?<\/\1>\s*)+$/i;

  const REALISTIC: Array<[string, boolean]> = [
    ['<system-reminder>The todo list is empty.</system-reminder>', true],
    [
      '<system-reminder>\nAs you answer, use this context.\n</system-reminder>\n\n<ide_opened_file>The user opened a.md in the IDE.</ide_opened_file>',
      true,
    ],
    ['<system-reminder>x</system-reminder>\nnow rename foo to bar', false],
    ['<ide_selection lines="3-9">def f(): pass</ide_selection>', true],
    // An element may hold another of the same name: it ends at a later closing tag.
    ['<system-reminder>a <system-reminder>b</system-reminder> c</system-reminder>', true],
    ['<System-Reminder>case aside</system-reminder>', true],
    ['<pr_description>Fix the bug</pr_description>', false],
    ['<uploaded_files>/testbed</uploaded_files>', false],
    ['<system-reminder>never closed', false],
    ['<system-reminder>a</task-notification>', false],
    ['', false],
    ['   ', false],
    ['plain words', false],
  ];

  it.each(REALISTIC.map(([text, only]) => [JSON.stringify(text).slice(0, 70), text, only]))(
    'decides %s as before',
    (_, text, only) => {
      expect(isMarkupOnly(text as string)).toBe(only);
      expect(isMarkupOnly(text as string)).toBe(MARKUP_ONLY.test(text as string));
    },
  );

  it('decides what the old pattern decided on 5,000 generated texts', () => {
    const pieces = [
      '<system-reminder>',
      '</system-reminder>',
      '<SYSTEM-REMINDER a="1">',
      '<ide_opened_file>',
      '</ide_opened_file>',
      '<task-notification x>',
      '</task-notification>',
      '<a-b>',
      '</a-b>',
      '</A-b>',
      '<pr_description>',
      '</pr_description>',
      '<a-b',
      '</',
      '<',
      '>',
      ' ',
      '\n',
      '\t',
      'x',
      'fix it',
    ];
    for (const text of generated(pieces, 5_000, 12)) {
      expect(isMarkupOnly(text), JSON.stringify(text)).toBe(MARKUP_ONLY.test(text));
    }
  });

  it('classifies many reminders followed by the user words as the request they end with', () => {
    const reminders = '<system-reminder>Remember the todo list.</system-reminder>\n'.repeat(5_000);
    expect(classifyUserMessage(`${reminders}Fix the login bug`)).toBe('request');
    expect(classifyUserMessage(reminders)).toBe('notice');
  });
});

describe('the last question of an assistant message', () => {
  /** `lastQuestion` as it was: both searches re-read a long line from each of its positions. */
  function lastQuestionBefore(text: string): string | null {
    const clip = (t: string, max: number) => (t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`);
    const prose = text.replace(/```[\s\S]*?(?:```|$)/g, ' ');
    const questions = prose.match(/[^.!?\n]*\?/g);
    const last = questions?.[questions.length - 1]?.trim();
    if (last && last.length > 3) return clip(last.replace(/^[-*#>\d.)\s]+/, ''), 300);
    const options = /([^\n]{8,}):[ \t]*\n\s*(?:1|a)[.)]\s[^\n]*\n\s*(?:2|b)[.)]\s/i.exec(prose);
    return options?.[1] ? clip(`${options[1].trim()}:`, 300) : null;
  }

  const REALISTIC: Array<[string, string | null]> = [
    ['I fixed the import. Shall I also delete the old files?', 'Shall I also delete the old files?'],
    ['Which database should I use?\n- Postgres\n- SQLite', 'Which database should I use?'],
    ['Done! Want me to run the tests? Or push?', 'Or push?'],
    ['Options:\n```\nwhat?\n```\nOK.', null],
    ['Which one do you prefer:\n1. Redis\n2. Memcached', 'Which one do you prefer:'],
    ['Pick an approach:\n\n  a) rewrite it\n  b) patch it', 'Pick an approach:'],
    ['x: see\nNote: the two ways:\n1. one\n2. two', 'Note: the two ways:'],
    ['All tests pass.', null],
    ['Ok?', null],
    ['Why?', 'Why?'],
    ['1. Should I keep the flag?', 'Should I keep the flag?'],
  ];

  it.each(REALISTIC.map(([text, question]) => [JSON.stringify(text).slice(0, 60), text, question]))(
    'finds %s as before',
    (_, text, question) => {
      expect(lastQuestion(text as string)).toBe(question);
      expect(lastQuestion(text as string)).toBe(lastQuestionBefore(text as string));
    },
  );

  it('finds what the old searches found on 5,000 generated texts', () => {
    const pieces = [
      'Which one',
      'Pick one:',
      ' it',
      '?',
      '.',
      '!',
      ':',
      ' ',
      '\t',
      '\n',
      '\n1. x',
      '\n2) y',
      '\na) z',
      '\nb. w',
      '1.',
      '```',
      '-',
      'x',
    ];
    for (const text of generated(pieces, 5_000, 16)) {
      expect(lastQuestion(text), JSON.stringify(text)).toBe(lastQuestionBefore(text));
    }
  });

  it('finds the question after a long line without one', () => {
    expect(lastQuestion(`${'word '.repeat(4_000)}\nShall I go on?`)).toBe('Shall I go on?');
    expect(lastQuestion(`${'ab: '.repeat(5_000)}\nPick one:\n1. x\n2. y`)).toBe('Pick one:');
  });
});

describe('a checklist printed in a message', () => {
  /** `checklist` as it was, with the pattern that took the task (`\s+(.+?)\s*$`). */
  function checklistBefore(text: string, seq: number) {
    const CHECK_LINE = /^\s*(?:[-*+]\s+|\d+[.)]\s+)?(☐|☒|☑|✅|✔|✓|⬜|◻|◼|🔄|\[[ xX~-]\])\s+(.+?)\s*$/u;
    const list = { seq, done: [] as string[], active: [] as string[], open: [] as string[] };
    let count = 0;
    for (const line of text.slice(0, 50_000).split('\n')) {
      const match = CHECK_LINE.exec(line);
      if (!match) continue;
      const [, box = '', body = ''] = match;
      const task = body.replace(/~~/g, '').trim();
      if (task.length < 2) continue;
      count++;
      if (/[☒☑✅✔✓◼]|\[[xX]\]/u.test(box)) list.done.push(task);
      else if (/🔄|\[[~-]\]/u.test(box)) list.active.push(task);
      else list.open.push(task);
    }
    return count >= 2 ? list : null;
  }

  it('reads realistic checklists as before', () => {
    const texts = [
      '☒ Read the failing test\n☐ Fix the parser  \n🔄 Run the suite',
      '- [x] migrate the schema\n- [ ] update the docs\n- [~] ~~write~~ tests\r\n1. [-] deploy',
      'Todos:\n  * ✅ done one\n  * ⬜ next one\t\n',
      '☐ a\n☐ b\n☐  \n☐\tc c',
      '- [ ] only one',
      '☐ x\u2028y\n☐ two words\n☐ three words',
    ];
    expect(checklist(texts[0] as string, 7)).toEqual({
      seq: 7,
      done: ['Read the failing test'],
      active: ['Run the suite'],
      open: ['Fix the parser'],
    });
    expect(checklist(texts[1] as string, 1)).toEqual({
      seq: 1,
      done: ['migrate the schema'],
      active: ['write tests', 'deploy'],
      open: ['update the docs'],
    });
    for (const text of texts)
      expect(checklist(text, 1), JSON.stringify(text)).toEqual(checklistBefore(text, 1));
  });

  it('reads what the old pattern read on 5,000 generated texts', () => {
    const pieces = [
      '☐',
      '☒',
      '🔄',
      '[ ]',
      '[x]',
      '- ',
      '1. ',
      ' ',
      '  ',
      '\t',
      '\r',
      '\u2028',
      '~~',
      'ab',
      'c',
      '\n',
    ];
    for (const text of generated(pieces, 5_000, 16)) {
      expect(checklist(text, 1), JSON.stringify(text)).toEqual(checklistBefore(text, 1));
    }
  });

  it('reads a task after a long run of spaces', () => {
    const text = `☐ fix${' '.repeat(20_000)}the parser\n☐ run the tests`;
    expect(checklist(text, 1)?.open).toEqual([`fix${' '.repeat(20_000)}the parser`, 'run the tests']);
  });
});

describe('the headings of a summary in the transcript', () => {
  /** The pattern `headingTitle` replaced: its Markdown form tried every split of a run of spaces. */
  const HEADING_LINE =
    /^\s*(?:#{1,6}\s+(.+?)\s*#*|\*\*(.+?)\*\*:?|(?:\d+|[A-Z])[.)]\s+(?:\*\*)?([^:*\n]{3,60}?)(?:\*\*)?:|([A-Z][^:\n]{2,50}):)\s*$/;
  const titleBefore = (line: string) => {
    const heading = HEADING_LINE.exec(line);
    return heading ? (heading[1] ?? heading[2] ?? heading[3] ?? heading[4] ?? '') : null;
  };

  const REALISTIC: Array<[string, string | null]> = [
    ['## Next steps', 'Next steps'],
    ['### Completed ###', 'Completed'],
    ['  # Files changed  \r', 'Files changed'],
    ['# C# notes', 'C# notes'],
    ['# #', '#'],
    ['####### seven marks', null],
    ['#hashtag', null],
    ['**Pending**:', 'Pending'],
    ['**Errors and fixes**', 'Errors and fixes'],
    ['1. Primary Request and Intent:', 'Primary Request and Intent'],
    ['B) **Key Technical Concepts**:', 'Key Technical Concepts'],
    ['Current work:', 'Current work'],
    ['- a bullet', null],
    ['plain prose line', null],
  ];

  it.each(REALISTIC.map(([line, title]) => [JSON.stringify(line), line, title]))(
    'reads %s as before',
    (_, line, title) => {
      expect(headingTitle(line as string)).toBe(title);
      expect(headingTitle(line as string)).toBe(titleBefore(line as string));
    },
  );

  it('reads what the old pattern read on 20,000 generated lines', () => {
    const pieces = [
      '#',
      '##',
      '###',
      ' ',
      '  ',
      '\t',
      '\u00a0',
      '\r',
      '\u2028',
      'Next steps',
      'a',
      'B',
      '**',
      ':',
      '1.',
      'A)',
      '*',
    ];
    for (const line of generated(pieces, 20_000, 10)) {
      expect(headingTitle(line), JSON.stringify(line)).toBe(titleBefore(line));
    }
  });

  it('reads a heading line with a long run of spaces', () => {
    expect(headingTitle(`## Next${' '.repeat(20_000)}steps`)).toBe(`Next${' '.repeat(20_000)}steps`);
    expect(headingTitle(`## Next${' '.repeat(20_000)}\rsteps`)).toBeNull();
  });
});

describe('the files a script writes with Python open()', () => {
  /** `scriptWrites` as it was: the rest of an `open(` call was read up to its `)` at any length. */
  function scriptWritesBefore(script: string): string[] {
    const LITERAL = String.raw`[rRbB]?(['"])([^'"\n\\]+)\1`;
    const PY_OPEN = new RegExp(String.raw`\bopen\(\s*${LITERAL}\s*(,[^)\n]*)?\)`, 'g');
    const WRITE_MODE = /^,\s*(['"])[rbtU]*[wax+]|,\s*mode\s*=\s*(['"])[rbtU]*[wax+]/;
    const PY_PATH_WRITE = new RegExp(String.raw`\bPath\(\s*${LITERAL}\s*\)\s*\.write_(?:text|bytes)\(`, 'g');
    const NODE_WRITE =
      /\b(?:writeFile|appendFile|createWriteStream)(?:Sync)?\(\s*(['"\x60])([^'"\x60\n$\\]+)\1/g;
    const found: Array<{ at: number; path: string }> = [];
    for (const m of script.matchAll(PY_OPEN))
      if (WRITE_MODE.test(m[3] ?? '')) found.push({ at: m.index, path: m[2] ?? '' });
    for (const m of script.matchAll(PY_PATH_WRITE)) found.push({ at: m.index, path: m[2] ?? '' });
    for (const m of script.matchAll(NODE_WRITE)) found.push({ at: m.index, path: m[2] ?? '' });
    const paths = found
      .sort((a, b) => a.at - b.at)
      .map((f) => f.path.trim())
      .filter((p) => p !== '');
    return [...new Set(paths)];
  }

  it('reads the mode of realistic calls as before', () => {
    const script = [
      "with open('a.py', 'w', encoding='utf-8', newline='') as f:",
      "    f.write(open('b.py').read())",
      "log = open(r'logs/run.log', mode='a', buffering=1, encoding='utf-8', errors='replace', newline='\\n')",
      `open('long.txt', 'w'${', closefd=True'.repeat(12)})`,
      "open('c.py', 'r', encoding=get_encoding())",
      "open( 'd.py' ,'x' )",
    ].join('\n');
    expect(scriptWrites(script)).toEqual(['a.py', 'logs/run.log', 'long.txt', 'd.py']);
    expect(scriptWrites(script)).toEqual(scriptWritesBefore(script));
  });

  it('reads what the old pattern read on 5,000 generated scripts', () => {
    const pieces = [
      "open('a.py'",
      'open("b.py"',
      'open(',
      ', ',
      "'w'",
      "'r'",
      'mode=',
      "'a'",
      ')',
      '(',
      '\n',
      ' ',
      'x',
      "'",
    ];
    for (const script of generated(pieces, 5_000, 14)) {
      expect(scriptWrites(script), JSON.stringify(script)).toEqual(scriptWritesBefore(script));
    }
  });

  it(`reads a call's rest up to ${OPEN_REST_CHARS} characters, and a line of unclosed calls`, () => {
    // The rest after the path: its comma, then `n` characters.
    const rest = (n: number) => `,${" 'w'".padEnd(n)}`;
    expect(scriptWrites(`open('kept.py'${rest(OPEN_REST_CHARS)})`)).toEqual(['kept.py']);
    expect(scriptWrites(`open('left.py'${rest(OPEN_REST_CHARS + 1)})`)).toEqual([]);
    expect(scriptWrites(`${"open('a', ".repeat(20_000)}\nopen('b.py', 'w')`)).toEqual(['b.py']);
  });
});

describe("the fidelity check's sentences and their normal form", () => {
  /** The patterns the loops replaced: each re-read a run inside a line from each of its positions. */
  const QUOTES = /^["'“‘`]+|["'”’`]+$/g;
  const normalizeBefore = (text: string) =>
    text
      .toLowerCase()
      .replace(/[’‘]/g, "'")
      .replace(/[`*_"“”]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/[\s.!?;:,]+$/, '');
  const STOPWORDS = new Set(
    'the and for with this that you your are was were has have had but not its into from then than there these those they them will would could should can our out all any some just please also use'.split(
      ' ',
    ),
  );
  const NEGATIONS = /\b(?:not|never|no|don't|dont|avoid|stop|without|nothing|none)\b/;
  const wordsBefore = (normalized: string) =>
    (normalized.match(/[\p{L}\p{N}][\p{L}\p{N}'_./-]*/gu) ?? [])
      .map((w) => w.replace(/[.'/-]+$/, ''))
      .filter((w) => w.length >= 3 && !STOPWORDS.has(w));
  /** `foundIn` with the old normal form. */
  function foundInBefore(sentence: string, summary: string): boolean {
    const needle = normalizeBefore(sentence);
    if (needle.length === 0) return true;
    if (normalizeBefore(summary).includes(needle)) return true;
    const words = [...new Set(wordsBefore(needle))];
    if (words.length < 3) return false;
    const negated = NEGATIONS.test(needle);
    const need = Math.ceil(words.length * 0.8);
    return summary
      .split('\n')
      .map(normalizeBefore)
      .filter((l) => l.length > 0)
      .some((line) => {
        if (negated && !NEGATIONS.test(line)) return false;
        const lineWords = new Set(wordsBefore(line));
        return words.filter((w) => lineWords.has(w)).length >= need;
      });
  }

  it('strips the quotes around a rule as before', () => {
    const text = [
      '"Never run `npm publish`."',
      "'Don't touch the migrations.'",
      '“Always run the tests first.”',
      '`never run git push --force`',
      '"‘Never run this twice.’"',
      '"""Never run it"',
    ].join('\n');
    expect(instructionSentences(text)).toEqual([
      'Never run `npm publish`.',
      "Don't touch the migrations.",
      'Always run the tests first.',
      'never run git push --force',
      'Never run this twice.',
      'Never run it',
    ]);
  });

  it('keeps the sentences the old quote pattern kept, on 5,000 generated lines', () => {
    // Every line holds "never run", which makes any sentence that keeps it a rule, quotes or not.
    const pieces = ['"', "'", '“', '”', '‘', '’', '`', ' ', 'x', '. ', '!', 'never run it'];
    const expected = (text: string) =>
      text
        .split('\n')
        .flatMap((line) => line.trim().split(/(?<=\S[.!?])\s+/))
        .map((piece) => piece.trim().replace(QUOTES, ''))
        .filter((s) => s.length >= 6 && s.length <= 300 && /\bnever run\b/i.test(s));
    for (const line of generated(pieces, 5_000, 12)) {
      const text = `${line}never run it${line}`;
      expect(instructionSentences(text), JSON.stringify(text)).toEqual(expected(text));
    }
  });

  it('finds a sentence in a summary as before, trailing punctuation and word ends aside', () => {
    const cases: Array<[string, string, boolean]> = [
      ['Never force-push to main!!!', 'Rules:\n- never force-push to main', true],
      ['Use pnpm, not npm...  ', '- use pnpm, not npm', true],
      ['Do not edit src/legacy/ or docs/old- files.', '- do not edit the src/legacy or docs/old files', true],
      ['Do not edit src/legacy/ or docs/old- files.', '- edit the src/legacy or docs/old files', false],
      ['error: cannot find module "x" ,;:', 'Blockers:\n- error: cannot find module x', true],
      // A word's trailing `.` is dropped: `main.` is `main` of the summary.
      ['Never deploy main. Ever', 'Rules:\n- never deploy main, ever', true],
    ];
    for (const [sentence, summary, found] of cases) {
      expect(foundIn(sentence, summary), sentence).toBe(found);
      expect(foundIn(sentence, summary), sentence).toBe(foundInBefore(sentence, summary));
    }
  });

  it('finds what the old normal form found, on 5,000 generated sentences and summaries', () => {
    const pieces = [
      'never',
      ' ',
      'run',
      'deploy',
      'main',
      '.',
      '!',
      '?',
      ';',
      ':',
      ',',
      "'",
      '/',
      '-',
      '"',
      '*',
      '\n',
      'x',
    ];
    const sentences = generated(pieces, 5_000, 10, 1);
    const summaries = generated(pieces, 5_000, 14, 2);
    sentences.forEach((sentence, i) => {
      const summary = summaries[i] as string;
      expect(foundIn(sentence, summary), JSON.stringify([sentence, summary])).toBe(
        foundInBefore(sentence, summary),
      );
    });
  });

  it('reads a line with a long run of quotes and a summary with a long run of dots', () => {
    expect(instructionSentences(`x${'"'.repeat(20_000)}x`)).toEqual([]);
    expect(foundIn('Never deploy on Fridays.', `${'.'.repeat(20_000)}x\n- never deploy on fridays`)).toBe(
      true,
    );
  });
});
