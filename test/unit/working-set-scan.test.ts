/**
 * The path scan reads only the runs of path characters around `.`, `/` and `\`; it must find
 * exactly what reading every candidate of the whole text finds (`extractPathsExhaustively`), on
 * tricky inputs, on generated ones, and on every message of the corpus.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractPaths, extractPathsExhaustively } from '../../shared/working-set/working-set.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';

const TRICKY = [
  '',
  'no marks at all here',
  'Makefile and Dockerfile without a dot, then src/a.py',
  'a GNUmakefile, --Makefile, xMakefile, Makefiles and Makefile.',
  'Sentence ends with setup.py.',
  '.',
  '/',
  '\\',
  'a.b.c.d.e',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell variable, on purpose
  'see $HOME/x.py, ${ROOT}/y.py, f().then, *.py, <name>/SKILL.md and cmd >/tmp/out.txt',
  'x>/a/b/c and x->/a/b/c',
  'C:\\Users\\me\\file.txt and D:/data/x.csv and C:',
  '~/notes/todo.md ~/x ~x/y.md',
  'https://example.com/a/b.py http://x/y git@github.com:org/repo.git localhost:8080/api/v1 file:///etc/hosts',
  '#!/usr/bin/env python\nimport os',
  "sed -i 's/old/new/g' src/a.py && 12,14s/a/b/ x.c",
  'diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@',
  'a//b x/// ///PROCESS-DONE/// /dev/null /proc/1/stat',
  '😀/a/b.py 😀src/x.py 🎉.py naïve/ファイル.py Ünïcödé/pfad/datei.txt',
  '\ud83d/a/b.py lone\udc00/x.py',
  'File "/testbed/reproduce.py", line 3, in <module>',
  'version 1.2.3 and v2.0/x and 10.0.0.1/24 and a/1',
  'me@x.in icon@2x.png @scope/pkg/index.js',
  'self.db console.log( from django.conf import settings; backends.sqlite3',
  'and/or read/write application/json src/utils org/repo .github/workflows',
  '/tmp/tmpab12_xyz/a.py /tmp/pip-req-build-abcd1234/setup.py',
  'trailing dir src/ and my_pkg/ and HD/ and 317s/a/b/',
  '{"name": "open", "arguments": {"path": "src/a.py"}}',
  '{"name": "bash", "arguments": "{\\"command\\": \\"cat /x/y.txt\\"}"}',
  '{"name": "bash", "arguments": {"command": "cat /x/y.t',
  '-/a/b.py +/a/c.py a+b/c.py a_b.-/x.py .../x.py ../x.py ./y.py',
  'end with mark /',
  'x\\y\\z.txt \\\\server\\share\\f.txt',
];

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

const PIECES = [
  'a',
  'src',
  'x.py',
  'Makefile',
  '.',
  '/',
  '\\',
  '~',
  ':',
  '-',
  '_',
  '@',
  '+',
  ' ',
  '\n',
  '$',
  '{',
  '}',
  '(',
  ')',
  '*',
  '>',
  '<',
  '"',
  "'",
  '1',
  '2.0',
  'C:',
  'http://',
  's/',
  '#!',
  'é',
  '😀',
  'ファ',
  'diff --git a/',
  '--- a/',
  'com',
  'tmp',
  'json',
  'setup.py',
  '..',
  '//',
];

describe('the scan around path marks', () => {
  it.each(TRICKY.map((text) => [JSON.stringify(text).slice(0, 60), text]))(
    'finds what the whole-text scan finds: %s',
    (_, text) => {
      expect(extractPaths(text)).toEqual(extractPathsExhaustively(text));
    },
  );

  it('finds what the whole-text scan finds on 3,000 generated texts', () => {
    const next = random(42);
    for (let n = 0; n < 3_000; n++) {
      let text = '';
      const length = 1 + Math.floor(next() * 40);
      for (let i = 0; i < length; i++) text += PIECES[Math.floor(next() * PIECES.length)];
      expect(extractPaths(text), JSON.stringify(text)).toEqual(extractPathsExhaustively(text));
    }
  });

  it('finds what the whole-text scan finds in every message of the corpus', () => {
    let compared = 0;
    for (const dir of [path.join(CORPUS_DIR), path.join(CORPUS_DIR, '..', 'claude-code')]) {
      for (const name of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
        for (const line of readFileSync(path.join(dir, name), 'utf8').split('\n')) {
          if (line.trim() === '') continue;
          const record = JSON.parse(line) as { content?: unknown };
          const text = typeof record.content === 'string' ? record.content : line;
          expect(extractPaths(text), `${name}: ${text.slice(0, 80)}`).toEqual(extractPathsExhaustively(text));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(1_000);
  });
});
