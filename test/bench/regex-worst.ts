/**
 * `npm run bench:regex`: the worst case of the pure code's regular expressions on transcript text.
 * Every public function of shared/ that runs patterns over message content (tool output, commands,
 * the user's and the agent's words) is called on adversarial inputs (long runs of word characters,
 * of `a_`, `a.`, `a/`, spaces, quotes, repeated near-matches of a pattern), 100 KB and 1 MB long, and
 * the time of each call is printed in ms, worst first. A pattern that backtracks super-linearly
 * shows as a function far slower than on a realistic tool output of the same size (the `baseline`
 * column). Numbers only: it asserts nothing.
 *
 * Each call runs in a worker thread that is stopped after `--timeout` ms (a catastrophic pattern
 * can run for hours), reported as `>timeout`. The 1 MB run is skipped when 100 KB took over 500 ms.
 *
 * Options: `--only <substring>` (functions whose name holds it), `--input <substring>` (inputs whose
 * name holds it), `--size <chars>` (default 100000), `--timeout <ms>` (default 5000), `--all` (one
 * row per function and input instead of each function's worst input), `--no-big` (skip 1 MB).
 */
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { frameRecord } from '../../shared/context/render.ts';
import type { Message } from '../../shared/contract/message.ts';
import { errorSubjects, mergeBlockers, unversioned } from '../../shared/extractive/blockers.ts';
import { outcomes } from '../../shared/extractive/completed.ts';
import { decisionItems, isDecision, listedOptions } from '../../shared/extractive/decisions.ts';
import { describeCall } from '../../shared/extractive/describe-call.ts';
import { diffChanges, fileItems, replacementChange } from '../../shared/extractive/files.ts';
import { recentFocus } from '../../shared/extractive/focus.ts';
import { extractCheckpoint } from '../../shared/extractive/index.ts';
import { goalOf, instructionItems } from '../../shared/extractive/instructions.ts';
import {
  discoveryItems,
  pointsBack,
  questionItems,
  trailingIntents,
} from '../../shared/extractive/intents.ts';
import { restoredPaths } from '../../shared/extractive/reverted.ts';
import { liftsRule, ruleStrength } from '../../shared/extractive/rule-markers.ts';
import { checklist, currentState } from '../../shared/extractive/state.ts';
import { transcriptSummaryItems } from '../../shared/extractive/summaries.ts';
import { commandKind, testReports, threadKey } from '../../shared/extractive/threads.ts';
import { pairToolCalls, type ToolRun } from '../../shared/extractive/tool-runs.ts';
import {
  checkFidelity,
  errorLineOf,
  factsOf,
  instructionSentences,
  sanitizeItem,
} from '../../shared/fidelity/score.ts';
import { sessionSuspects } from '../../shared/summary/guard.ts';
import { keepsRequest } from '../../shared/summary/last-request.ts';
import { buildSummaryPrompt, clipContent, renderTranscript } from '../../shared/summary/prompt.ts';
import { pruneToolOutputs } from '../../shared/summary/prune.ts';
import { callOutcome, detectError, exitCode, isErrorLine } from '../../shared/text/error-lines.ts';
import {
  commandKey,
  heredocs,
  isInspectionCommand,
  parseShell,
  scriptWrites,
  shellSummary,
  withoutCdSteps,
  writtenFile,
} from '../../shared/text/shell.ts';
import { cleanItem, sentences, stripAnsi } from '../../shared/text/text.ts';
import {
  classifyUserMessage,
  isShortAnswer,
  lastQuestion,
  questionBefore,
  stripMarkupPrefix,
} from '../../shared/text/user-messages.ts';
import { fetchThenExecute } from '../../shared/trust/fetch-exec.ts';
import { detectInjection } from '../../shared/trust/injection.ts';
import { splitRelayed, userMessageInjections } from '../../shared/trust/relayed.ts';
import { extractPaths, extractWorkingSet } from '../../shared/working-set/working-set.ts';

// ---------------------------------------------------------------------------------------------
// Inputs

/** `unit` repeated to `n` characters. */
function repeat(unit: string, n: number): string {
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

/** A realistic tool output (a test run's log) of `n` characters: the linear baseline. */
function testLog(n: number): string {
  const lines = [
    'tests/test_models.py::test_create_user PASSED                                   [ 12%]',
    'tests/test_models.py::test_update_user FAILED                                   [ 25%]',
    '    def test_update_user(self, db_session):',
    '>       assert user.email == "new@example.com"',
    "E       AssertionError: assert 'old@example.com' == 'new@example.com'",
    'src/app/models/user.py:42: in update',
    '    self.session.commit()',
    '  File "/usr/lib/python3.11/site-packages/sqlalchemy/orm/session.py", line 1428, in commit',
    'WARNING: the `fooBar_baz` option is deprecated; use fooBar.qux() instead. See https://x.io/a/b.',
    '- [ ] follow-up: check `config.yaml` and ./scripts/run_tests.sh',
  ];
  return repeat(`${lines.join('\n')}\n`, n);
}

/** Characters of each line of the `…, 2 KB lines` inputs. */
const LINE_CHARS = 2_000;

/**
 * Adversarial patterns: a unit repeated, between a prefix and a suffix (the near-miss that makes a
 * pattern fail only at the end). Each gives two inputs: one run of `n` characters, and lines of
 * {@link LINE_CHARS} characters each (`…, 2 KB lines`), which reach the patterns of callers that
 * clip a text or a line first (an error line's first 1,000 characters, a checklist's first 50,000).
 */
const PATTERNS: Record<string, [unit: string, before?: string, after?: string]> = {
  'word chars': ['a'],
  a_: ['a_'],
  'a.': ['a.'],
  'a/': ['a/'],
  'a-': ['a-'],
  'a@': ['a@'],
  'a:': ['a:'],
  'a(': ['a('],
  aB: ['aB'],
  digits: ['1'],
  spaces: [' ', 'x', 'x'],
  'spaces then end': [' ', 'x'],
  tabs: ['\t', 'x', 'x'],
  'spaces and a CR': [' ', 'x', '\rx'],
  'double quotes': ['"', 'x', 'x'],
  'single quotes': ["'", 'x', 'x'],
  backticks: ['`', 'x', 'x'],
  dots: ['.', 'x', 'x'],
  'punctuation run': ['.,;: ', 'x', 'x'],
  'prose, no punctuation': ['word '],
  'word colon': ['ab: '],
  '`<a-b>` unclosed': ['<a-b>'],
  'markup then words': ['<system-reminder>x</system-reminder>\n', '', 'fix the bug'],
  'markup with attributes, unclosed': ['<ide-opened file="a" '],
  'attachment then words': ['[image image/png] ', '', 'x'],
  '`*** ` near make error': ['*** '],
  'exception name, no colon': ['a.ValueError '],
  'Error words': ['Error'],
  'here-document heads': ['<<'],
  '`cd a && `': ['cd a && ', '', 'x'],
  '`A=1 `': ['A=1 ', '', 'x'],
  '`timeout -k `': [' -k', 'timeout', ' x'],
  '`sed -a `': [' -a', 'sed', ' x'],
  "`open('a'`": ["open('a',"],
  "`open('`": ["open('"],
  '`writeFile(`': ['writeFile("'],
  '`| head`': [' | head'],
  '`2>&1`': [' 2>&1'],
  '`> /dev/null`': ['> ', 'echo'],
  'checkbox then spaces': [' ', '☐ a', 'b'],
  'checkbox, spaces and a CR': [' ', '☐ a', '\rb'],
  'heading then spaces': [' ', '# a', 'b'],
  'heading, spaces and a CR': [' ', '# a', '\rb'],
  'heading marks': ['#', '# a', 'b'],
  'bold heading, unclosed': ['**a** ', '**'],
  'numbered heading': ['1. '],
  'list markers': ['- '],
  'ANSI escapes, unterminated': ['\u001b[1;'],
  'code fences': ['```'],
  URLs: ['a://'],
  'sed expressions': [' s/a'],
  'host:port': ['a:1/'],
  'quoted words': ["'abcd "],
  'backticked words': ['`abcd '],
  'sentence ends': ['. '],
  'version names': ['fix_v2.py '],
  'exit code text': ['exit code '],
  'rejection text': ['user '],
  'intent words': ["let me I'll "],
  'rule words': ["don't always "],
  'camel and snake': ['fooBar_baz.qux('],
  'Windows paths': ['C:\\a\\'],
  'home paths': ['~/a'],
  'dot files': ['.a'],
  'surrogates, unpaired': ['\ud800'],
  'emoji boxes': ['🔄 '],
  'curl before a pipe': ['curl a '],
  'spaced letters': ['a '],
  'base64 run': ['QWJj'],
  'override words': ['ignore all the '],
  'role markers': ['\nsystem: '],
  'frame tags': ['</session-record'],
  'zero-width characters': ['a\u200b'],
};

/** Inputs made of many lines by nature: they have no `2 KB lines` variant. */
const MULTILINE: Record<string, (n: number) => string> = {
  baseline: testLog,
  newlines: (n) => `x${repeat('\n', n)}x`,
  'blank lines with spaces': (n) => `x${repeat(' \n', n)}x`,
  'prose lines, no punctuation': (n) => repeat('a few words on a line without an end\n', n),
  'lines ending in a colon': (n) => repeat('Which one of these:\n', n),
  'error: lines': (n) => repeat('src/a.py:12:3: error x\n', n),
  'here-documents': (n) => repeat('cat <<EOF\nEOF\n', n),
  'here-documents with bodies': (n) => repeat('cat > a.py <<EOF\nprint(1)\nEOF\n', n),
  'checkbox lines': (n) => repeat('- [ ] a task\n', n),
  'bash fences, unclosed': (n) => repeat('```bash\n', n),
  'diff headers': (n) => repeat('+++ b/a\n', n),
  'diff lines': (n) => `diff --git a/x b/x\n${repeat('-a\n+b\n', n)}`,
};

/** Inputs by name: each about `n` characters long. */
const INPUTS: Record<string, (n: number) => string> = { ...MULTILINE };
for (const [name, [unit, before = '', after = '']] of Object.entries(PATTERNS)) {
  INPUTS[name] = (n) => before + repeat(unit, n) + after;
  const line = before + repeat(unit, LINE_CHARS - before.length - after.length) + after;
  INPUTS[`${name}, 2 KB lines`] = (n) => repeat(`${line}\n`, n);
}

// ---------------------------------------------------------------------------------------------
// Functions under test

let seq = 0;
function message(
  role: Message['role'],
  kind: Message['kind'],
  content: string,
  extra?: Partial<Message>,
): Message {
  seq += 1;
  return {
    seq,
    role,
    kind,
    content,
    toolCallId: null,
    toolName: null,
    toolUseIds: [],
    toolResultIds: [],
    thinking: false,
    tokenCount: Math.ceil(content.length / 4),
    pinned: false,
    ...extra,
  };
}

/** A shell call of `command` and its result `output`. */
function shellRun(command: string, output: string): Message[] {
  const id = `call_${seq}`;
  return [
    message('assistant', 'tool_call', JSON.stringify({ name: 'bash', arguments: { command } }), {
      toolCallId: id,
      toolName: 'bash',
    }),
    message('tool', 'tool_result', output, { toolCallId: id, toolName: 'bash' }),
  ];
}

/**
 * A synthetic transcript where `s` is every kind of content: the user's request and answer, the
 * agent's prose and thinking, a shell command, a script written by a here-document, a tool output, an
 * editor's replacement, a summary in the transcript.
 */
function transcript(s: string): Message[] {
  const editId = `edit_${seq}`;
  return [
    message('user', 'message', s),
    message('assistant', 'message', s),
    message('assistant', 'message', `[thinking] ${s}`),
    ...shellRun(s, s),
    ...shellRun(`cat > fix.py << 'EOF'\n${s}\nEOF\npython fix.py`, `${s}\n<returncode>0</returncode>`),
    ...shellRun('pytest -x 2>&1 | tail -20', `${s}\nexit code 1`),
    message(
      'assistant',
      'tool_call',
      JSON.stringify({
        name: 'str_replace_editor',
        arguments: { command: 'str_replace', path: 'a.py', old_str: s, new_str: `${s}x` },
      }),
      { toolCallId: editId, toolName: 'str_replace_editor' },
    ),
    message('tool', 'tool_result', s, { toolCallId: editId, toolName: 'str_replace_editor' }),
    message('assistant', 'message', `Which one?\n${s}`),
    message('user', 'message', s),
    message('assistant', 'message', `## Completed\n${s}\n## Next steps\n${s}`),
  ];
}

function runsOf(messages: Message[]): Map<number, ToolRun> {
  return pairToolCalls(messages);
}

const user = (s: string) => [message('user', 'message', s)];
const assistant = (s: string) => [message('assistant', 'message', s)];

/** Functions by name, each taking the adversarial text. */
const FUNCTIONS: Record<string, (s: string) => unknown> = {
  // shared/text/error-lines.ts
  'detectError (output)': (s) => detectError(s, false, null),
  'detectError (read-only)': (s) => detectError(s, true, null),
  'detectError (piped command)': (s) => detectError(`${s}\n<returncode>0</returncode>`, false, `${s} | tail`),
  isErrorLine: (s) => isErrorLine(s),
  callOutcome: (s) => callOutcome(s, false, 'make'),
  exitCode: (s) => exitCode(s),
  // shared/text/text.ts
  sentences: (s) => sentences(s),
  cleanItem: (s) => cleanItem(s, 300),
  stripAnsi: (s) => stripAnsi(s),
  // shared/text/shell.ts
  commandKey: (s) => commandKey(s),
  parseShell: (s) => parseShell(s),
  scriptWrites: (s) => scriptWrites(s),
  heredocs: (s) => heredocs(s),
  withoutCdSteps: (s) => withoutCdSteps(s),
  shellSummary: (s) => shellSummary(s),
  isInspectionCommand: (s) => isInspectionCommand(s),
  writtenFile: (s) => writtenFile(s),
  // shared/extractive/blockers.ts
  unversioned: (s) => unversioned(s, new Set(['fix_v2.py', 'a', 'a_a'])),
  errorSubjects: (s) => errorSubjects(s),
  mergeBlockers: (s) => {
    const messages = transcript(s);
    const runs = runsOf(messages);
    return mergeBlockers(
      [{ text: `${s.slice(0, 300)} (from: ${s.slice(0, 100)})`, seq: 1 }],
      messages,
      runs,
      outcomes(runs),
    );
  },
  // shared/extractive/describe-call.ts, files.ts
  describeCall: (s) => describeCall(runsOf(shellRun(s, s)).values().next().value as ToolRun),
  fileItems: (s) => {
    const messages = transcript(s);
    const runs = runsOf(messages);
    return fileItems([], runs, outcomes(runs));
  },
  diffChanges: (s) => diffChanges(s),
  replacementChange: (s) => replacementChange(s, `${s}x`),
  // shared/extractive/focus.ts, intents.ts, instructions.ts, state.ts, summaries.ts
  recentFocus: (s) => {
    const messages = transcript(s);
    return recentFocus(messages, runsOf(messages));
  },
  pointsBack: (s) => pointsBack(s),
  trailingIntents: (s) => trailingIntents(assistant(s)),
  decisionItems: (s) =>
    decisionItems([...assistant(`Options:\n1. ${s}\n2. ${s}`), ...user(`go with option 2 ${s}`)]),
  // shared/extractive/threads.ts, run-state.ts, reverted.ts, rule-markers.ts, decisions.ts
  threadKey: (s) => threadKey(s),
  commandKind: (s) => commandKind(s),
  testReports: (s) => testReports(s),
  restoredPaths: (s) => restoredPaths(`git checkout -- ${s}`),
  ruleStrength: (s) => ruleStrength(s),
  liftsRule: (s) => liftsRule(s),
  isDecision: (s) => isDecision(s),
  listedOptions: (s) => listedOptions(s),
  discoveryItems: (s) => discoveryItems(assistant(s)),
  questionItems: (s) => questionItems(assistant(s)),
  goalOf: (s) => goalOf('', [...user(s), ...user(`no, ${s}`)]),
  instructionItems: (s) =>
    instructionItems([], [...assistant(`Which one? ${s}`), ...user(s), ...user(`Also:\n${s}`)]),
  checklist: (s) => checklist(s, 1),
  currentState: (s) => {
    const messages = transcript(s);
    const runs = runsOf(messages);
    return currentState(messages, runs, outcomes(runs));
  },
  transcriptSummaryItems: (s) => transcriptSummaryItems(assistant(`## Completed\n${s}\n## Next steps\n${s}`)),
  // the extractive summarizer, whole
  'extractCheckpoint (transcript)': (s) => extractCheckpoint(null, transcript(s)),
  // shared/working-set/working-set.ts
  extractWorkingSet: (s) => extractWorkingSet([...user(s), ...assistant(s)]),
  'extractPaths (JSON call)': (s) =>
    extractPaths(JSON.stringify({ name: 'bash', arguments: { command: s } })),
  // shared/trust/
  detectInjection: (s) => detectInjection(s),
  'detectInjection (user)': (s) => detectInjection(s, { source: 'user' }),
  fetchThenExecute: (s) => fetchThenExecute(s.toLowerCase()),
  sessionSuspects: (s) => sessionSuspects([...user(s), ...assistant(s)]),
  'sessionSuspects (neighbouring results)': (s) =>
    sessionSuspects([...shellRun('cat a', s), ...shellRun('cat b', s)]),
  splitRelayed: (s) => splitRelayed(`Can you handle this:\n${s}\nFrom: a@b.example\nSubject: x\n${s}`),
  userMessageInjections: (s) => userMessageInjections(`Please read this:\n> ${s}\n\`\`\`\n${s}\n\`\`\``),
  frameRecord: (s) => frameRecord(s),
  // shared/text/user-messages.ts
  classifyUserMessage: (s) => classifyUserMessage(s),
  stripMarkupPrefix: (s) => stripMarkupPrefix(s),
  lastQuestion: (s) => lastQuestion(s),
  questionBefore: (s) => questionBefore([...assistant(s), ...user('yes')], 1),
  isShortAnswer: (s) => isShortAnswer(s),
  // shared/summary/prompt.ts, prune.ts, last-request.ts
  clipContent: (s) => clipContent(s),
  renderTranscript: (s) => renderTranscript(transcript(s)),
  buildSummaryPrompt: (s) =>
    buildSummaryPrompt({ previous: null, leaving: transcript(s), maxSummaryTokens: 4_000 }),
  pruneToolOutputs: (s) => pruneToolOutputs([...transcript(s), ...transcript(s)], 3_000),
  keepsRequest: (s) => keepsRequest(`${s.slice(0, 500)}\n[… condensed: seq 3]`, { seq: 3, content: s }),
  // shared/fidelity/score.ts
  factsOf: (s) => factsOf(transcript(s)),
  instructionSentences: (s) => instructionSentences(s),
  errorLineOf: (s) => errorLineOf(s),
  checkFidelity: (s) =>
    checkFidelity(
      factsOf([...user(`don't ${s.slice(0, 200)}`), ...shellRun('make', `error: ${s.slice(0, 200)}`)]),
      { text: s, workingSet: [], lastUserRequest: s },
      { pinned: { total: 0, kept: 0 }, laterUserTurnLive: false },
    ),
  sanitizeItem: (s) => sanitizeItem(s),
};

// ---------------------------------------------------------------------------------------------
// Running

interface Job {
  fn: string;
  input: string;
  size: number;
}

/** In the worker: runs each job it is sent and answers with its time in ms. */
function serve(): void {
  parentPort?.on('message', (job: Job) => {
    const fn = FUNCTIONS[job.fn] as (s: string) => unknown;
    const make = INPUTS[job.input] as (n: number) => string;
    fn(make(1_000)); // warm-up: compiled code, not the interpreter, is what runs in production
    const text = make(job.size);
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      fn(text);
      best = Math.min(best, performance.now() - start);
      if (best > 20) break; // slow enough that noise does not matter
    }
    parentPort?.postMessage(best);
  });
}

/** In the main thread: the jobs in one worker, restarted after a job that ran past `timeout`. */
class Runner {
  private worker: Worker | null = null;
  constructor(private readonly timeout: number) {}

  /** The job's time in ms, or Infinity when it ran past the timeout. */
  async time(job: Job): Promise<number> {
    // The worker loads this TypeScript file again, through tsx's loader (workers do not inherit it).
    this.worker ??= new Worker(
      `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})` +
        `.then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`,
      { eval: true, workerData: { worker: true } },
    );
    const worker = this.worker;
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        worker.removeAllListeners();
        this.worker = null;
        void worker.terminate().then(() => resolve(Number.POSITIVE_INFINITY));
      }, this.timeout);
      worker.once('message', (ms: number) => {
        clearTimeout(timer);
        worker.removeAllListeners('error');
        resolve(ms);
      });
      worker.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
  }
}

interface Row {
  fn: string;
  input: string;
  ms: number;
  bigMs: number | null;
  baselineMs: number;
}

function formatMs(ms: number | null, timeout: number): string {
  if (ms === null) return 'skipped';
  if (!Number.isFinite(ms)) return `>${timeout}`;
  return ms < 10 ? ms.toFixed(2) : ms.toFixed(0);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      input: { type: 'string' },
      size: { type: 'string', default: '100000' },
      timeout: { type: 'string', default: '5000' },
      all: { type: 'boolean', default: false },
      'no-big': { type: 'boolean', default: false },
    },
  });
  const size = Number(values.size);
  const timeout = Number(values.timeout);
  const big = 10 * size;
  const fns = Object.keys(FUNCTIONS).filter((f) => !values.only || f.includes(values.only));
  const inputs = Object.keys(INPUTS).filter(
    (i) => i === 'baseline' || !values.input || i.includes(values.input),
  );
  const runner = new Runner(timeout);
  const rows: Row[] = [];
  const started = performance.now();
  for (const fn of fns) {
    const baselineMs = await runner.time({ fn, input: 'baseline', size });
    for (const input of inputs) {
      const ms = input === 'baseline' ? baselineMs : await runner.time({ fn, input, size });
      const bigMs = values['no-big'] || ms > 500 ? null : await runner.time({ fn, input, size: big });
      rows.push({ fn, input, ms, bigMs, baselineMs });
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  await runner.close();

  const worst = values.all
    ? rows
    : fns.map((fn) =>
        rows
          .filter((r) => r.fn === fn)
          .reduce((a, b) => (b.ms > a.ms || (b.ms === a.ms && (b.bigMs ?? 0) > (a.bigMs ?? 0)) ? b : a)),
      );
  worst.sort(
    (a, b) => b.ms - a.ms || (b.bigMs ?? Number.POSITIVE_INFINITY) - (a.bigMs ?? Number.POSITIVE_INFINITY),
  );
  const kb = (n: number) => `${Math.round(n / 1_000)} KB`;
  const header = ['ms', `ms ${kb(big)}`, `baseline ${kb(size)}`, 'function', `worst input (${kb(size)})`];
  const table = worst.map((r) => [
    formatMs(r.ms, timeout),
    formatMs(r.bigMs, timeout),
    formatMs(r.baselineMs, timeout),
    r.fn,
    r.input,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 3 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  for (const row of table) console.log(line(row));
  console.log(
    `\n${fns.length} functions × ${inputs.length} inputs in ${((performance.now() - started) / 1_000).toFixed(0)} s;` +
      ` 'baseline' is a realistic test log of the same size; >${timeout}: stopped at the timeout.`,
  );
}

if (isMainThread) await main();
else if ((workerData as { worker?: boolean } | null)?.worker) serve();
