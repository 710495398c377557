/**
 * The extractive checkpoint's agent-facing fields and its corrected heuristics: user instructions,
 * current work and next step, errors and fixes, files; harness messages kept out of the goal and
 * the last request; failures never completed; blockers expired by a normalised command; todo lists
 * and transcript summaries read; budget shares; old-shape checkpoints.
 */
import { describe, expect, it } from 'vitest';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import {
  type Checkpoint,
  checkpointSchema,
  emptyCheckpoint,
  renderCheckpoint,
  renderCheckpointBody,
} from '../../shared/summary/checkpoint.ts';
import { lastUserRequestOf } from '../../shared/summary/last-request.ts';
import { commandKey } from '../../shared/text/shell.ts';
import { classifyUserMessage } from '../../shared/text/user-messages.ts';
import { extractWorkingSet } from '../../shared/working-set/working-set.ts';
import { renderCheckpoint as renderCheckpointHtml } from '../../worker/http/dashboard/checkpoint-view.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;
const texts = (entries: Array<{ text: string }>) => entries.map((e) => e.text);

describe('the user-role messages a harness sends', () => {
  it('tells requests and short answers from commands, notices, interruptions, harness errors, demos', () => {
    const cases: Array<[string, string]> = [
      ['Fix the login bug in src/auth.ts', 'request'],
      ['YES', 'answer'],
      ['2', 'answer'],
      ['go ahead', 'answer'],
      ['/status', 'command'],
      ['<command-name>/plugin</command-name>\n<command-message>plugin</command-message>', 'command'],
      ['<local-command-stdout>(no content)</local-command-stdout>', 'command'],
      ['<ide_opened_file>The user opened a.md in the IDE.</ide_opened_file>', 'notice'],
      [
        '<task-notification>\n<status>completed</status>\n</task-notification>\nFull transcript at x',
        'notice',
      ],
      ['[image image/png]', 'notice'],
      ['[Request interrupted by user for tool use]', 'interruption'],
      ['Tool call error:\n\n<error>\nError parsing tool call arguments', 'harness'],
      ['Please always provide EXACTLY ONE action in triple backticks, found 2 actions.', 'harness'],
      ['Here is a demonstration of how to correctly accomplish this task.', 'demonstration'],
      ['This session is being continued from a previous conversation that ran out of context.', 'summary'],
      ['<ide_opened_file>The user opened a.md</ide_opened_file>\nnow rename foo to bar', 'request'],
    ];
    for (const [text, kind] of cases) expect(classifyUserMessage(text), text).toBe(kind);
  });

  it('keeps slash commands and harness notices out of the goal and the last request', () => {
    const { messages } = transcript()
      .user('<ide_opened_file>The user opened the file docs/plan.md in the IDE.</ide_opened_file>')
      .user('Here is a demonstration of how to correctly accomplish this task.\nDEMO: fix the bug')
      .user('Migrate the billing service to Postgres')
      .assistant('Working on it.')
      .bash('make migrate', 'done')
      .user('/status')
      .user('<local-command-stdout>all good</local-command-stdout>')
      .user('[Request interrupted by user for tool use]')
      .user('Tool call error:\n\n<error>\nError parsing tool call arguments\n</error>');
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(checkpoint.goal).toBe('Migrate the billing service to Postgres');
    expect(checkpoint.lastUserRequest).toBe('Migrate the billing service to Postgres');
    expect(lastUserRequestOf(messages)).toBe('Migrate the billing service to Postgres');
  });

  it('in corpus sessions, never takes a command, notice or harness complaint for the last request', async () => {
    for (const name of [
      'claudecode__session-share-0ccf1a04',
      'claudecode__session-share-images-in-user-messages',
      'minisweagent__django-13964',
      'sweagent__pydicom-1458',
    ]) {
      const messages = (await loadCorpusSession(name)).filter((m) => m.role !== 'system');
      const checkpoint = extractCheckpoint(null, messages, 2_000);
      const request = checkpoint.lastUserRequest;
      expect(request, name).not.toMatch(
        /^\s*(?:<(?:command|local-command|task-notification)|\/\w|\[Request)/,
      );
      expect(request, name).not.toMatch(/^Tool call error/);
      expect(checkpoint.goal, name).not.toMatch(/^(?:Here is a demonstration|<command|\/)/);
    }
  });

  it('follows a correction of the user in the goal', () => {
    const { messages } = transcript()
      .user('Add a SQLite cache to the importer')
      .assistant('Adding SQLite.')
      .user('No, use Redis instead of SQLite.');
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(checkpoint.goal).toBe(
      'Add a SQLite cache to the importer — corrected (seq 2): No, use Redis instead of SQLite.',
    );
    expect(texts(checkpoint.userInstructions)).toContain('No, use Redis instead of SQLite.');
  });
});

describe('user instructions', () => {
  it('keeps the user rules verbatim, and the newest wins on conflict', () => {
    const { messages } = transcript()
      .user('Fix the flaky test. Do not make code changes outside tests/. Please keep the commits small.')
      .assistant('OK.')
      .user("Don't `git add .`, add files one by one.")
      .user('Actually, you may make code changes outside tests/ now.');
    const instructions = texts(extractCheckpoint(null, messages, BIG).userInstructions);
    expect(instructions).toContain("Don't `git add .`, add files one by one.");
    expect(instructions).toContain('Please keep the commits small.');
    expect(instructions).toContain('Actually, you may make code changes outside tests/ now.');
    expect(instructions).not.toContain('Do not make code changes outside tests/.');
  });

  it('survive three successive compactions (merge), each with its seq', () => {
    const rule = 'Never run `git add .` in this repository; stage files by name.';
    let t = transcript().user(`Refactor the parser. ${rule}`);
    for (let i = 0; i < 20; i++) t = t.bash(`make step${i}`, 'ok').assistant(`Step ${i} is done.`);
    let checkpoint: Checkpoint | null = null;
    let from = 0;
    const chunk = Math.ceil(t.messages.length / 3);
    for (let round = 0; round < 3; round++) {
      const leaving = t.messages.slice(from, from + chunk);
      from += chunk;
      checkpoint = extractCheckpoint(checkpoint, leaving, 600);
      expect(checkpoint.userInstructions, `round ${round}`).toContainEqual({ text: rule, seq: 0 });
      expect(renderCheckpoint(checkpoint, from)).toContain(`${rule} (seq 0)`);
    }
    // A fourth run with many new rules condenses the old ones; it does not drop them.
    let more = transcript(t.messages);
    for (let i = 0; i < 15; i++) more = more.user(`Always run the linter number ${i} before committing.`);
    const last = extractCheckpoint(checkpoint, more.messages.slice(t.messages.length), BIG);
    expect(last.userInstructions.map((e) => e.text).join('\n')).toContain('Never run `git add .`');
  });

  it('pairs a short answer with the question it answers', () => {
    const { messages } = transcript()
      .user('Clean up the repository')
      .assistant('I found 3 stale branches. Shall I delete the stale branches too?')
      .user('YES');
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(checkpoint.userInstructions).toContainEqual({
      text: 'YES (answering: "Shall I delete the stale branches too?")',
      seq: 2,
    });
    expect(checkpoint.lastUserRequest).toBe('YES');
    expect(checkpoint.openQuestions).toEqual([]);
    const options = transcript()
      .user('Pick a database')
      .assistant('Which one should I use:\n1. Postgres\n2. SQLite\n')
      .user('2');
    expect(texts(extractCheckpoint(null, options.messages, BIG).userInstructions)).toContain(
      '2 (answering: "Which one should I use:")',
    );
  });
});

describe('rules that introduce what follows', () => {
  it('keeps the command or the list a rule ending with a colon introduces, and no heading', () => {
    const { messages } = transcript().user(
      [
        'Fix the parser bug.',
        '',
        '## Important Boundaries',
        '',
        'You MUST use this EXACT command to submit:',
        '',
        '```bash',
        'echo DONE && cat patch.txt',
        '```',
        '',
        'Do not modify any of the following files:',
        '- tests/',
        '- setup.cfg',
      ].join('\n'),
    );
    const rules = texts(extractCheckpoint(null, messages, BIG).userInstructions);
    expect(rules).toEqual([
      'You MUST use this EXACT command to submit: `echo DONE && cat patch.txt`',
      'Do not modify any of the following files: tests/; setup.cfg',
    ]);
  });
});

describe('failures', () => {
  it('never lists a rejected, interrupted or failed call as completed', () => {
    const { messages } = transcript()
      .user('Update the config')
      .tool(
        'Edit',
        { file_path: 'src/config.ts', old_string: 'a', new_string: 'b' },
        'User rejected update to src/config.ts',
      )
      .tool(
        'Bash',
        { command: 'rm -rf build' },
        "[error] The user doesn't want to proceed with this tool use. The tool use was rejected.",
      )
      .tool('Bash', { command: 'npm run deploy' }, '[Request interrupted by user for tool use]')
      .tool('Bash', { command: 'make all' }, 'make: *** [all] Error 2')
      .tool('Bash', { command: 'make docs' }, 'make[1]: Leaving directory\nError 2')
      .tool('Write', { file_path: 'src/ok.ts', content: 'x\ny' }, 'File created successfully at: src/ok.ts');
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(texts(checkpoint.completed)).toEqual(['wrote src/ok.ts']);
    expect(texts(checkpoint.decisions)).toEqual([
      'the user rejected: edited src/config.ts',
      'the user rejected: ran: rm -rf build',
    ]);
    // A rejection is no error to fix.
    expect(texts(checkpoint.blockers).join('\n')).not.toMatch(/rejected|doesn't want/);
    expect(checkpoint.files).toContainEqual({
      path: 'src/ok.ts',
      role: 'created',
      change: '2 lines',
      seq: 12,
    });
    expect(checkpoint.files.find((f) => f.path === 'src/config.ts')?.role).toBe('mentioned');
  });

  it("keeps Claude Code's rejected call of a corpus session out of completed work", async () => {
    const messages = await loadCorpusSession('claudecode__session-share-general-tool-calls');
    const rejected = messages.filter(
      (m) =>
        m.kind === 'tool_result' &&
        /doesn't want to proceed|User rejected|interrupted by user/i.test(m.content),
    );
    expect(rejected.length).toBeGreaterThan(0);
    const checkpoint = extractCheckpoint(null, messages, BIG);
    const seqs = new Set(rejected.map((m) => m.seq));
    expect(checkpoint.completed.filter((c) => c.seq !== null && seqs.has(c.seq))).toEqual([]);
    expect(checkpoint.blockers.filter((b) => b.seq !== null && seqs.has(b.seq))).toEqual([]);
  });

  it('expires a blocker when its command, in normal form, later succeeds, and records the fix', () => {
    expect(commandKey('cd /repo && python3 reproduce.py 2>&1 | tail -20')).toBe('python reproduce.py');
    expect(commandKey('timeout 60 python -m pytest tests/test_a.py -x -q')).toBe('pytest tests/test_a.py');
    expect(commandKey('cat > a.py')).not.toBe(commandKey('cat > b.py'));
    const { messages } = transcript()
      .bash('python3 reproduce.py 2>&1 | tail -20', 'Traceback (most recent call last):\nKeyError: 1', 1)
      .tool(
        'str_replace_editor',
        { command: 'str_replace', path: 'src/a.py', old_str: 'x', new_str: 'y' },
        'ok',
      )
      .bash('cd /repo && python reproduce.py', 'all good', 0);
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(checkpoint.blockers).toEqual([]);
    expect(checkpoint.errorsAndFixes).toEqual([
      {
        error: 'KeyError: 1',
        fix: 'ran: python reproduce.py succeeded after edited src/a.py (seq 5)',
        seq: 1,
      },
    ]);
  });

  it('expires a blocker when the same command later fails without it, and keeps one it still shows', () => {
    const { messages } = transcript()
      .bash('python reproduce.py', "ModuleNotFoundError: No module named 'pytz'", 1)
      .bash('pip install -r requirements.txt -q', '', 0)
      .bash('python run_tests.py', 'KeyError: 7', 1)
      .bash('python reproduce.py', 'AttributeError: np.Inf was removed', 1)
      .bash('python run_tests.py', 'collected 3\nKeyError: 7', 1);
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(texts(checkpoint.blockers)).toEqual([
      'AttributeError: np.Inf was removed (from: python reproduce.py)',
      'KeyError: 7 (from: python run_tests.py)',
    ]);
    expect(checkpoint.errorsAndFixes).toEqual([
      {
        error: "ModuleNotFoundError: No module named 'pytz'",
        fix: 'ran: python reproduce.py now gets past it, failing differently after ran: pip install -r requirements.txt -q (seq 7)',
        seq: 1,
      },
    ]);
  });

  it('expires a blocker when a later change names what the error names, or the script is written again', () => {
    const { messages } = transcript()
      .bash(
        'python -c "import pvlib.tests"',
        'AttributeError: `np.Inf` was removed in the NumPy 2.0 release.',
        1,
      )
      .bash("sed -i 's/np\\.Inf/np.inf/g' pvlib/tests/test_singlediode.py", '', 0)
      .bash('python reproduce.py', "ModuleNotFoundError: No module named 'pytz'", 1)
      .bash("cat > check.py << 'EOF'\nimport pytz\nEOF", '', 0)
      .bash(
        "cat > add_debug.py << 'EOF'\nprint(segments_in)\nEOF\npython add_debug.py",
        "NameError: name 'segments_in' is not defined",
        1,
      )
      .bash("cat > add_debug2.py << 'EOF'\nprint(1)\nEOF\npython add_debug2.py", '1', 0)
      .bash('python test_basic.py', 'AssertionError: wrong total', 1)
      .bash("cat > test_basic_v2.py << 'EOF'\nprint(2)\nEOF", '', 0)
      .bash('python test_basic_v2.py', '2', 0)
      // Not written by the agent: another step, not a retry of step1.sh.
      .bash('./step1.sh', 'fatal: step 1 broke', 1)
      .bash('./step2.sh', 'done', 0);
    const checkpoint = extractCheckpoint(null, messages, BIG);
    // A new file that imports the missing module fixes nothing: only an install, or an edit, would.
    expect(texts(checkpoint.blockers)).toEqual([
      "ModuleNotFoundError: No module named 'pytz' (from: python reproduce.py)",
      'fatal: step 1 broke (from: ./step1.sh)',
    ]);
    expect(checkpoint.errorsAndFixes.map((e) => [e.error, e.seq])).toEqual([
      ['AttributeError: `np.Inf` was removed in the NumPy 2.0 release.', 1],
      ["NameError: name 'segments_in' is not defined", 9],
      ['AssertionError: wrong total', 13],
    ]);
    expect(checkpoint.errorsAndFixes[0]?.fix).toContain('changed what the error names');
    expect(checkpoint.errorsAndFixes[1]?.fix).toContain('add_debug2.py');
  });

  it('reads a failure a pipe into a filter hides behind exit code 0, and keeps no-match greps out of completed', () => {
    const { messages } = transcript()
      .bash('python -m pytest tests -x 2>&1 | head -50', '/usr/bin/python: No module named pytest', 0)
      .bash('./build.sh | grep -c warning', '', 1)
      .bash('pip list | grep -i numpy', '', 1)
      .bash('make install', 'installed', 0);
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(texts(checkpoint.completed)).toEqual(['ran: make install']);
    expect(texts(checkpoint.blockers)).toEqual([
      '/usr/bin/python: No module named pytest (from: python -m pytest tests -x 2>&1 | head -50)',
    ]);
  });

  it('expires a blocker of the previous checkpoint too', () => {
    const previous = {
      ...emptyCheckpoint(),
      blockers: [{ text: 'KeyError: 1 (from: python3 x.py 2>&1)', seq: 4 }],
    };
    const { messages } = transcript().bash('python x.py', 'ok', 0);
    const checkpoint = extractCheckpoint(previous, messages, BIG);
    expect(checkpoint.blockers).toEqual([]);
    expect(checkpoint.errorsAndFixes[0]?.error).toBe('KeyError: 1');
  });
});

describe('state, todo lists and summaries in the transcript', () => {
  it('reads a printed todo list (☐/☒) and a markdown checklist', () => {
    const console = transcript()
      .user('Build the CLI')
      .tool('TodoWrite', { todos: [{ content: 'old', status: 'pending' }] }, 'ok')
      .assistant('Progress:\n☒ Write the parser\n☒ Add tests\n☐ Wire the CLI\n☐ Document flags');
    const a = extractCheckpoint(null, console.messages, BIG);
    expect(texts(a.completed)).toEqual(expect.arrayContaining(['Write the parser', 'Add tests']));
    expect(texts(a.pending)).toEqual(['Wire the CLI', 'Document flags']);
    expect(a.nextStep).toEqual({ text: 'Wire the CLI', seq: 3 });
    const markdown = transcript()
      .user('Ship it')
      .assistant('- [x] bump the version\n- [ ] tag the release\n- [ ] publish');
    const b = extractCheckpoint(null, markdown.messages, BIG);
    expect(texts(b.completed)).toContain('bump the version');
    expect(texts(b.pending)).toEqual(['tag the release', 'publish']);
  });

  it('reads a summary already in the transcript', () => {
    const summary = [
      'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:',
      '1. Primary Request and Intent:',
      '   - Port the exporter to Rust',
      '2. Errors and fixes:',
      '   - cargo build failed on a missing feature → enabled the `serde` feature',
      '3. Pending Tasks:',
      '   - Benchmark the new exporter',
      '4. Optional Next Step:',
      '   - Run cargo bench',
    ].join('\n');
    const checkpoint = extractCheckpoint(null, transcript().user(summary).messages, BIG);
    expect(checkpoint.goal).toBe('Port the exporter to Rust');
    expect(texts(checkpoint.pending)).toContain('Benchmark the new exporter');
    expect(checkpoint.nextStep?.text).toBe('Run cargo bench');
    expect(checkpoint.errorsAndFixes).toContainEqual({
      error: 'cargo build failed on a missing feature',
      fix: 'enabled the `serde` feature',
      seq: 0,
    });
  });

  it('names the current work and the next step with their seqs', () => {
    const { messages } = transcript()
      .user('Speed up the build')
      .bash('make', 'ok')
      .assistant('The cache works now. Next I will enable remote caching.');
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(checkpoint.currentWork).toEqual({ text: 'The cache works now.', seq: 3 });
    expect(checkpoint.nextStep).toEqual({ text: 'Next I will enable remote caching.', seq: 3 });
  });

  it('adds to the current work the code names the agent kept coming back to', () => {
    const { messages } = transcript()
      .user('Fix the crash in file_build')
      .assistant('The crash starts in `ast_from_file`, which calls `file_build`.')
      .bash('grep -n "def ast_from_file" astroid/manager.py', '101: def ast_from_file(self, filepath):', 0)
      .assistant('So `file_build` calls `open_source_file(path)`. Let me `return` to that function:')
      .bash('grep -n open_source_file astroid/builder.py', '40: def open_source_file(filename):', 0);
    const current = extractCheckpoint(null, messages, BIG).currentWork?.text ?? '';
    expect(current).toMatch(/\(focus: [^)]*ast_from_file/);
    // Names the text already gives, and emphasised plain words, are not repeated as focus.
    const focus = /\(focus: ([^)]*)\)/.exec(current)?.[1]?.split(', ') ?? [];
    expect(focus).not.toContain('file_build');
    expect(focus).not.toContain('return');
  });

  it('names what a next step only points back at: the sentence before it, else the output it reacts to', () => {
    const named = transcript()
      .user('Fix the separability matrix')
      .bash('grep -n cstack separable.py', '245: cright[...] = 1', 0)
      .assistant('The bug is in `_cstack`: it writes 1 instead of the matrix. Let me fix that:');
    expect(extractCheckpoint(null, named.messages, BIG).nextStep).toEqual({
      text: 'The bug is in `_cstack`: it writes 1 instead of the matrix. Let me fix that:',
      seq: 3,
    });
    const bare = transcript()
      .user('Fix the separability matrix')
      .bash(
        'grep -n separability core.py',
        '<returncode>0</returncode>\n<output>\n808:    def _calculate_separability_matrix(self):\n</output>',
        0,
      )
      .assistant('Let me check that method:');
    expect(extractCheckpoint(null, bare.messages, BIG).nextStep?.text).toBe(
      'Let me check that method: (after: 808: def _calculate_separability_matrix(self):)',
    );
    // A step that names its own object stands alone.
    const own = transcript()
      .user('Fix the separability matrix')
      .bash('ls', 'core.py', 0)
      .assistant('The listing is short. Let me open `core.py` next.');
    expect(extractCheckpoint(null, own.messages, BIG).nextStep?.text).toBe('Let me open `core.py` next.');
  });
});

describe('where the agent stands, for agents that think before each call', () => {
  it('takes the current work from the thought before the last call, and drops a stale next step', () => {
    const previous = {
      ...emptyCheckpoint(),
      currentWork: { text: 'Reading the parser', seq: 4 },
      nextStep: { text: 'Let me check the lexer', seq: 4 },
    };
    const { messages } = transcript()
      .assistant('The lexer is fine. The bug is in `_cstack`: it writes 1 instead of the right matrix.')
      .bash('python fix_cstack.py', 'patched', 0);
    const checkpoint = extractCheckpoint(previous, messages, BIG);
    expect(checkpoint.currentWork).toEqual({
      text: 'The lexer is fine. The bug is in `_cstack`: it writes 1 instead of the right matrix. → ran: python fix_cstack.py (ok)',
      seq: 0,
    });
    expect(checkpoint.nextStep).toBeNull();
  });

  it("records SWE-agent's ranged edit of the open file with its new lines", () => {
    const { messages } = transcript()
      .tool('open', { command: 'open src/fields.py 1474' }, '[File: /repo/src/fields.py (1900 lines total)]')
      .tool(
        'edit',
        { command: 'edit 1475:1475\n        return int(round(value.total_seconds() / unit))\nend_of_edit' },
        '[File: /repo/src/fields.py (1900 lines total)]\n1475:        return int(round(value.total_seconds() / unit))\nFile updated.',
      );
    expect(extractCheckpoint(null, messages, BIG).files).toContainEqual({
      path: '/repo/src/fields.py',
      role: 'edited',
      change: 'lines 1475-1475 now: "return int(round(value.total_seconds() / unit))"',
      seq: 3,
    });
  });

  it('reads what changed in a file from a diff the agent printed', () => {
    const diff = [
      'diff --git a/pkg/separable.py b/pkg/separable.py',
      'index a308e27..45bea36 100644',
      '--- a/pkg/separable.py',
      '+++ b/pkg/separable.py',
      '@@ -242,7 +242,7 @@ def _cstack(left, right):',
      '     else:',
      '-        cright[-right.shape[0]:, -right.shape[1]:] = 1',
      '+        cright[-right.shape[0]:, -right.shape[1]:] = right',
      'diff --git a/old.py b/old.py',
      'deleted file mode 100644',
      '--- a/old.py',
      '+++ /dev/null',
      '-x = 1',
    ].join('\n');
    const { messages } = transcript().bash('git diff', diff, 0);
    const files = extractCheckpoint(null, messages, BIG).files;
    expect(files).toContainEqual({
      path: 'pkg/separable.py',
      role: 'edited',
      change:
        'diff: -cright[-right.shape[0]:, -right.shape[1]:] = 1 | +cright[-right.shape[0]:, -right.shape[1]:] = right',
      seq: 1,
    });
    expect(files.find((f) => f.path === 'old.py')).toBeUndefined();
  });
});

describe('files and the working set', () => {
  it('ranks edited files first, with what changed', () => {
    const { messages } = transcript()
      .tool('Read', { file_path: 'README.md' }, '# readme')
      .tool('Edit', { file_path: 'src/a.ts', old_string: 'let x = 1', new_string: 'const x = 1' }, 'ok')
      .bash('python scripts/check.py', 'fine')
      .bash('rm old/legacy.ts', '');
    const files = extractCheckpoint(null, messages, BIG).files;
    expect(files.map((f) => [f.path, f.role])).toEqual([
      ['old/legacy.ts', 'deleted'],
      ['src/a.ts', 'edited'],
      ['scripts/check.py', 'ran'],
      ['README.md', 'read'],
    ]);
    expect(files[1]?.change).toBe('"let x = 1" → "const x = 1"');
  });

  it('ranks the scripts the agent wrote and ran after the work and the tests it ran', () => {
    const { messages } = transcript()
      .tool('Edit', { file_path: 'pkg/core.py', old_string: 'a = 1', new_string: 'a = 2' }, 'ok')
      .tool('Write', { file_path: 'docs/usage.md', content: '# Usage' }, 'ok')
      .bash("cat > reproduce.py << 'EOF'\nimport pkg\nEOF\npython reproduce.py", 'ok', 0)
      .bash('python -m pytest tests/test_core.py', '3 passed', 0)
      .tool('Read', { file_path: 'pkg/util.py' }, 'def f(): ...');
    const files = extractCheckpoint(null, messages, BIG).files;
    expect(files.map((f) => f.path)).toEqual([
      'docs/usage.md',
      'pkg/core.py',
      'tests/test_core.py',
      'reproduce.py',
      'pkg/util.py',
    ]);
  });

  it('counts a file as edited when a script the agent wrote and ran rewrote it', () => {
    const fix =
      "with open('pkg/core.py') as f:\n    s = f.read()\nwith open('pkg/core.py', 'w') as f:\n    f.write(s)";
    const { messages } = transcript()
      .bash(`cd /repo && cat > fix_core.py << 'EOF'\n${fix}\nEOF`, '', 0)
      .bash('cd /repo && python3 fix_core.py', 'done', 0)
      // Written and never run: it changed nothing.
      .bash(`cat > fix_util.py << 'EOF'\nopen('pkg/util.py', 'w').write('')\nEOF`, '', 0)
      // Run, but it failed.
      .bash(`python - << 'EOF'\nopen('pkg/io.py', 'w').write(x)\nEOF`, 'NameError: x', 1)
      .bash(`python -c "open('pkg/cli.py', 'a').write('#')"`, '', 0);
    const files = extractCheckpoint(null, messages, BIG).files;
    const role = (path: string) => files.find((f) => f.path === path)?.role;
    expect(files.find((f) => f.path === 'pkg/core.py')).toMatchObject({
      role: 'edited',
      change: 'rewritten by `python3 fix_core.py`',
      seq: 3,
    });
    expect(role('pkg/cli.py')).toBe('edited');
    expect(role('pkg/util.py')).toBeUndefined();
    expect(role('pkg/io.py')).toBeUndefined();
  });

  it('says what a replacement changed, not the anchor lines it repeats', () => {
    const anchor = 'def _cstack(left, right):\n    noutp = _compute_n_outputs(left, right)\n';
    const { messages } = transcript()
      .tool(
        'Edit',
        {
          file_path: 'separable.py',
          old_string: `${anchor}    cright[-right.shape[0]:, -right.shape[1]:] = 1\n    return np.hstack([cleft, cright])`,
          new_string: `${anchor}    cright[-right.shape[0]:, -right.shape[1]:] = right\n    return np.hstack([cleft, cright])`,
        },
        'ok',
      )
      .tool(
        'Edit',
        {
          file_path: 'match.c',
          old_string: '    case TK_MATCH_DONTCARE:\n      return pattern_type;',
          new_string:
            '    case TK_MATCH_DONTCARE:\n      if(ast_id(pattern_type) == TK_ISO)\n        pattern_type = set_cap(pattern_type);\n      return pattern_type;',
        },
        'ok',
      );
    const changes = Object.fromEntries(
      extractCheckpoint(null, messages, BIG).files.map((f) => [f.path, f.change]),
    );
    expect(changes['separable.py']).toBe(
      '"cright[-right.shape[0]:, -right.shape[1]:] = 1" → "cright[-right.shape[0]:, -right.shape[1]:] = right"',
    );
    expect(changes['match.c']).toBe(
      'added "if(ast_id(pattern_type) == TK_ISO) pattern_type = set_cap(pattern_type);" after "case TK_MATCH_DONTCARE:"',
    );
  });

  it('drops tokens that are not paths and throwaway temp paths', async () => {
    const text = [
      "sed -i '317s/^/\\t/' src/a.c",
      '$(subst /Volumes/Macintosh HD/,/,$(x))',
      'Hello///PROCESS-DONE:0:PROCESS-DONE///',
      'created /tmp/tmpfggxyceh/src/project/__init__.py',
      'Building wheel in /tmp/pip-ephem-wheel-cache-h335xxo8/wheels/4d',
      'edited src/main.c',
    ].join('\n');
    const paths = extractWorkingSet(transcript().assistant(text).messages);
    expect(paths).toEqual(expect.arrayContaining(['src/a.c', 'src/main.c', '/Volumes/Macintosh']));
    for (const noise of ['317s', 'HD', 'PROCESS-DONE']) expect(paths).not.toContain(noise);
    expect(paths.filter((p) => p.startsWith('/tmp/'))).toEqual([]);
    const ponyc = await loadCorpusSession('openhands__ponyc-4588');
    const set = extractCheckpoint(null, ponyc, BIG).workingSet;
    expect(set).not.toContain('HD');
    expect(set).not.toContain('317s');
  });
});

describe('budget', () => {
  it('shows a copied task prompt once, condensed, and leaves room for every list', async () => {
    const messages = (await loadCorpusSession('minisweagent__django-13964')).filter(
      (m) => m.role !== 'system',
    );
    const leaving = messages.slice(0, -10);
    const checkpoint = extractCheckpoint(null, leaving, 2_000);
    const tokens = estimateTextTokens(renderCheckpoint(checkpoint, leaving.length));
    expect(tokens).toBeLessThanOrEqual(2_000);
    expect(estimateTextTokens(checkpoint.lastUserRequest)).toBeLessThanOrEqual(0.36 * 2_000);
    expect(checkpoint.lastUserRequest).toMatch(
      /\[… condensed: the request has \d+ characters; read message seq 1/,
    );
    expect(checkpoint.goal.length).toBeLessThanOrEqual(200);
    expect(checkpoint.completed.length).toBeGreaterThan(0);
    expect(checkpoint.blockers.length + checkpoint.errorsAndFixes.length).toBeGreaterThan(0);
    expect(checkpoint.files.length).toBeGreaterThan(0);
  });

  it('condenses the previous items it cannot keep instead of dropping them all', () => {
    const previous = {
      ...emptyCheckpoint(),
      completed: Array.from({ length: 15 }, (_, i) => ({ text: `migrated table number ${i}`, seq: i })),
    };
    let t = transcript();
    for (let i = 0; i < 10; i++) t = t.bash(`make target${i}`, 'ok');
    const { completed } = extractCheckpoint(previous, t.messages, BIG);
    expect(completed[0]?.text).toMatch(/^Earlier: migrated table number 0; migrated table number 1;/);
    expect(completed.at(-1)?.text).toBe('ran: make target9');
  });
});

describe('old stored checkpoints', () => {
  const old = {
    goal: 'Fix billing',
    lastUserRequest: 'go on',
    completed: ['ran: make'],
    inProgress: [],
    pending: ['write docs'],
    blockers: ['KeyError: 1 (from: python x.py)'],
    decisions: ['use decimals'],
    openQuestions: [],
    workingSet: ['src/billing.py'],
  };

  it('still parse, in the current shape', () => {
    const parsed = checkpointSchema.parse(old);
    expect(parsed.completed).toEqual([{ text: 'ran: make', seq: null }]);
    expect(parsed.userInstructions).toEqual([]);
    expect(parsed.currentWork).toBeNull();
    expect(parsed.files).toEqual([]);
    expect(checkpointSchema.parse(parsed)).toEqual(parsed);
  });

  it('still render, for the model and on the dashboard', () => {
    const parsed = checkpointSchema.parse(old);
    const body = renderCheckpointBody(parsed);
    expect(body).toContain('How to use this summary');
    expect(body).toContain('Completed:\n- ran: make');
    // Old items have no seq: none is shown.
    expect(body).not.toMatch(/\(seq \d/);
    expect(renderCheckpointHtml(old)).toContain('<li>use decimals</li>');
  });

  it('merge with a new compaction', () => {
    const { messages } = transcript().bash('python x.py', 'ok');
    const checkpoint = extractCheckpoint(old, messages, BIG);
    expect(checkpoint.blockers).toEqual([]);
    expect(texts(checkpoint.completed)).toEqual(['ran: make', 'ran: python x.py']);
    expect(texts(checkpoint.decisions)).toEqual(['use decimals']);
  });
});
