import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { legacyToolIds, type Message } from '../../shared/contract/message.ts';
import { estimateTextTokens } from '../../shared/contract/tokens.ts';
import {
  createExtractiveSummarizer,
  extractCheckpoint,
  GOAL_CHARS,
  REQUEST_CHARS,
} from '../../shared/extractive/index.ts';
import {
  type Checkpoint,
  checkpointSchema,
  emptyCheckpoint,
  renderCheckpoint,
  type StoredCheckpoint,
} from '../../shared/summary/checkpoint.ts';
import { noUsage, type SummarizeInput } from '../../shared/summary/summarizer.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { transcript } from '../support/transcript-builder.ts';

const BIG = 1_000_000;

/** The texts of a list of entries. */
function texts(entries: Array<{ text: string }>): string[] {
  return entries.map((e) => e.text);
}

describe('extractive checkpoint', () => {
  it('always validates against the checkpoint schema', () => {
    const { messages } = transcript()
      .user('Make the tests pass')
      .bash('pytest', 'FAILED tests/test_a.py::test_x - AssertionError', 1)
      .assistant('The root cause is a missing import. I will add it to src/a.py.');
    const checkpoint = extractCheckpoint(null, messages, BIG);
    expect(() => checkpointSchema.parse(checkpoint)).not.toThrow();
  });

  it('is deterministic: the same input twice gives the same checkpoint', () => {
    const { messages } = transcript()
      .user('Fix src/a.py, please. Why does it crash?')
      .tool(
        'Edit',
        { file_path: 'src/a.py', old_string: 'a', new_string: 'b' },
        'The file src/a.py has been updated.',
      )
      .bash('python -m pytest tests', 'E   TypeError: unsupported operand\n1 failed', 1)
      .assistant('The fix is to cast the value. Next I will rerun the tests.');
    // An old-shape checkpoint (string items), as older versions stored it.
    const previous: StoredCheckpoint = {
      ...emptyCheckpoint(),
      completed: ['ran: make'],
      workingSet: ['Makefile'],
    };
    const first = extractCheckpoint(previous, messages, 500);
    const second = extractCheckpoint(structuredClone(previous), structuredClone(messages), 500);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  describe('goal and last user request', () => {
    it('takes the goal from the first user message, clipped on a word boundary', () => {
      const filler = 'The session cookie expires too early under load. '.repeat(30);
      const long = `<issue>Fix the flaky login test. ${filler}</issue>`;
      const { goal } = extractCheckpoint(
        null,
        transcript().user(long).user('and also the docs').messages,
        BIG,
      );
      expect(goal.startsWith('Fix the flaky login test.')).toBe(true);
      expect(goal.length).toBeLessThanOrEqual(GOAL_CHARS);
      expect(goal.endsWith('…')).toBe(true);
      expect(goal.slice(0, -1).endsWith(' ')).toBe(false);
      expect(long).toContain(goal.slice(-12, -1));
    });

    it('keeps the previous goal', () => {
      const previous = { ...emptyCheckpoint(), goal: 'Ship v2' };
      expect(extractCheckpoint(previous, transcript().user('new topic').messages, BIG).goal).toBe('Ship v2');
    });

    it('keeps the last user request verbatim', () => {
      const request = 'Now rename `foo` to `bar`\n  - in src/*.ts\n  - keep <tags> & "quotes"\n\nThanks!';
      const { messages } = transcript()
        .user('first request')
        .assistant('done')
        .user(request)
        .assistant('On it.');
      expect(extractCheckpoint(null, messages, BIG).lastUserRequest).toBe(request);
    });

    it('clips only a request over 20,000 characters, with a marker', () => {
      const huge = 'x'.repeat(25_000);
      const { lastUserRequest } = extractCheckpoint(null, transcript().user(huge).messages, BIG);
      expect(lastUserRequest.length).toBeLessThanOrEqual(REQUEST_CHARS);
      expect(lastUserRequest).toMatch(/\[… clipped: the request has 25000 characters\]$/);
      const fits = 'y'.repeat(REQUEST_CHARS);
      expect(extractCheckpoint(null, transcript().user(fits).messages, BIG).lastUserRequest).toBe(fits);
    });

    it('keeps the previous request when no user message leaves', () => {
      const previous = { ...emptyCheckpoint(), lastUserRequest: 'Deploy it' };
      const { messages } = transcript().assistant('Deploying.').bash('make deploy', 'ok');
      expect(extractCheckpoint(previous, messages, BIG).lastUserRequest).toBe('Deploy it');
    });
  });

  describe('working set', () => {
    it('lists the paths of the leaving messages, most recent first, then the previous ones', () => {
      const { messages } = transcript()
        .tool('Read', { file_path: 'src/a.py' }, 'def a(): pass')
        .tool('Edit', { file_path: 'src/b.py' }, 'The file src/b.py has been updated.');
      const previous = { ...emptyCheckpoint(), workingSet: ['src/a.py', 'docs/old.md'] };
      expect(extractCheckpoint(previous, messages, BIG).workingSet).toEqual([
        'src/b.py',
        'src/a.py',
        'docs/old.md',
      ]);
    });
  });

  describe('blockers', () => {
    it('picks the exception line of a traceback', () => {
      const trace = [
        'Traceback (most recent call last):',
        '  File "/app/x.py", line 3, in <module>',
        '    f()',
        "KeyError: 'user_id'",
      ].join('\n');
      const { blockers } = extractCheckpoint(null, transcript().bash('python x.py', trace, 1).messages, BIG);
      expect(texts(blockers)).toEqual(["KeyError: 'user_id' (from: python x.py)"]);
    });

    it('picks error:, FAILED, compiler errors, and bare non-zero exit codes', () => {
      const { messages } = transcript()
        .bash('cargo build', '   Compiling app v0.1.0\nerror[E0382]: borrow of moved value: `v`', 101)
        .bash(
          'pytest -q',
          '..F\nFAILED tests/test_api.py::test_login - assert 401 == 200\n1 failed, 2 passed',
          1,
        )
        .tool('execute_bash', { command: 'gcc main.c' }, 'main.c:3:5: error: expected ‘;’\nexit code 1')
        .bash('./deploy.sh', '', 2);
      expect(texts(extractCheckpoint(null, messages, BIG).blockers)).toEqual([
        'error[E0382]: borrow of moved value: `v` (from: cargo build)',
        'FAILED tests/test_api.py::test_login - assert 401 == 200 (from: pytest -q)',
        'main.c:3:5: error: expected ‘;’ (from: gcc main.c)',
        'exit code 2 (from: ./deploy.sh)',
      ]);
    });

    it('reads tool errors of other agents (Claude Code, OpenHands)', () => {
      const { messages } = transcript()
        .tool('Bash', { command: 'gh gist create x' }, "[error] Exit code 1\nerror: unknown option '--yes'")
        .tool(
          'str_replace_editor',
          { command: 'str_replace', path: '/w/a.c', old_str: 'x', new_str: 'y' },
          'ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /w/a.c.',
        );
      expect(texts(extractCheckpoint(null, messages, BIG).blockers)).toEqual([
        "error: unknown option '--yes' (from: gh gist create x)",
        'ERROR: No replacement was performed, old_str `x` did not appear verbatim in /w/a.c. ' +
          '(from: str_replace_editor /w/a.c)',
      ]);
    });

    it('ignores grep finding nothing and errors quoted in files being read', () => {
      const { messages } = transcript()
        .bash('grep -rn "a|b" src', '', 1)
        .bash(
          'cat src/errors.py',
          'class Boom(Exception):\n    pass\nraise ValueError("nope")\nValueError: documented',
          0,
        )
        .tool('Read', { file_path: 'notes.md' }, '1→# Notes\n2→ValueError: seen last week\n3→error: old');
      expect(texts(extractCheckpoint(null, messages, BIG).blockers)).toEqual([]);
    });

    it('clears a blocker when the same command later succeeds', () => {
      const { messages } = transcript()
        .bash('npm test', 'Error: Cannot find module ./db', 1)
        .bash('npm run build', 'error TS2322: Type string is not assignable', 2)
        .bash('npm test', '12 passing', 0);
      expect(texts(extractCheckpoint(null, messages, BIG).blockers)).toEqual([
        'error TS2322: Type string is not assignable (from: npm run build)',
      ]);
    });

    it('merges with the previous blockers, newest kept, at most 10', () => {
      const previous = { ...emptyCheckpoint(), blockers: ['disk full (from: make)', 'old flaky test'] };
      let t = transcript().bash('make', 'make: *** [all] Error 2\nerror: disk full', 2);
      for (let i = 0; i < 12; i++) t = t.bash(`./step${i}.sh`, `fatal: step ${i} broke`, 1);
      const { blockers } = extractCheckpoint(previous, t.messages, BIG);
      expect(blockers).toHaveLength(10);
      expect(blockers.at(-1)).toEqual({ text: 'fatal: step 11 broke (from: ./step11.sh)', seq: 25 });
      expect(texts(blockers)).not.toContain('old flaky test');
    });
  });

  describe('completed work', () => {
    it('describes successful edits and commands, not reads or failures', () => {
      const { messages } = transcript()
        .tool('Read', { file_path: 'src/a.py' }, 'print(1)')
        .bash('ls -la src && grep -n foo src/a.py', 'a.py')
        .tool(
          'Edit',
          { file_path: 'src/a.py', old_string: '1', new_string: '2' },
          'The file src/a.py has been updated.',
        )
        .bash("cat > test_fix.py << 'EOF'\nimport a\nEOF", '')
        .bash('pytest tests/test_a.py', '1 passed')
        .bash('pytest tests/test_b.py', 'FAILED tests/test_b.py::test_b', 1);
      expect(texts(extractCheckpoint(null, messages, BIG).completed)).toEqual([
        'edited src/a.py',
        'wrote test_fix.py',
        'ran: pytest tests/test_a.py',
      ]);
    });

    it('merges with the previous list, deduplicated, the oldest condensed past 15', () => {
      let t = transcript();
      for (let i = 0; i < 20; i++) t = t.bash(`make target${i}`, 'ok');
      t = t.bash('make target0', 'ok');
      const previous = { ...emptyCheckpoint(), completed: ['ran: make target19', 'set up the repo'] };
      const { completed } = extractCheckpoint(previous, t.messages, BIG);
      expect(completed).toHaveLength(15);
      expect(completed.at(-1)?.text).toBe('ran: make target0');
      expect(texts(completed).filter((c) => c === 'ran: make target19')).toHaveLength(1);
      // The oldest items are condensed into one, not dropped.
      expect(completed[0]?.text).toMatch(/^Earlier: set up the repo; ran: make target1; /);
    });
  });

  describe('decisions, state and questions', () => {
    it('keeps statements of decision and cause, not plans to look around', () => {
      const { messages } = transcript()
        .assistant("I'll start by exploring the repository structure.")
        .assistant(
          'The root cause is that `parse()` drops the timezone. I decided to keep the public API unchanged.',
        )
        .assistant("Instead of patching every caller, I'll fix `parse()` itself.");
      const checkpoint = extractCheckpoint(null, messages, BIG);
      expect(texts(checkpoint.decisions)).toEqual([
        'I decided to keep the public API unchanged.',
        "Instead of patching every caller, I'll fix `parse()` itself.",
      ]);
      // A cause is a fact found, not a decision.
      expect(texts(checkpoint.discoveries)).toEqual(['The root cause is that `parse()` drops the timezone.']);
    });

    it('puts a call still waiting for its result in progress, and stated next steps in pending', () => {
      const { messages } = transcript()
        .bash('make', 'ok')
        .assistant('Build works. Next I will run the integration tests, then update the changelog.')
        .bash('pytest tests/integration', null);
      const checkpoint = extractCheckpoint(null, messages, BIG);
      expect(texts(checkpoint.inProgress)).toEqual(['waiting for result: ran: pytest tests/integration']);
      expect(texts(checkpoint.pending)).toEqual([
        'Next I will run the integration tests, then update the changelog.',
      ]);
    });

    it('reads a todo list (Claude Code TodoWrite)', () => {
      const todos = [
        { content: 'Write the parser', status: 'completed' },
        { content: 'Wire the CLI', status: 'in_progress' },
        { content: 'Document flags', status: 'pending' },
      ];
      const { messages } = transcript().tool(
        'TodoWrite',
        { todos },
        'Todos have been modified successfully.',
      );
      const checkpoint = extractCheckpoint(null, messages, BIG);
      expect(texts(checkpoint.completed)).toContain('Write the parser');
      expect(texts(checkpoint.inProgress)).toEqual(['Wire the CLI']);
      expect(texts(checkpoint.pending)).toEqual(['Document flags']);
    });

    it('keeps the previous state when the leaving messages say nothing new about it', () => {
      const previous = { ...emptyCheckpoint(), inProgress: ['migrating the db'], pending: ['write docs'] };
      const { messages } = transcript().bash('make', 'ok');
      const checkpoint = extractCheckpoint(previous, messages, BIG);
      expect(texts(checkpoint.inProgress)).toEqual(['migrating the db']);
      expect(texts(checkpoint.pending)).toEqual(['write docs']);
    });

    it('lists questions nobody answered', () => {
      const { messages } = transcript()
        .user('Can you make the build faster?')
        .assistant('Yes, caching helps.')
        .bash('make', 'ok')
        .assistant('Done. Should I also enable remote caching?');
      expect(texts(extractCheckpoint(null, messages, BIG).openQuestions)).toEqual([
        'Should I also enable remote caching?',
      ]);
      const answered = transcript().assistant('Which database do you use?').user('Postgres 16.');
      expect(texts(extractCheckpoint(null, answered.messages, BIG).openQuestions)).toEqual([]);
    });
  });

  describe('token budget', () => {
    function busySession() {
      let t = transcript().user('Refactor the payment module');
      for (let i = 0; i < 40; i++) {
        t = t
          .assistant(
            `The root cause of failure ${i} is a stale cache entry in module number ${i} of the service.`,
          )
          .bash(`./check${i}.sh --verbose`, `fatal: check ${i} failed because the fixture is missing`, 1)
          .tool('Edit', { file_path: `src/pay/m${i}.py` }, 'ok');
      }
      return t.messages;
    }

    it('fits the rendered checkpoint within maxSummaryTokens, dropping the oldest items first', () => {
      const messages = busySession();
      const roomy = extractCheckpoint(null, messages, BIG);
      const tight = extractCheckpoint(null, messages, 400);
      expect(estimateTextTokens(renderCheckpoint(roomy, 0))).toBeGreaterThan(400);
      expect(estimateTextTokens(renderCheckpoint(tight, messages.length))).toBeLessThanOrEqual(400);
      expect(tight.blockers.length).toBeLessThan(roomy.blockers.length);
      expect(tight.completed.at(-1)).toEqual(roomy.completed.at(-1));
      const kept = tight.completed.filter((c) => !c.text.startsWith('Earlier: '));
      expect(roomy.completed).toEqual(expect.arrayContaining(kept));
    });

    it('never trims the goal, the last request or the working set', () => {
      const messages = busySession();
      const tiny = extractCheckpoint(null, messages, 10);
      expect(tiny.goal).toBe('Refactor the payment module');
      expect(tiny.lastUserRequest).toBe('Refactor the payment module');
      expect(tiny.workingSet).toEqual(extractCheckpoint(null, messages, BIG).workingSet);
      expect(tiny.workingSet).toContain('src/pay/m0.py');
      expect([tiny.completed, tiny.blockers, tiny.decisions].flat()).toEqual([]);
    });
  });

  describe('robustness', () => {
    it('returns the previous checkpoint, or an empty one, when nothing leaves', () => {
      const previous = { ...emptyCheckpoint(), goal: 'g', completed: [{ text: 'x', seq: 3 }] };
      expect(extractCheckpoint(previous, [], 100)).toEqual(previous);
      // An old-shape checkpoint comes back in the current shape.
      const old = { goal: 'g', lastUserRequest: '', completed: ['x'], inProgress: [], pending: [] };
      const upgraded = { ...old, blockers: [], decisions: [], openQuestions: [], workingSet: [] };
      expect(extractCheckpoint(upgraded, [], 100)).toEqual({
        ...emptyCheckpoint(),
        goal: 'g',
        completed: [{ text: 'x', seq: null }],
      });
      expect(extractCheckpoint(null, [], 100)).toEqual(emptyCheckpoint());
    });

    it('never throws, whatever the input', () => {
      const junk = [
        null,
        { seq: 1, role: 'user', kind: 'message', content: 42 },
        {
          seq: 2,
          role: 'assistant',
          kind: 'tool_call',
          content: '{"name": 5, "arguments": [1,2]}',
          toolCallId: 'x',
        },
        {
          seq: 3,
          role: 'tool',
          kind: 'tool_result',
          content: 'error: \u0000\u202E\uD800 \u001b[31mboom\u001b[0m',
          toolCallId: 'x',
        },
        { seq: 4, role: 'assistant', kind: 'tool_call', content: 'not json at all', toolCallId: null },
        { seq: 5, role: 'tool', kind: 'tool_result', content: '', toolCallId: 'missing' },
      ] as unknown as Message[];
      const badPrevious = {
        goal: 7,
        completed: ['', 'ok', 3, 'z'.repeat(5_000)],
        workingSet: 'nope',
      } as unknown as Checkpoint;
      const checkpoint = extractCheckpoint(badPrevious, junk, Number.NaN);
      expect(() => checkpointSchema.parse(checkpoint)).not.toThrow();
      expect(checkpoint.completed[0]?.text).toBe('ok');
      expect(texts(checkpoint.blockers)).toEqual(['error: ??? boom (from: tool)']);
    });

    it('yields a valid checkpoint for random transcripts (seeded fuzz)', () => {
      let seed = 7;
      const random = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return Math.floor((seed / 2 ** 31) * n);
      };
      const pieces = [
        '{"name":"bash","arguments":{"command":"',
        '"}}',
        'Traceback (most recent call last):\n',
        'KeyError: 1',
        '\u0000',
        '\u202E',
        '\uD800',
        '/a/b.py',
        ' ',
        '\n',
        'error:',
        '<returncode>1</returncode>',
        '```',
        '?',
        '. ',
        "I'll",
        'the fix is',
        '[thinking]',
        '{"todos":[{"content":"x","status":"pending"}]}',
        'https://x.io/a',
        '"',
        '|',
        '>',
      ];
      const roles = ['user', 'assistant', 'tool', 'system'] as const;
      const kinds = ['message', 'tool_call', 'tool_result', 'summary'] as const;
      let previous: Checkpoint | null = null;
      for (let round = 0; round < 100; round++) {
        const messages: Message[] = Array.from({ length: random(15) }, (_, seq) => {
          const kind = kinds[random(4)] ?? 'message';
          const toolCallId = `c${random(4)}`;
          return {
            seq,
            role: roles[random(4)] ?? 'user',
            kind,
            toolCallId,
            toolName: null,
            ...legacyToolIds(kind, toolCallId),
            tokenCount: 1,
            pinned: false,
            content: Array.from({ length: random(25) }, () => pieces[random(pieces.length)]).join(''),
          };
        });
        const checkpoint = extractCheckpoint(previous, messages, random(3_000));
        expect(checkpointSchema.safeParse(checkpoint).success).toBe(true);
        previous = checkpoint;
      }
    });

    // A catastrophically backtracking regex would hang here until vitest's test timeout.
    it('summarizes pathological tool output into a valid checkpoint', () => {
      const { messages } = transcript()
        .user(`${'why? '.repeat(20_000)}`)
        .bash(
          `cd a && ${'cd b && '.repeat(20_000)}make`,
          `${'A.'.repeat(300_000)}\n${'x'.repeat(500_000)}`,
          1,
        )
        .tool('Edit', { file_path: 'a.py' }, '```'.repeat(50_000))
        .assistant(`${'I will decide. '.repeat(30_000)}`);
      const checkpoint = extractCheckpoint(null, messages, 2_000);
      expect(checkpoint.workingSet).toContain('a.py');
      expect(() => checkpointSchema.parse(checkpoint)).not.toThrow();
    });

    it('is the extractive summarizer of the Summarizer interface, with zero usage', async () => {
      const summarizer = createExtractiveSummarizer();
      expect(summarizer.name).toBe('extractive');
      const input: SummarizeInput = {
        tenantId: 't',
        sessionId: 's',
        previous: null,
        leaving: transcript().user('hello').messages,
        maxSummaryTokens: 2_000,
      };
      const result = await summarizer.summarize(input);
      expect(result.usage).toEqual(noUsage());
      expect(result.checkpoint.lastUserRequest).toBe('hello');
      await expect(summarizer.summarize(undefined as unknown as SummarizeInput)).resolves.toBeDefined();
    });
  });
});

function loadSession(name: string): Message[] {
  return readFileSync(path.join(CORPUS_DIR, name), 'utf8')
    .trim()
    .split('\n')
    .map((line) => ({ ...(JSON.parse(line) as Message), tokenCount: 0, pinned: false }));
}

describe('extractive checkpoint of real sessions, compacted twice', () => {
  const sessions = [
    'minisweagent__django-11910.jsonl',
    'openhands__ponyc-4588.jsonl',
    'claudecode__session-share-general-tool-calls.jsonl',
    'sweagent__pydicom-1458.jsonl',
  ];

  for (const name of sessions) {
    it(`${name}: valid, within budget unless the working set alone exceeds it`, () => {
      const messages = loadSession(name);
      const half = Math.floor(messages.length / 2);
      const first = extractCheckpoint(null, messages.slice(0, half), 2_000);
      const second = extractCheckpoint(first, messages.slice(half), 2_000);
      for (const checkpoint of [first, second]) {
        expect(() => checkpointSchema.parse(checkpoint)).not.toThrow();
        const lists = [
          checkpoint.completed,
          checkpoint.blockers,
          checkpoint.decisions,
          checkpoint.pending,
        ].flat();
        const tokens = estimateTextTokens(renderCheckpoint(checkpoint, messages.length));
        expect(tokens <= 2_000 || lists.length === 0).toBe(true);
      }
      expect(second.goal).toBe(first.goal);
      expect(second.workingSet.length).toBeGreaterThanOrEqual(first.workingSet.length);
    });
  }

  it('records the failed test run of a SWE-agent session, then clears it once it passes', () => {
    const messages = loadSession('sweagent__pydicom-1458.jsonl');
    const firstRun = messages.findIndex((m) => m.kind === 'tool_result' && m.content.startsWith('Traceback'));
    const failing = extractCheckpoint(null, messages.slice(0, firstRun + 1), BIG);
    expect(failing.blockers.at(-1)?.text).toMatch(/Error: .*\(from: python reproduce_bug\.py\)$/);
    const all = extractCheckpoint(null, messages, BIG);
    expect(all.blockers.filter((b) => b.text.includes('reproduce_bug.py'))).toEqual([]);
    expect(texts(all.completed)).toContain('ran: python reproduce_bug.py');
    // The expired blocker is an error with its fix.
    expect(all.errorsAndFixes.some((e) => /reproduce_bug\.py/.test(e.fix ?? ''))).toBe(true);
  });
});
