/**
 * The `compactor` command as a user runs it: real Redis and Postgres, the real Anthropic SDK
 * against the fake Messages API server. Commands that only print and exit run in this process
 * through the CLI's own entry (`runCli`: same router, output and exit codes, and no connection left
 * open); what only a real process shows (the bin script's exit codes and streams, SIGTERM) runs as
 * child processes.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducer, jobIdOf, type Producer } from '../../producer/index.ts';
import { DEFAULT_SUMMARY_MODEL } from '../../worker/config/config.ts';
import { PostgresReads } from '../../worker/postgres/reads.ts';
import { runCli } from '../support/cli.ts';
import { REDIS_URL } from '../support/env.ts';
import { type FakeAnthropicHandle, FakeAnthropicServer } from '../support/fake-anthropic.ts';
import {
  CORPUS_DIR,
  cleanRedis,
  createTestDatabase,
  type TestDatabase,
  testPrefix,
  waitFor,
} from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';
import { killAllChildren, runCompactor, startCompactor } from '../support/processes.ts';

const SESSIONS = ['sweagent__ctf-rev-rock', 'openhands__runtime-basic_gui_mode', 'minisweagent__pvlib-1854'];

let tdb: TestDatabase;
let prefix: string;
let dir: string;
let fake: FakeAnthropicServer;
let fakeHandle: FakeAnthropicHandle;
let producer: Producer;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'warn',
    ...extra,
  };
}

const start = (args: string[], extra: Record<string, string> = {}) => startCompactor(args, env(extra));
const run = (args: string[], extra: Record<string, string> = {}) => runCli(args, env(extra));

beforeAll(async () => {
  tdb = await createTestDatabase();
  prefix = testPrefix();
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-cli-'));
  for (const s of SESSIONS) await copyFile(path.join(CORPUS_DIR, `${s}.jsonl`), path.join(dir, `${s}.jsonl`));
  fake = new FakeAnthropicServer();
  fakeHandle = await fake.start();
  producer = createProducer({ redisUrl: REDIS_URL, prefix });
});

afterAll(async () => {
  await killAllChildren();
  await producer?.close();
  await fakeHandle?.close();
  await cleanRedis(prefix);
  await tdb?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('compactor demo', () => {
  it('compacts every session once, loses nothing, and succeeds when run again', async () => {
    for (let i = 0; i < 2; i++) {
      const result = await run(['demo', dir]);
      expect(result.stderr).toContain('imported 3 sessions');
      expect(result.code, result.stdout + result.stderr).toBe(0);
      for (const s of SESSIONS) expect(result.stdout).toContain(s);
      expect(result.stdout).toMatch(
        /nothing lost: \d+ live \+ \d+ archived = (\d+) of \1 imported messages; all invariants hold/,
      );
      expect(result.stdout).not.toContain('CHECK FAILED');
      expect(result.stderr).not.toContain('\x1b'); // not a terminal: no progress bar
    }
  });
});

describe('compactor import, compact, history', () => {
  it('imports, previews without writing, compacts, and shows the ledger', async () => {
    const file = path.join(dir, 'sweagent__ctf-rev-rock.jsonl');
    const imported = await run(['import', file, '--tenant', 'cli', '--session', 'rock']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/imported rock: 37 messages/);

    const again = await run(['import', file, '--tenant', 'cli', '--session', 'rock']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('session "rock" already exists for tenant "cli"; not imported again');

    const dryRun = [
      'compact',
      '--tenant',
      'cli',
      '--session',
      'rock',
      '--strategy',
      'slidingWindow:10',
      '--dry-run',
    ];
    const preview = await run([...dryRun, '--json']);
    expect(preview.code, preview.stderr).toBe(0);
    const { plan, stays } = JSON.parse(preview.stdout);
    expect(plan.action).toBe('compact');
    expect(stays).toContainEqual({ seq: 0, reason: 'pinned' }); // the system prompt, pinned on import
    expect(plan.notes[0]).toContain('window: newest 10 messages stay');
    expect(plan.leavingSeqs.length).toBeGreaterThan(20);

    // For people: the leaving seqs as one range, not a line per seq.
    const readable = await run(dryRun);
    expect(readable.code, readable.stderr).toBe(0);
    expect(readable.stdout).toContain(`leaving  1-${plan.leavingSeqs.at(-1)}\n`);
    expect(readable.stdout).toContain('stays    0 (pinned)');
    expect(readable.stdout).toContain('why      window: newest 10 messages stay');
    expect(readable.stdout.trim().split('\n').length).toBeLessThan(10);

    const empty = await run(['history', '--tenant', 'cli', '--session', 'rock']);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toBe('session "rock" has no compactions yet\n');

    const compacted = await run([
      'compact',
      '--tenant',
      'cli',
      '--session',
      'rock',
      '--strategy',
      'slidingWindow:10',
    ]);
    expect(compacted.code, compacted.stderr).toBe(0);
    const row = JSON.parse(compacted.stdout);
    expect(row).toMatchObject({
      status: 'applied',
      messagesBefore: 37,
      messagesArchived: plan.leavingSeqs.length,
    });

    const history = await run(['history', '--tenant', 'cli', '--session', 'rock', '--json']);
    const lines = history.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0].id).toBe(row.id);

    const table = (await run(['history', '--tenant', 'cli', '--session', 'rock'])).stdout.trim().split('\n');
    expect(table[0]).toMatch(
      /^created \(UTC\)\s+id\s+status\s+trigger\s+strategy\s+messages\s+tokens\s+cost\s+reason$/,
    );
    expect(table).toHaveLength(3);
    expect(table[2]).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  ${row.id.slice(0, 8)}  applied  manual   slidingWindow +37→11 `,
      ),
    );
  });

  it('names the bad variable and stops when the environment is wrong', async () => {
    const result = await run(['history', '--tenant', 'x', '--session', 'y'], { REDIS_URL: 'localhost:6379' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('REDIS_URL: must be a URL starting with redis: or rediss:');
  });

  it('refuses bad usage with exit code 2', async () => {
    const result = await run(['compact', '--tenant', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('compactor compact: missing --session (see: compactor compact --help)\n');
    const strategy = await run([
      'compact',
      '--tenant',
      'x',
      '--session',
      'y',
      '--strategy',
      'slidingWindow:zero',
    ]);
    expect(strategy.code).toBe(2);
    expect(strategy.stderr).toContain('strategy');
  });
});

/** Usage mistakes and the one line each must print: [what, argv, line]. */
const USAGE_ERRORS: Array<[string, string[], string]> = [
  [
    'a mistyped command',
    ['histroy'],
    'compactor: unknown command "histroy"; did you mean "history"? (see: compactor --help)',
  ],
  ['an unknown command', ['frobnicate'], 'compactor: unknown command "frobnicate" (see: compactor --help)'],
  [
    'a mistyped option',
    ['history', '--tenant', 't', '--sesion', 's'],
    'compactor history: unknown option --sesion; did you mean --session? (see: compactor history --help)',
  ],
  [
    'a missing option',
    ['history', '--tenant', 't'],
    'compactor history: missing --session (see: compactor history --help)',
  ],
  [
    'an option without its value',
    ['history', '--tenant'],
    'compactor history: --tenant needs a value (see: compactor history --help)',
  ],
  [
    'a mistyped action',
    ['policy', 'delet', '--tenant', 't'],
    'compactor policy: unknown action "delet"; did you mean "delete"? (see: compactor policy --help)',
  ],
  [
    'a bad value',
    ['worker', '--concurrency', 'many'],
    'compactor worker: --concurrency must be a positive integer, got "many" (see: compactor worker --help)',
  ],
  [
    'a bad process count',
    ['worker', '--processes', 'many'],
    'compactor worker: --processes must be a positive integer or auto, got "many" (see: compactor worker --help)',
  ],
];

describe('compactor help and usage errors', () => {
  it('lists every command and environment variable in --help, and prints the version', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['demo', 'import', 'compact', 'history', 'restore', 'sweep', 'policy', 'sessions'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
    for (const variable of [
      'COMPACTOR_MAX_INPUT_TOKENS',
      'COMPACTOR_STALLED_INTERVAL_MS',
      'COMPACTOR_DB_POOL_SIZE',
    ])
      expect(help.stdout).toMatch(new RegExp(`^  ${variable} +\\S.*\\(`, 'm'));
    expect((await run(['help'])).stdout).toBe(help.stdout);

    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const printed = await run(['--version']);
    expect(printed).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it("prints one command's usage, options and an example for --help, without touching the database", async () => {
    for (const args of [
      ['history', '--help'],
      ['help', 'history'],
      ['history', '--tenant', 'x', '-h'],
    ]) {
      const result = await run(args, { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('usage: compactor history --tenant T --session S [--json]');
      expect(result.stdout).toMatch(/^ {2}--session S +session id \(required\)$/m);
      expect(result.stdout).toMatch(/^example/m);
      expect(result.stdout).toContain('  compactor history --tenant acme --session run-42');
    }
    const action = await run(['policy', 'delete', '--help']);
    expect(action.stdout).toContain('usage: compactor policy delete --tenant T [--agent A]');
  });

  it.each(USAGE_ERRORS)(
    'names the one wrong thing on one line and exits 2: %s',
    async (_what, args, line) => {
      const result = await run(args);
      expect(result).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
    },
  );
});

describe('compactor history, restore, sessions and policy for people', () => {
  it(
    'fits the ledger to the width, restores by the short id it shows, and keeps --json whole',
    async () => {
      const file = path.join(dir, 'sweagent__ctf-rev-rock.jsonl');
      expect((await run(['import', file, '--tenant', 'people', '--session', 'rock'])).code).toBe(0);
      const session = ['--tenant', 'people', '--session', 'rock'];
      expect((await run(['compact', ...session, '--strategy', 'slidingWindow:10'])).code).toBe(0);
      expect((await run(['compact', ...session, '--strategy', 'slidingWindow:50'])).code).toBe(0); // skipped

      const rows = await new PostgresReads(tdb.database.db).history('people', 'rock');
      const json = await run(['history', ...session, '--json']);
      expect(json.stdout).toBe(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));

      const wide = await run(['history', ...session]);
      expect(wide.stdout).toContain('11 messages, not more than the 50 kept'); // a pipe: nothing cut
      const narrow = await run(['history', ...session], { COLUMNS: '110' });
      const lines = narrow.stdout.trimEnd().split('\n');
      for (const line of lines) expect([...line].length).toBeLessThanOrEqual(110);
      expect(lines[3]).toMatch(/ skipped .*11 messages, not.*…$/);

      const shortId = (lines[2] as string).split(/\s+/)[2] as string;
      expect(shortId).toBe(rows[0]?.id.slice(0, 8));
      const restored = await run(['restore', ...session, '--compaction', shortId]);
      expect(restored.code, restored.stderr).toBe(0);
      expect(JSON.parse(restored.stdout)).toMatchObject({ status: 'restored', row: { id: rows[0]?.id } });
      const unknown = await run(['restore', ...session, '--compaction', '00000000']);
      expect(unknown).toMatchObject({ code: 1, stdout: '' });
      expect(unknown.stderr).toBe(
        'compactor restore: no compaction of session "rock" has an id starting with "00000000"\n',
      );
    },
    patient(60_000),
  ); // a dozen commands, each opening its own connections: slow on a loaded machine

  it("lists a tenant's sessions as a table, and as JSON lines", async () => {
    const imported = await run(['import', dir, '--tenant', 'listing']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toBe(''); // not a terminal: no progress bar
    expect(imported.stdout.trim().split('\n')).toHaveLength(SESSIONS.length);

    const table = await run(['sessions', 'list', '--tenant', 'listing']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^session\s+agent\s+messages\s+tokens\s+compactions\s+last compacted \(UTC\)\s+continued in$/,
    );
    expect(lines).toHaveLength(SESSIONS.length + 2);
    expect(lines[2]).toMatch(/^minisweagent__pvlib-1854\s+-\s+[\d,]+\s+[\d,]+\s+0\s+-\s+-$/);

    const limited = await run(['sessions', 'list', '--tenant', 'listing', '--limit', '1', '--json']);
    const items = limited.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      id: 'minisweagent__pvlib-1854',
      compactionCount: 0,
      childSessionId: null,
    });

    const none = await run(['sessions', 'list', '--tenant', 'nobody']);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'tenant "nobody" has no sessions\n' });
  });

  it("deletes an agent's policy, and refuses to delete one that is not there", async () => {
    const who = ['--tenant', 'pol', '--agent', 'triage'];
    const set = await run(['policy', 'set', ...who, '--policy', '{"strategy":{"type":"none"}}']);
    expect(set.code, set.stderr).toBe(0);
    const deleted = await run(['policy', 'delete', ...who]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(JSON.parse(deleted.stdout)).toMatchObject({
      tenantId: 'pol',
      agentId: 'triage',
      policy: { strategy: { type: 'none' } },
    });
    expect((await run(['policy', 'get', ...who])).code).toBe(1);
    const again = await run(['policy', 'delete', ...who]);
    expect(again).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'compactor policy delete: no policy for tenant "pol" agent "triage"; nothing deleted\n',
    });
  });
});

// The real processes, last: these two run side by side (their own tenants and commands), so their
// start-ups overlap.
describe.concurrent('the compactor process', () => {
  it('exits with the code main returns, results on stdout and errors on stderr', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const [printed, usage, failed] = await Promise.all([
      runCompactor(['--version'], env()),
      runCompactor(['histroy'], env()),
      runCompactor(['history', '--tenant', 'x', '--session', 'y'], env({ REDIS_URL: 'localhost:6379' })),
    ]);
    expect(printed).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(usage).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'compactor: unknown command "histroy"; did you mean "history"? (see: compactor --help)\n',
    });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain('REDIS_URL: must be a URL starting with redis: or rediss:');
  });
});

describe.concurrent('compactor worker', () => {
  it('summarizes with the anthropic summarizer and finishes the active job on SIGTERM', async () => {
    const file = path.join(dir, 'minisweagent__pvlib-1854.jsonl');
    expect((await run(['import', file, '--tenant', 'llm', '--session', 'pvlib'])).code).toBe(0);
    fake.enqueue({ delayMs: 1_500 });
    const worker = start(['worker', '--concurrency', '2'], {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fakeHandle.url,
    });
    const eventId = randomUUID();
    const requestsBefore = fake.requests.length;
    await producer.runCompleted({
      eventId,
      tenantId: 'llm',
      sessionId: 'pvlib',
      strategy: { type: 'summarize', keepRecent: 12 },
    });
    await waitFor(async () => fake.requests.length > requestsBefore, 20_000);
    worker.kill('SIGTERM');
    const exit = await worker.done;
    expect(exit.code, exit.stderr).toBe(0);
    expect(await producer.queue.getJobState(jobIdOf('llm', eventId))).toBe('completed');

    const [row] = await new PostgresReads(tdb.database.db).history('llm', 'pvlib');
    // No COMPACTOR_MODEL: the default model wrote the summary.
    expect(row).toMatchObject({ status: 'applied', summarizer: 'anthropic', model: DEFAULT_SUMMARY_MODEL });
    // The prompt is over 4,096 tokens, counted as plain input and as cache write together: the API
    // counts a prefix cached at a breakpoint the model's minimum allows as cache write instead.
    expect((row?.inputTokens ?? 0) + (row?.cacheWriteTokens ?? 0)).toBeGreaterThan(4_096);
    expect(row?.outputTokens).toBeGreaterThan(0);
    expect(row?.summary).toContain('Working set');
    const request = fake.requests[requestsBefore];
    expect(JSON.stringify(request?.body)).toContain('record_checkpoint');
  });
});
