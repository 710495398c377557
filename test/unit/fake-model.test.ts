/**
 * The fake Messages API's model (test/support/fake-model/): the checkpoint it writes for compactor's
 * real summary prompt follows the system prompt's field definitions, so the tests that use the fake
 * exercise every field with real content. Failed, rejected and interrupted calls never completed;
 * errors paired with their fixes, the unfixed ones blockers; files by role, written ones first;
 * next step with its seq; the previous checkpoint merged; the stated token target kept.
 */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../shared/contract/message.ts';
import { type Checkpoint, checkpointSchema } from '../../shared/summary/checkpoint.ts';
import { buildSummaryPrompt } from '../../shared/summary/prompt.ts';
import { deriveCheckpoint } from '../support/fake-model/checkpoint.ts';
import { transcript } from '../support/transcript-builder.ts';

/** The tool input the fake model writes for `leaving` after `previous`. */
function modelInput(leaving: Message[], previous: Checkpoint | null, maxSummaryTokens: number) {
  const prompt = buildSummaryPrompt({ previous, leaving, maxSummaryTokens });
  const input = deriveCheckpoint(prompt.user, { maxTokens: maxSummaryTokens, analysis: true });
  return { prompt, input };
}

/** What the fake model answers for `leaving` after `previous`, validated as compactor validates it. */
function answer(
  leaving: Message[],
  previous: Checkpoint | null = null,
  maxSummaryTokens = 4_000,
): Checkpoint {
  const { prompt, input } = modelInput(leaving, previous, maxSummaryTokens);
  const { analysis, workingSet, ...rest } = input;
  expect(typeof analysis).toBe('string');
  return checkpointSchema.parse({ ...rest, workingSet: [...prompt.workingSet, ...(workingSet as string[])] });
}

const texts = (items: Array<{ text: string }>) => items.map((i) => i.text).join('\n');

/** A session with a failure fixed later, one never fixed, a rejected, an interrupted and a good call. */
function session() {
  return transcript()
    .user('Fix the failing parser test. Never edit the fixtures under tests/data.')
    .assistant("I'll run the parser tests first.")
    .bash(
      'cd /repo && python -m pytest tests/test_parser.py -q 2>&1 | tail -5',
      'E   ValueError: bad token\n1 failed',
      1,
    )
    .tool('Read', { file_path: 'src/parser.py' }, '1\tdef parse(text):\n2\t    return text')
    .tool(
      'Edit',
      { file_path: 'src/parser.py', old_string: 'return text', new_string: 'return text.strip()' },
      'The file src/parser.py has been updated.',
    )
    .tool(
      'Edit',
      { file_path: 'src/config.ts', old_string: 'a', new_string: 'b' },
      'User rejected update to src/config.ts',
    )
    .tool('Bash', { command: 'npm run deploy' }, '[Request interrupted by user for tool use]')
    .bash('python -m pytest tests/test_parser.py -q', '2 passed in 0.12s')
    .bash('make docs', 'make: *** [docs] Error 2', 2);
}

describe('the fake model: completed work', () => {
  it('lists calls that ended ok with their result, never a failed, rejected or interrupted one', () => {
    const checkpoint = answer(session().messages);
    const completed = texts(checkpoint.completed);
    expect(completed).toContain('edited src/parser.py: replaced "return text" with "return text.strip()"');
    expect(completed).toContain('ran `python -m pytest tests/test_parser.py -q`: 2 passed in 0.12s');
    expect(completed).not.toMatch(/config\.ts|deploy|make docs|ValueError/);
    // Reads look, they finish nothing.
    expect(completed).not.toContain('Read');
    // The interrupted call is work started and not finished; the rejection, the user's choice.
    expect(texts(checkpoint.inProgress)).toContain('`npm run deploy`: interrupted by the user');
    expect(texts(checkpoint.decisions)).toContain('the user rejected Edit src/config.ts');
  });
});

describe('the fake model: errors, fixes and blockers', () => {
  it('pairs an error with the later success that fixed it, and leaves only the unfixed one blocking', () => {
    const { messages } = session();
    const checkpoint = answer(messages);
    const failedRun = messages.find((m) => m.kind === 'tool_result' && m.content.includes('ValueError'));
    expect(checkpoint.errorsAndFixes).toEqual([
      {
        error: '`python -m pytest tests/test_parser.py -q 2>&1 | tail -5`: E ValueError: bad token',
        fix: 'after editing src/parser.py: ran `python -m pytest tests/test_parser.py -q`: 2 passed in 0.12s',
        seq: failedRun?.seq,
      },
    ]);
    expect(texts(checkpoint.blockers)).toBe('`make docs` failed: make: *** [docs] Error 2');
    expect(texts(checkpoint.blockers)).not.toContain('ValueError');
  });

  it('moves a previous blocker to errorsAndFixes once a later run of the same command succeeds', () => {
    const first = session();
    const before = answer(first.messages);
    expect(texts(before.blockers)).toContain('make docs');
    const next = transcript(first.messages).bash('make docs', 'built docs/index.html');
    const after = answer(next.messages.slice(first.messages.length), before);
    expect(after.blockers).toEqual([]);
    expect(after.errorsAndFixes).toContainEqual({
      error: '`make docs` failed: make: *** [docs] Error 2',
      fix: 'ran `make docs`: built docs/index.html',
      seq: before.blockers[0]?.seq,
    });
  });

  it('keeps an error without a fix blocking, and an earlier error of the same command as met but unfixed', () => {
    const { messages } = transcript()
      .user('Make the build pass.')
      .bash('make all', 'src/a.c:3: error: expected ;', 2)
      .bash('make all', 'src/b.c:9: error: unknown type name', 2);
    const checkpoint = answer(messages);
    expect(texts(checkpoint.blockers)).toBe('`make all` failed: src/b.c:9: error: unknown type name');
    expect(checkpoint.errorsAndFixes).toEqual([
      { error: '`make all`: src/a.c:3: error: expected ;', fix: null, seq: 2 },
    ]);
  });
});

describe('the fake model: files', () => {
  it('lists the edited and created files first, with the change and the seq of the call', () => {
    const { messages } = session()
      .tool(
        'Write',
        { file_path: 'docs/parser.md', content: '# Parser\n\nStrips input.' },
        'File created successfully at: docs/parser.md',
      )
      .bash('cat README.md', 'Parser project');
    const checkpoint = answer(messages);
    const edit = messages.find((m) => m.kind === 'tool_call' && m.content.includes('return text.strip()'));
    const written = checkpoint.files.filter((f) => f.role === 'edited' || f.role === 'created');
    expect(checkpoint.files.slice(0, written.length)).toEqual(written);
    expect(written).toEqual([
      { path: 'docs/parser.md', role: 'created', change: '3 lines written', seq: messages.at(-4)?.seq },
      {
        path: 'src/parser.py',
        role: 'edited',
        change: 'replaced "return text" with "return text.strip()"',
        seq: edit?.seq,
      },
    ]);
    const passed = messages.find(
      (m) => m.kind === 'tool_call' && m.content.includes('pytest tests/test_parser.py -q"'),
    );
    expect(checkpoint.files).toContainEqual({
      path: 'tests/test_parser.py',
      role: 'ran',
      change: null,
      seq: passed?.seq,
    });
    expect(checkpoint.files).toContainEqual({
      path: 'README.md',
      role: 'read',
      change: null,
      seq: messages.at(-2)?.seq,
    });
    // The rejected edit changed nothing: only mentioned.
    expect(checkpoint.files.find((f) => f.path === 'src/config.ts')?.role).toBe('mentioned');
  });

  it('reads the edits of SWE-agent, OpenHands and mini-swe-agent tools', () => {
    const { messages } = transcript()
      .user('Fix the rounding.')
      .tool(
        'open',
        { command: 'open src/fields.py' },
        '[File: /repo/src/fields.py (90 lines total)]\n1:import math',
      )
      .tool(
        'edit',
        { command: 'edit 12:12\n        return round(x)\nend_of_edit' },
        '[File: /repo/src/fields.py (90 lines total)]',
      )
      .tool(
        'str_replace_editor',
        { command: 'create', path: '/repo/reproduce.py', file_text: 'print(1)\nprint(2)' },
        'File created successfully at: /repo/reproduce.py',
      )
      .bash("sed -i 's/old/new/' setup.cfg", '')
      .bash('python /repo/reproduce.py', '1\n2');
    const byPath = Object.fromEntries(answer(messages).files.map((f) => [f.path, [f.role, f.change]]));
    expect(byPath['/repo/src/fields.py']).toEqual(['edited', 'lines 12-12 replaced with "return round(x)"']);
    // Created, then run: still the file the session created.
    expect(byPath['/repo/reproduce.py']).toEqual(['created', '2 lines written']);
    expect(byPath['setup.cfg']).toEqual(['edited', 'sed -i s/old/new/']);
  });
});

describe('the fake model: files a printed diff shows', () => {
  const diff = (path: string, old: string, neu: string) =>
    [
      `diff --git a/${path} b/${path}`,
      'index 3b18e51..a4c2f0e 100644',
      `--- a/${path}`,
      `+++ b/${path}`,
      '@@ -1,3 +1,3 @@',
      ' def div(a, b):',
      `-    ${old}`,
      `+    ${neu}`,
    ].join('\n');

  it('lists each file of a diff a call printed as edited, with its first removed and added lines', () => {
    const removed = [
      'diff --git a/old.py b/old.py',
      'deleted file mode 100644',
      '--- a/old.py',
      '+++ /dev/null',
    ];
    const { messages } = transcript()
      .user('Show me what changed.')
      .bash(
        'git diff',
        `${diff('src/calc.py', 'return a / b', 'return a / b if b else 0')}\n${removed.join('\n')}\n@@ -1 +0,0 @@\n-x = 1`,
      )
      .bash('cat fix.patch', diff('lib/io.py', 'open(p)', 'open(p, encoding="utf-8")'))
      .bash(
        'diff -u util.py.orig util.py',
        '--- util.py.orig\t2024-05-01 10:00:00\n+++ util.py\t2024-05-01 10:02:00\n@@ -1 +1 @@\n-pass\n+return None',
        1,
      );
    const files = answer(messages).files;
    expect(files).toContainEqual({
      path: 'src/calc.py',
      role: 'edited',
      change: 'diff: -return a / b | +return a / b if b else 0',
      seq: messages[2]?.seq,
    });
    expect(files).toContainEqual({
      path: 'lib/io.py',
      role: 'edited',
      change: 'diff: -open(p) | +open(p, encoding="utf-8")',
      seq: messages[4]?.seq,
    });
    // `diff` exits 1 when the files differ: the diff is still shown.
    expect(files).toContainEqual({
      path: 'util.py',
      role: 'edited',
      change: 'diff: -pass | +return None',
      seq: messages[6]?.seq,
    });
    // A file the diff deletes is not an edited one.
    expect(files.find((f) => f.path === 'old.py')?.role).not.toBe('edited');
  });

  it("keeps a created file's role and an edit's own change, takes a file's last diff, reads none from history or a failed call", () => {
    const { messages } = transcript()
      .user('Add the helper and check the diff.')
      .tool(
        'Write',
        { file_path: 'src/helper.py', content: 'def help():\n    pass' },
        'File created successfully at: src/helper.py',
      )
      .tool(
        'Edit',
        { file_path: 'src/calc.py', old_string: 'a / b', new_string: 'a / b if b else 0' },
        'The file src/calc.py has been updated.',
      )
      .bash('git diff src/io.py', diff('src/io.py', 'read()', 'read(1)'))
      .bash(
        'git diff',
        [
          diff('src/helper.py', 'pass', 'return 1'),
          diff('src/calc.py', 'return a / b', 'return a / b if b else 0'),
          diff('src/io.py', 'read()', 'read(2)'),
        ].join('\n'),
      )
      .bash('git log -p -1', `commit 1a2b3c\n\n    Old work\n\n${diff('src/legacy.py', 'x', 'y')}`)
      .bash('git diff HEAD~3', `fatal: ambiguous argument 'HEAD~3'\n${diff('src/other.py', 'x', 'y')}`, 128);
    const byPath = Object.fromEntries(answer(messages).files.map((f) => [f.path, [f.role, f.change, f.seq]]));
    expect(byPath['src/helper.py']?.slice(0, 2)).toEqual(['created', '2 lines written']);
    expect(byPath['src/calc.py']).toEqual([
      'edited',
      'replaced "a / b" with "a / b if b else 0"',
      messages[3]?.seq,
    ]);
    expect(byPath['src/io.py']).toEqual(['edited', 'diff: -read() | +read(2)', messages[8]?.seq]);
    // Named in the transcript, not edited in the session.
    expect(byPath['src/legacy.py']?.[0]).toBe('mentioned');
    expect(byPath['src/other.py']?.[0]).toBe('mentioned');
  });
});

describe('the fake model: files a script rewrote', () => {
  const fix = [
    "with open('pkg/mod.py') as f:",
    '    content = f.read()',
    "content = content.replace('return a / b', 'return a / b if b else 0')",
    "with open('pkg/mod.py', 'w') as f:",
    '    f.write(content)',
  ].join('\n');

  it('lists the file a script the agent wrote and ran rewrote, with what it replaced', () => {
    const { messages } = transcript()
      .user('Fix the division by zero in pkg/mod.py.')
      .bash(`cd /repo && cat > fix.py << 'EOF'\n${fix}\nEOF\npython3 fix.py`, 'done');
    const files = answer(messages).files;
    expect(files).toContainEqual({
      path: 'pkg/mod.py',
      role: 'edited',
      change: 'rewritten by `python3 fix.py`: replaced "return a / b" with "return a / b if b else 0"',
      seq: messages.at(-2)?.seq,
    });
    expect(files.find((f) => f.path === 'fix.py')?.role).toBe('created');
  });

  it('takes the script from an earlier call, an editor or an inline program, and only once a run ended ok', () => {
    const rewrite =
      "import re\nsrc = open('src/b.py').read()\nopen('src/b.py', 'w').write(re.sub('x', 'y', src))";
    const { messages } = transcript()
      .user('Apply the fixes.')
      .bash(`cat > /tmp/fix_b.py <<EOF\n${rewrite}\nEOF`, '')
      .tool(
        'str_replace_editor',
        { command: 'create', path: '/repo/fix_c.js', file_text: "fs.writeFileSync('src/c.js', out);" },
        'File created successfully at: /repo/fix_c.js',
      )
      .bash(`cat > fix_d.py << 'EOF'\n${fix.replaceAll('pkg/mod.py', 'src/d.py')}\nEOF`, '')
      .bash("cat > show.py << 'EOF'\nprint(open('src/e.py').read())\nEOF", '')
      .bash('python /tmp/fix_b.py', 'ok')
      .bash('cd /repo && node fix_c.js', '')
      .bash('python fix_d.py', 'Traceback (most recent call last):\nPermissionError: src/d.py', 1)
      .bash('python show.py', 'x = 1')
      .bash(`python -c "from pathlib import Path; Path('src/f.py').write_text('x = 2')"`, '')
      .bash("python3 - << 'EOF'\nopen('src/g.py', 'a').write('# end')\nEOF", '');
    const byPath = Object.fromEntries(answer(messages).files.map((f) => [f.path, [f.role, f.change]]));
    expect(byPath['src/b.py']).toEqual(['edited', 'rewritten by `python /tmp/fix_b.py`']);
    expect(byPath['src/c.js']).toEqual(['edited', 'rewritten by `node fix_c.js`']);
    expect(byPath['src/f.py']).toEqual(['edited', 'rewritten by `python -c …`']);
    expect(byPath['src/g.py']).toEqual(['edited', 'rewritten by `python3 - <<EOF`']);
    // The run that failed changed nothing; a script that reads writes nothing: named, not edited.
    expect(byPath['src/d.py']?.[0]).toBe('mentioned');
    expect(byPath['src/e.py']?.[0]).toBe('mentioned');
  });
});

describe('the fake model: next step and current work', () => {
  it('takes the next step from the last intention not yet carried out, with the seq of its message', () => {
    const { messages } = session().assistant(
      'The parser is fixed. Next I will look at the docs build failure.',
    );
    const checkpoint = answer(messages);
    expect(checkpoint.nextStep).toEqual({
      text: 'Next I will look at the docs build failure.',
      seq: messages.at(-1)?.seq,
    });
    expect(checkpoint.currentWork?.seq).toBe(messages.at(-1)?.seq);
  });

  it('names what an intention that refers back points to: from the sentence before it, else the call it led to', () => {
    const { messages } = transcript()
      .user('Fix the crash on empty input.')
      .assistant('The division happens in `_calc` in stats/core.py. Let me check that method:')
      .bash('grep -n "_calc" stats/core.py', null);
    const checkpoint = answer(messages);
    expect(checkpoint.nextStep).toEqual({
      text: 'Let me check that method: `_calc`, stats/core.py',
      seq: messages[1]?.seq,
    });
    // The current work is the call under way, named by its command.
    expect(checkpoint.currentWork?.text).toBe('`grep -n "_calc" stats/core.py`, running (no result yet)');

    const run = transcript()
      .user('Fix the crash on empty input.')
      .assistant('I changed the guard. Now let me run these tests:')
      .bash('python -m pytest tests/test_core.py -q', '[Request interrupted by user for tool use]').messages;
    expect(answer(run).nextStep?.text).toBe(
      'Now let me run these tests: python -m pytest tests/test_core.py -q',
    );
    const edit = transcript()
      .user('Fix the rounding.')
      .assistant('The rounding looks wrong here. I will fix it.')
      .tool(
        'Edit',
        { file_path: 'src/round.py', old_string: 'int(x)', new_string: 'round(x)' },
        'User rejected update to src/round.py',
      ).messages;
    expect(answer(edit).nextStep?.text).toBe('I will fix it: src/round.py');
    // `the file` points to a file: the sentence's file, not its other names.
    const file = transcript()
      .user('Fix the crash on empty input.')
      .assistant('The crash comes from `_calc` in stats/core.py. Let me open the file:').messages;
    expect(answer(file).nextStep?.text).toBe('Let me open the file: stats/core.py');
    // An intention that names its object is left as it is.
    const named = transcript()
      .user('Fix the crash on empty input.')
      .assistant('The guard looks wrong. Let me open stats/core.py and fix it.')
      .bash('sed -n 1,40p stats/core.py', null).messages;
    expect(answer(named).nextStep?.text).toBe('Let me open stats/core.py and fix it.');
  });

  it('takes a user request made after the intention as the next step', () => {
    const { messages } = session()
      .assistant('I will look at the docs next.')
      .user('Skip the docs; release first.');
    expect(answer(messages).nextStep).toEqual({
      text: 'Skip the docs; release first.',
      seq: messages.at(-1)?.seq,
    });
  });

  it('has no next step when the intention was carried out, and keeps the previous one then', () => {
    const { messages } = transcript()
      .user('Tidy up.')
      .assistant("I'll run the linter.")
      .bash('npm run lint', 'no problems');
    expect(answer(messages).nextStep).toBeNull();
    const previous = answer(
      transcript().user('Tidy up.').assistant('Next I will update the changelog.').messages,
    );
    expect(answer(messages, previous).nextStep).toEqual(previous.nextStep);
  });
});

describe('the fake model: merging with the previous checkpoint', () => {
  it('keeps the previous items and the user instructions, and answers the open question', () => {
    const first = session().assistant('Should I also update the changelog?');
    const before = answer(first.messages);
    expect(texts(before.openQuestions)).toBe('Should I also update the changelog?');
    expect(texts(before.userInstructions)).toBe('Never edit the fixtures under tests/data.');
    const next = transcript(first.messages)
      .user('yes')
      .bash('git commit -am "Strip parser input"', '1 file changed');
    const after = answer(next.messages.slice(first.messages.length), before);
    expect(after.goal).toBe(before.goal);
    expect(after.userInstructions).toEqual(before.userInstructions);
    for (const item of before.completed) expect(after.completed).toContainEqual(item);
    expect(after.completed.at(-1)?.text).toBe('ran `git commit -am "Strip parser input"`: 1 file changed');
    expect(after.errorsAndFixes).toEqual(before.errorsAndFixes);
    expect(after.files.find((f) => f.path === 'src/parser.py')).toEqual(
      before.files.find((f) => f.path === 'src/parser.py'),
    );
    expect(after.openQuestions).toEqual([]);
    expect(texts(after.decisions)).toContain('Should I also update the changelog? → yes');
  });

  it('stays under the stated target by dropping old completed work first, never the user instructions', () => {
    const t = transcript().user('Build every module. Never run `git add .` here.');
    for (let i = 0; i < 60; i++) t.bash(`make module-${i}`, `built module ${i}`);
    const { input } = modelInput(t.messages, null, 800);
    const { analysis: _notes, ...written } = input;
    // The prompt asks for 75% of the budget.
    expect(Math.ceil(JSON.stringify(written).length / 4)).toBeLessThanOrEqual(600);
    const checkpoint = answer(t.messages, null, 800);
    expect(texts(checkpoint.userInstructions)).toBe('Never run `git add .` here.');
    expect(checkpoint.completed.at(-1)?.text).toBe('ran `make module-59`: built module 59');
    expect(checkpoint.completed.length).toBeLessThan(60);
  });
});
