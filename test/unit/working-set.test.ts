import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { legacyToolIds, type Message } from '../../shared/contract/message.ts';
import {
  extractPaths,
  extractWorkingSet,
  formatWorkingSetForPrompt,
  MAX_PATH_CHARS,
  sanitizePath,
} from '../../shared/working-set/working-set.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';

/** A tool call as the corpus stores it: `{"name", "arguments"}` JSON. */
function callJson(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ name, arguments: args });
}

let nextSeq = 0;
function message(role: Message['role'], kind: Message['kind'], content: string): Message {
  const toolCallId = kind === 'message' ? null : 'c1';
  return {
    seq: nextSeq++,
    role,
    kind,
    content,
    toolCallId,
    toolName: null,
    tokenCount: 1,
    pinned: false,
    ...legacyToolIds(kind, toolCallId),
  };
}

describe('extractPaths, per agent style', () => {
  it('SWE-agent: open/create arguments and the [File: ...] header of results', () => {
    expect(extractPaths(callJson('open', { path: 'src/marshmallow/fields.py', line_number: 1474 }))).toEqual([
      'src/marshmallow/fields.py',
    ]);
    expect(extractPaths(callJson('create', { command: 'create reproduce.py' }))).toEqual(['reproduce.py']);
    const result = '[File: /testbed/reproduce.py (1 lines total)]\n1:\n(Open file: /testbed/reproduce.py)';
    expect(extractPaths(result)).toEqual(['/testbed/reproduce.py']);
  });

  it('mini-swe-agent: paths inside shell commands and tracebacks', () => {
    const command = callJson('bash', { command: 'sed -n 1,20p src/a.py && cat /testbed/x.py | grep -n foo' });
    expect(extractPaths(command)).toEqual(['src/a.py', '/testbed/x.py']);
    expect(extractPaths(callJson('bash', { command: 'python reproduce.py' }))).toEqual(['reproduce.py']);
    const traceback = [
      '<returncode>1</returncode>',
      '<output>',
      'Traceback (most recent call last):',
      '  File "/testbed/reproduce.py", line 3, in <module>',
      '  File "/testbed/django/db/models/base.py", line 12, in save',
      'ValueError: bad',
      '</output>',
    ].join('\n');
    expect(extractPaths(traceback)).toEqual(['/testbed/reproduce.py', '/testbed/django/db/models/base.py']);
  });

  it('OpenHands: str_replace_editor path and execute_bash commands', () => {
    const view = callJson('str_replace_editor', {
      path: '/workspace/ponyc/src/libponyc/expr/match.c',
      command: 'view',
      view_range: null,
    });
    expect(extractPaths(view)).toEqual(['/workspace/ponyc/src/libponyc/expr/match.c']);
    const bash = callJson('execute_bash', { command: 'cd /workspace/ponyc && make test', is_input: false });
    expect(extractPaths(bash)).toEqual(['/workspace/ponyc']);
  });

  it('Claude Code: file_path arguments, Read results, and no path from a glob pattern', () => {
    const edit = callJson('Edit', {
      file_path: '/Users/me/app/src/index.ts',
      old_string: 'a',
      new_string: 'b',
    });
    expect(extractPaths(edit)).toEqual(['/Users/me/app/src/index.ts']);
    expect(extractPaths(callJson('Glob', { pattern: '**/*.json', path: '/Users/me/app' }))).toEqual([
      '/Users/me/app',
    ]);
    const read = "     1→#!/usr/bin/env python3\n     2→import json\n     3→open('config/settings.json')";
    expect(extractPaths(read)).toEqual(['config/settings.json']);
  });

  it('reads OpenAI-style arguments given as a JSON string, and truncated tool-call JSON', () => {
    const openai = JSON.stringify({
      name: 'write_file',
      arguments: JSON.stringify({ filePath: 'docs/a b.md' }),
    });
    expect(extractPaths(openai)).toEqual(['docs/a b.md']);
    const truncated =
      '{"name": "bash", "arguments": {"command": "cat /testbed/src/a.py\\nls lib/x.rs [truncated 90 chars]';
    expect(extractPaths(truncated)).toEqual(['/testbed/src/a.py', 'lib/x.rs']);
  });

  it('grep hits, diff headers (without a/ and b/) and ./ prefixes', () => {
    expect(extractPaths('src/a.py:12:def f():\nsrc/b/c.ts:3:5: x')).toEqual(['src/a.py', 'src/b/c.ts']);
    const diff = 'diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n--- /dev/null';
    expect(extractPaths(diff)).toEqual(['src/x.py']);
    expect(extractPaths('ran ./scripts/build.sh and ../lib/util.c')).toEqual([
      'scripts/build.sh',
      '../lib/util.c',
    ]);
  });

  it('any language and OS: Windows, home, dot files, well-known names', () => {
    expect(extractPaths('C:\\Users\\me\\proj\\main.rs ~/.bashrc .gitignore Makefile Cargo.toml')).toEqual([
      'C:\\Users\\me\\proj\\main.rs',
      '~/.bashrc',
      '.gitignore',
      'Makefile',
      'Cargo.toml',
    ]);
  });

  it('drops trailing punctuation', () => {
    expect(
      extractPaths('Look at src/a.py. Then (lib/util.ts), "tests/test_x.py", \'cfg/app.yml\': done'),
    ).toEqual(['src/a.py', 'lib/util.ts', 'tests/test_x.py', 'cfg/app.yml']);
  });

  it('rejects URLs, domains, versions, devices, numbers, MIME types and prose', () => {
    const text = [
      'see https://github.com/a/b/blob/main/x.py and file:///etc/hosts.txt',
      'www.example.com/page example.com git@github.com:owner/repo.git localhost:8080/api/v1',
      'version 1.2.3 v2.0 python3.11 2024/01/02 1/2 42 /dev/null /proc/self/status',
      'and/or read/write application/json text/html @types/node width/2 a/b',
    ].join('\n');
    expect(extractPaths(text)).toEqual(['/etc/hosts.txt']);
  });

  it('ends a URL at a quote, so what follows it in JSON-ish output still counts', () => {
    const searchOutput = 'Links: [{"url":"https://github.com/o/r","title":"docs/guide.md at main"}]';
    expect(extractPaths(searchOutput)).toEqual(['docs/guide.md']);
  });

  it('does not take code for file names', () => {
    const code =
      'console.log(x); self.db = 1; os.path.join(a); np.zeros(3)\nfrom django.conf import settings';
    expect(extractPaths(code)).toEqual([]);
    expect(extractPaths("ENGINE = 'django.db.backends.sqlite3'")).toEqual([]);
  });

  it('needs a sign of a path for a lone absolute segment', () => {
    expect(extractPaths('</output> /help (Current directory: /testbed) ls /testbed/')).toEqual(['/testbed']);
  });

  it('deduplicates in order of first mention', () => {
    expect(extractPaths('a/x.py b/y.py a/x.py')).toEqual(['a/x.py', 'b/y.py']);
  });

  // A catastrophically backtracking regex would hang here until vitest's test timeout.
  it('finds no paths in pathological input', () => {
    const inputs = [
      'ab.'.repeat(200_000),
      '-'.repeat(500_000),
      'a@'.repeat(200_000),
      `${'x/'.repeat(200_000)}!`,
    ];
    for (const input of inputs) expect(extractPaths(input).length).toBeLessThan(5);
  });
});

describe('sanitizePath', () => {
  it('replaces C0, DEL, C1 controls and bidi overrides with ?', () => {
    expect(sanitizePath('a\u0000b\u0007c\u007fd\u0085e\nf')).toBe('a?b?c?d?e?f');
    expect(sanitizePath('evil\u202Etxt.exe\u2066x\u2069')).toBe('evil?txt.exe?x?');
  });

  it('keeps ordinary Unicode, including astral characters', () => {
    expect(sanitizePath('docs/résumé/😀.md')).toBe('docs/résumé/😀.md');
  });

  it(`clips at ${MAX_PATH_CHARS} characters, the … included`, () => {
    const long = `/${'a'.repeat(400)}.py`;
    const clipped = sanitizePath(long);
    expect(clipped).toHaveLength(MAX_PATH_CHARS);
    expect(clipped.endsWith('…')).toBe(true);
    expect(sanitizePath('b'.repeat(MAX_PATH_CHARS))).toBe('b'.repeat(MAX_PATH_CHARS));
  });

  it('never splits a surrogate pair, and replaces unpaired ones', () => {
    const clipped = sanitizePath(`${'a'.repeat(298)}😀😀`);
    expect(clipped.length).toBeLessThanOrEqual(MAX_PATH_CHARS);
    expect(clipped).toBe(`${'a'.repeat(298)}…`);
    expect(sanitizePath('x\uD800y')).toBe('x?y');
  });

  it('is idempotent', () => {
    const once = sanitizePath(`\u202E${'z'.repeat(500)}`);
    expect(sanitizePath(once)).toBe(once);
  });
});

describe('extractWorkingSet', () => {
  const session = [
    message('system', 'message', 'Example: edit /etc/system-prompt/example.py'),
    message('user', 'message', 'Fix the bug in src/app/main.py please'),
    message('assistant', 'tool_call', callJson('bash', { command: 'cat src/app/util.py' })),
    message('tool', 'tool_result', 'def util(): pass  # see src/app/main.py'),
    message('assistant', 'tool_call', callJson('Edit', { file_path: 'src/app/models.py' })),
    message('tool', 'tool_result', 'The file src/app/models.py has been updated.'),
  ];

  it('lists paths most recent first, by latest mention, without duplicates', () => {
    expect(extractWorkingSet(session)).toEqual(['src/app/models.py', 'src/app/main.py', 'src/app/util.py']);
  });

  it('skips system prompts and summaries', () => {
    const summary: Message = { ...message('user', 'summary', 'old/summary.py'), seq: 99 };
    expect(extractWorkingSet([...session, summary])).not.toContain('/etc/system-prompt/example.py');
    expect(extractWorkingSet([...session, summary])).not.toContain('old/summary.py');
  });

  it('appends previous paths not mentioned again, keeping their order', () => {
    const previous = ['lib/old.py', 'src/app/util.py', 'lib/older.py'];
    expect(extractWorkingSet(session, previous)).toEqual([
      'src/app/models.py',
      'src/app/main.py',
      'src/app/util.py',
      'lib/old.py',
      'lib/older.py',
    ]);
  });

  it('sanitizes paths, from the messages and from previous', () => {
    const evil = message('assistant', 'tool_call', callJson('Read', { file_path: 'src/\u202Egnp.js' }));
    expect(extractWorkingSet([evil], ['a\u0000b/c.py'])).toEqual(['src/?gnp.js', 'a?b/c.py']);
  });

  it('has no cap', () => {
    const many = Array.from({ length: 500 }, (_, i) => message('tool', 'tool_result', `src/file${i}.py`));
    expect(extractWorkingSet(many)).toHaveLength(500);
  });
});

describe('formatWorkingSetForPrompt', () => {
  const paths = Array.from({ length: 25 }, (_, i) => `src/f${i}.ts`);

  it('shows at most 20 paths by default, then how many more', () => {
    const lines = formatWorkingSetForPrompt(paths).split('\n');
    expect(lines).toHaveLength(21);
    expect(lines[0]).toBe('src/f0.ts');
    expect(lines[20]).toBe('... and 5 more paths');
  });

  it('honours a limit and adds no line when nothing is left out', () => {
    expect(formatWorkingSetForPrompt(paths.slice(0, 2), 2)).toBe('src/f0.ts\nsrc/f1.ts');
    expect(formatWorkingSetForPrompt(paths.slice(0, 3), 2)).toBe(
      'src/f0.ts\nsrc/f1.ts\n... and 1 more paths',
    );
    expect(formatWorkingSetForPrompt([])).toBe('');
  });

  it('never lets a path break the one-path-per-line shape', () => {
    expect(formatWorkingSetForPrompt(['a\nb.py', 'c.py'])).toBe('a?b.py\nc.py');
  });
});

function loadSession(name: string): Message[] {
  return readFileSync(path.join(CORPUS_DIR, name), 'utf8')
    .trim()
    .split('\n')
    .map((line) => ({ ...(JSON.parse(line) as Message), tokenCount: 0, pinned: false }));
}

describe('extractWorkingSet on real sessions', () => {
  const cases: Array<[string, string[]]> = [
    ['sweagent__marshmallow-1867-fc.jsonl', ['src/marshmallow/fields.py', 'reproduce.py']],
    ['openhands__ponyc-4588.jsonl', ['/workspace/ponylang__ponyc__0.1/src/libponyc/expr/match.c']],
    [
      'claudecode__session-share-general-tool-calls.jsonl',
      ['/Users/pete/.claude/plans/silly-wishing-narwhal.md', '.claude-plugin/plugin.json'],
    ],
    [
      'minisweagent__django-11910.jsonl',
      ['/testbed/django/db/migrations/operations/fields.py', 'django/db/migrations/operations/fields.py'],
    ],
  ];

  for (const [name, expected] of cases) {
    it(`${name}: finds the files the agent worked on, and no URL`, () => {
      const paths = extractWorkingSet(loadSession(name));
      for (const path of expected) expect(paths).toContain(path);
      expect(paths.filter((p) => /:\/\/|^https?:|^www\.|^\/dev\/null$/.test(p))).toEqual([]);
      expect(paths.every((p) => p.length > 0 && p.length <= MAX_PATH_CHARS)).toBe(true);
    });
  }

  it('puts the file edited last first', () => {
    const session = loadSession('sweagent__marshmallow-1867-fc.jsonl');
    const lastEdit = session.findLast((m) => m.kind === 'tool_call' && m.content.includes('"edit"'));
    expect(lastEdit).toBeDefined();
    const upToEdit = session.filter((m) => m.seq <= (lastEdit?.seq ?? 0) + 1);
    expect(extractWorkingSet(upToEdit)[0]).toBe('/testbed/src/marshmallow/fields.py');
  });
});
