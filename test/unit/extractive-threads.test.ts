/**
 * Command and test threads (shared/extractive/threads.ts, run-state.ts): an error is open at the cut
 * when the last run of its command or test failed; one a later run passed is not listed; each
 * command is listed once with its last outcome.
 */
import { describe, expect, it } from 'vitest';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { commandKind, covers, testReports, threadKey } from '../../shared/extractive/threads.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;
const texts = (entries: Array<{ text: string }>) => entries.map((e) => e.text);

describe('thread keys', () => {
  it('strips cd steps, env prefixes, setup steps, flags and output filters', () => {
    const key = threadKey('cd /srv/app && FOO=1 python3 -m pytest -x tests/unit/test_io.py 2>&1 | tail -30');
    expect(key).toBe('pytest tests/unit/test_io.py');
    expect(threadKey('source .venv/bin/activate && pytest tests/unit/test_io.py -q')).toBe(key);
    expect(threadKey('export CI=1; npm run build --silent')).toBe('npm run build');
  });

  it('keeps different targets apart', () => {
    expect(threadKey('pytest tests/a_test.py')).not.toBe(threadKey('pytest tests/b_test.py'));
  });

  it('tells tests, builds and runs from reads, edits, git and installs', () => {
    expect(commandKind('cd web && npx vitest run src/widget.test.ts')).toBe('test');
    expect(commandKind('go test ./pkg/...')).toBe('test');
    expect(commandKind('cargo build --release')).toBe('build');
    expect(commandKind('make -j4')).toBe('build');
    expect(commandKind('zigzag build --release')).toBe('build');
    expect(commandKind('gleamy test')).toBe('test');
    expect(commandKind('python scripts/reproduce_bug.py')).toBe('run');
    expect(commandKind('cat src/main.c')).toBeNull();
    expect(commandKind('git checkout -- src/main.c')).toBeNull();
    expect(commandKind('pip install requests')).toBeNull();
    expect(commandKind("sed -i 's/a/b/' src/main.c")).toBeNull();
    expect(commandKind('cat > notes.txt <<EOF\nx\nEOF')).toBeNull();
  });
});

describe('test reports in output', () => {
  it('reads pytest, unittest, go, rust and jest reports', () => {
    const output = [
      'tests/test_shop.py::test_cart PASSED [ 50%]',
      'FAILED tests/test_shop.py::test_checkout - AssertionError: 3 != 4',
      'test_parse (pkg.tests.test_cli.CliTest) ... ok',
      '--- FAIL: TestRouter (0.01s)',
      'test net::tests::roundtrip ... FAILED',
      'FAIL src/cart.test.ts',
    ].join('\n');
    expect(testReports(output)).toEqual([
      { id: 'tests/test_shop.py::test_cart', passed: true },
      { id: 'tests/test_shop.py::test_checkout', passed: false },
      { id: 'pkg.tests.test_cli.CliTest.test_parse', passed: true },
      { id: 'TestRouter', passed: false },
      { id: 'net::tests::roundtrip', passed: false },
      { id: 'src/cart.test.ts', passed: false },
    ]);
  });

  it("reads check marks as reports only in a JavaScript runner's output", () => {
    expect(testReports('✕ totals add up', false)).toEqual([]);
    const { messages } = transcript()
      .user('Fix the totals')
      .bash(
        'python check_totals.py',
        '✗ FAILURE: totals differ\nTraceback (most recent call last):\nValueError: x',
        1,
      )
      .bash('python check_totals.py', 'all good', 0);
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.blockers)).toEqual([]);
  });

  it('a whole-suite command covers every test; a file target covers its tests only', () => {
    expect(covers('pytest', 'tests/x.py::test_a')).toBe(true);
    expect(covers('pytest tests/x.py', 'tests/x.py::test_a')).toBe(true);
    expect(covers('pytest tests/y.py', 'tests/x.py::test_a')).toBe(false);
  });
});

describe('errors open at the cut', () => {
  it('lists a command whose last run failed, with its seq and first error line', () => {
    const { messages } = transcript()
      .user('Make the parser accept empty lines')
      .bash(
        'cd /srv/app && make test',
        'ok 1\nsrc/parse.c:12: error: expected ";"\nmake: *** [test] Error 2',
        2,
      )
      .assistant('I changed the header.')
      .bash('make test', 'src/parse.c:40: error: unknown type name "line_t"\nmake: *** [test] Error 2', 2);
    const c = extractCheckpoint(null, messages, BIG);
    const open = c.blockers.filter((b) => b.text.includes('line_t'));
    expect(open).toHaveLength(1);
    expect(open[0]?.seq).toBe(messages.at(-1)?.seq);
    expect(texts(c.blockers).join('\n')).not.toContain('expected ";"');
  });

  it('does not list an error that a later run of the same command (written differently) passed', () => {
    const { messages } = transcript()
      .user('Fix the failing build')
      .bash('npm run build', 'src/app.ts(3,1): error TS2304: Cannot find name "foo".', 2)
      .tool(
        'Edit',
        { file_path: 'src/app.ts', old_string: 'foo', new_string: 'bar' },
        'The file src/app.ts has been updated.',
      )
      .bash('cd /srv/web && CI=1 npm run build 2>&1 | tail -5', 'built in 1.2s', 0);
    const c = extractCheckpoint(null, messages, BIG);
    expect(texts(c.blockers).join('\n')).not.toContain('TS2304');
    expect(texts(c.commands)).toEqual(['`CI=1 npm run build 2>&1 | tail -5` (build) → passed, 2 runs']);
  });

  it('keeps a failing test open until a later run passes it, even from another command', () => {
    const failing = 'FAILED tests/test_cart.py::test_total - assert 7 == 8\n1 failed, 3 passed';
    const open = transcript()
      .user('Fix the cart total')
      .bash('pytest tests/test_cart.py', failing, 1)
      .bash('python scripts/seed_db.py', 'seeded', 0);
    const c1 = extractCheckpoint(null, open.messages, BIG);
    expect(texts(c1.blockers).join('\n')).toMatch(/test_total/);
    expect(c1.blockers.some((b) => b.seq === open.messages[2]?.seq)).toBe(true);

    const fixed = transcript()
      .user('Fix the cart total')
      .bash('pytest tests/test_cart.py', failing, 1)
      .bash('pytest -q', '12 passed in 0.4s', 0);
    const c2 = extractCheckpoint(null, fixed.messages, BIG);
    expect(texts(c2.blockers).join('\n')).not.toMatch(/test_total/);
    expect(c2.errorsAndFixes).toContainEqual({
      error: 'FAILED tests/test_cart.py::test_total - assert 7 == 8',
      fix: 'a later run of the same command or test passed',
      seq: 2,
    });
  });

  it('clears a carried-over blocker once its command passes in the next compaction', () => {
    const first = transcript()
      .user('Get the server to start')
      .bash('node server/main.js', "Error: Cannot find module 'dotenv'", 1);
    const c1 = extractCheckpoint(null, first.messages, BIG);
    expect(texts(c1.blockers).join('\n')).toContain('dotenv');
    const second = transcript([...first.messages])
      .bash('npm install dotenv', 'added 1 package', 0)
      .bash('cd server/.. && node server/main.js', 'listening on 8080', 0);
    const c2 = extractCheckpoint(c1, second.messages.slice(first.messages.length), BIG);
    expect(texts(c2.blockers).join('\n')).not.toContain('dotenv');
  });

  it('keeps an open error when the budget is tight, before older items', () => {
    let t = transcript().user('Tidy the repo');
    for (let i = 0; i < 12; i++) t = t.bash(`touch notes/file_${i}.md && echo done ${i}`, `done ${i}`, 0);
    t = t.bash(
      'go test ./store/...',
      '--- FAIL: TestPutGet (0.00s)\n    store_test.go:9: got 1 want 2\nFAIL',
      1,
    );
    const c = extractCheckpoint(null, t.messages, 400);
    expect(texts(c.blockers).join('\n')).toMatch(/TestPutGet|FAIL/);
  });
});

describe('commands with their last outcome', () => {
  it('lists each build, test or run command once, with its last outcome and seq, not reads', () => {
    const { messages } = transcript()
      .user('Speed up the importer')
      .bash('ls src', 'a.py b.py', 0)
      .bash('python -m pytest tests/test_importer.py -x', 'E   KeyError: "id"\n1 failed', 1)
      .bash('python3 -m pytest tests/test_importer.py', '4 passed', 0)
      .bash(
        'python bench/run_import.py',
        'Traceback (most recent call last):\n  File "x"\nMemoryError: out',
        1,
      );
    const c = extractCheckpoint(null, messages, BIG);
    expect(c.commands.map((e) => [e.text, e.seq])).toEqual([
      ['`python3 -m pytest tests/test_importer.py` (test) → passed, 2 runs', messages[6]?.seq],
      ['`python bench/run_import.py` (run) → failed (exit 1)', messages[8]?.seq],
    ]);
  });

  it('lists one test runner over many files once, keeping each failing file apart', () => {
    let t = transcript().user('Fix the flaky payment test.');
    for (let i = 0; i < 6; i++)
      t = t.bash(`python -m pytest tests/test_pay_${i}.py -q`, `${i + 1} passed`, 0);
    t = t.bash(
      'python -m pytest tests/test_refund.py -q',
      'FAILED tests/test_refund.py::test_x\n1 failed',
      1,
    );
    const c = extractCheckpoint(null, t.messages, BIG);
    expect(texts(c.commands)).toEqual([
      '`python -m pytest tests/test_pay_5.py -q` (test) → passed; 5 other targets passed too',
      '`python -m pytest tests/test_refund.py -q` (test) → failed (exit 1)',
    ]);
  });
});

describe('the budget', () => {
  it('keeps the rules, the open error and the commands before the history of finished work', () => {
    let t = transcript()
      .user('Port the CLI to the new config loader.')
      .assistant('On it.')
      .user('Never change the public flags of the CLI.');
    for (let i = 0; i < 15; i++)
      t = t.tool(
        'Edit',
        { file_path: `src/cmd/part_${i}.ts`, old_string: `a${i}`, new_string: `b${i}` },
        `The file src/cmd/part_${i}.ts has been updated.`,
      );
    t = t.bash(
      'npx vitest run test/cli.test.ts',
      'FAIL test/cli.test.ts\nAssertionError: expected 2 to be 3',
      1,
    );
    const c = extractCheckpoint(null, t.messages, 300);
    expect(texts(c.userInstructions)).toContain('Never change the public flags of the CLI.');
    expect(c.blockers.some((b) => b.text.includes('cli.test.ts') && b.seq === t.messages.at(-1)?.seq)).toBe(
      true,
    );
    expect(texts(c.commands).join('\n')).toContain('npx vitest run test/cli.test.ts');
    expect(c.completed.length).toBeLessThan(15);
  });
});
