/**
 * Every TypeScript, JavaScript, Python and shell example of the README and the docs runs, as a
 * reader would paste it, against real services: its own migrated database, Redis under its own
 * prefix, a worker and the HTTP API on them, and the fake Messages API for what calls a model.
 *
 * An example gets what a reader's shell would have, as environment variables: `DATABASE_URL`,
 * `REDIS_URL`, `COMPACTOR_QUEUE_PREFIX`, `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` (the fake),
 * `OPENAI_API_KEY` and `OPENAI_BASE_URL` (the strict fake Responses server, which passes Chat
 * Completions requests to the strict fake Chat Completions server), `OPENAI_AGENTS_DISABLE_TRACING`
 * (the OpenAI Agents SDK keeps its traces here),
 * `COMPACTOR_API_URL` and `COMPACTOR_API_TOKEN` (tenant `acme`'s token for the API), and
 * `compactor` on the PATH. TypeScript and JavaScript run with tsx from a folder of their own whose
 * tsconfig maps the package's names (`@agent-compactor/compactor`, `.../worker`, ...) to this
 * checkout's sources, entry by entry as package.json's `exports` lists them, and whose
 * node_modules is the repository's: an import the package does not export fails here as it
 * would for a user. Python runs with python3, shell with bash (`set -euo pipefail`). An example
 * passes when it exits 0 by itself: one that leaves a connection open never exits and times out.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProducer } from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { createApiApp } from '../../worker/http/api/index.ts';
import { type Listening, listen } from '../../worker/http/ops.ts';
import { startWorker } from '../../worker/queue/compaction/worker.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { type DocBlock, docBlocks, type Runner, runnerOf } from '../support/doc-examples.ts';
import { REDIS_URL } from '../support/env.ts';
import { FakeAnthropicServer } from '../support/fake-anthropic.ts';
import { FakeOpenAIChatServer } from '../support/fake-openai-chat.ts';
import { FakeOpenAIResponsesServer } from '../support/fake-openai-responses.ts';
import { cleanRedis, createTestDatabase, silentLogger, testConfig, testPrefix } from '../support/fixtures.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const COMPACTOR_BIN = path.join(ROOT, 'worker/bin/compactor-dev.js');
/**
 * How long an example may run before it is killed, ms: only a net for one that never exits (a
 * connection left open). A shell example starts `compactor` several times, each a Node process
 * loading the sources through tsx, which takes seconds on a busy two-core machine.
 */
const EXAMPLE_TIMEOUT_MS = 180_000;
/** The tenant the examples act as, and its token for the API. */
const TENANT = 'acme';

const blocks = docBlocks(ROOT);
const examples = blocks.filter((b) => runnerOf(b) !== undefined && b.notRun === undefined);
const named = (b: DocBlock) => `${b.file}:${b.line} (${b.language})`;

/**
 * tsconfig `paths` naming each entry of package.json's `exports` as its source file
 * (`./dist/producer/index.js` → `producer/index.ts`), so an example imports the package by name.
 */
function packagePaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { default: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [entry, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'string' ? target : target.default;
    const source = file.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts');
    paths[`${pkg.name}${entry.slice(1)}`] = [path.join(ROOT, source)];
  }
  return paths;
}

/**
 * The folder examples run in, an ESM project as the package expects: package.json, node_modules,
 * the tsconfig, and `compactor` in bin/.
 */
function makeSandbox(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'compactor-examples-'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    allowImportingTsExtensions: true,
    paths: packagePaths(),
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions }, null, 2));
  mkdirSync(path.join(dir, 'bin'));
  const shim = path.join(dir, 'bin', 'compactor');
  writeFileSync(shim, `#!/bin/sh\nexec node ${JSON.stringify(COMPACTOR_BIN)} "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

/** The services one example runs against; `close` removes them and what the example left. */
async function servicesFor(llmUrl: string) {
  const tdb = await createTestDatabase();
  const prefix = testPrefix();
  const config = testConfig(tdb.url, prefix);
  const services = openServices(config, silentLogger, {
    summarizers: { primary: createExtractiveSummarizer() },
    poolSize: 3,
  });
  const worker = startWorker(services, { concurrency: 2 });
  const producer = createProducer({ redisUrl: REDIS_URL, prefix, db: tdb.database.db });
  const token = `tok_${randomBytes(16).toString('hex')}`;
  const app = createApiApp(
    { db: tdb.database.db, producer },
    {
      credentials: {
        adminToken: undefined,
        adminUser: undefined,
        adminPassword: undefined,
        tenantTokens: [{ tenantId: TENANT, token }],
      },
    },
  );
  const api: Listening = await listen(app, 0, '127.0.0.1');
  const env: Record<string, string> = {
    DATABASE_URL: tdb.url,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'warn',
    ANTHROPIC_API_KEY: 'sk-ant-example',
    ANTHROPIC_BASE_URL: llmUrl,
    OPENAI_API_KEY: 'sk-example',
    OPENAI_BASE_URL: openaiUrl,
    COMPACTOR_API_URL: api.url,
    COMPACTOR_API_TOKEN: token,
    // The OpenAI Agents SDK sends its traces to OpenAI at exit, which this machine cannot reach.
    OPENAI_AGENTS_DISABLE_TRACING: '1',
  };
  return {
    env,
    async close() {
      const steps = [
        () => api.close(),
        () => worker.close(),
        () => services.close(),
        () => producer.close(),
        () => cleanRedis(prefix),
        () => tdb.drop(),
      ];
      for (const step of steps) await step();
    },
  };
}

/** The file an example is written to, and the command that runs it. */
const COMMANDS: Record<Runner, { file: string; command: (file: string) => [string, string[]] }> = {
  typescript: { file: 'example.ts', command: (file) => [TSX, [file]] },
  javascript: { file: 'example.mjs', command: (file) => [TSX, [file]] },
  python: { file: 'example.py', command: (file) => ['python3', [file]] },
  shell: { file: 'example.sh', command: (file) => ['bash', ['-euo', 'pipefail', file]] },
};

/**
 * Runs one example in `sandbox` with `env` over `base` (default: this process's environment);
 * resolves with its exit code and output.
 */
function run(
  block: DocBlock,
  sandbox: string,
  env: Record<string, string>,
  base: NodeJS.ProcessEnv = process.env,
) {
  const runner = runnerOf(block) as Runner;
  const dir = mkdtempSync(path.join(sandbox, 'run-'));
  // The run folder sits beside the sandbox's tsconfig and node_modules, which it finds by walking up.
  const file = path.join(dir, COMMANDS[runner].file);
  writeFileSync(file, block.code);
  const [command, args] = COMMANDS[runner].command(file);
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: sandbox,
        env: { ...base, ...env, PATH: `${path.join(sandbox, 'bin')}:${process.env.PATH ?? ''}` },
        timeout: EXAMPLE_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, output: `${stdout}${stderr}${error?.killed ? '\n(killed: it did not exit)' : ''}` });
      },
    );
  });
}

let fake: FakeAnthropicServer;
let llmUrl: string;
const chat = new FakeOpenAIChatServer();
const openai = new FakeOpenAIResponsesServer((req, res) => chat.handle(req, res));
let openaiUrl: string;
let sandbox: string;

beforeAll(async () => {
  fake = new FakeAnthropicServer();
  // An agent's turn, for the examples that call the model; summaries here are the extractive ones.
  fake.defaultBehaviour = { reply: { text: 'The parser now strips whitespace; the tests pass.' } };
  llmUrl = (await fake.start()).url;
  openaiUrl = await openai.start();
  sandbox = makeSandbox();
});

afterAll(async () => {
  await fake?.close();
  await openai.close();
  if (sandbox) rmSync(sandbox, { recursive: true, force: true });
});

describe('the fenced blocks of the README and the docs', () => {
  it('each names its language, so none is an example by accident', () => {
    const unnamed = blocks.filter((b) => b.language === '').map(named);
    expect(unnamed).toEqual([]);
  });

  it('are examples that run, but for a few that say why not', () => {
    const notRun = blocks.filter((b) => runnerOf(b) !== undefined && b.notRun !== undefined);
    expect(examples.length).toBeGreaterThan(10);
    // Eight: the Claude Agent SDK's wiring starts Claude Code, a binary whose requests the docs'
    // fake model cannot script (its e2e test runs the same wiring against a scripted strict fake).
    expect(notRun.length).toBeLessThanOrEqual(8);
    for (const block of notRun) expect(block.notRun?.length, named(block)).toBeGreaterThan(8);
  });

  it('include the README integration, which closes what it opens', () => {
    const readme = examples.filter((b) => b.file === 'README.md' && runnerOf(b) === 'typescript');
    expect(readme.length).toBe(1);
    expect(readme[0]?.code).toMatch(/from '@agent-compactor\/compactor'/);
    expect(readme[0]?.code).toMatch(/\.close\(\)/);
  });
});

/** Examples running at once (see {@link inSlot}). */
const SLOTS = 2;
let busy = 0;
const queued: Array<() => void> = [];

/**
 * Runs `fn` when one of {@link SLOTS} is free. Examples run two at a time: each waits on process
 * start-up and its services more than it computes, and each has its own database, prefix and run
 * folder; more at once would only share out the same two cores.
 */
async function inSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (busy >= SLOTS) await new Promise<void>((resolve) => queued.push(resolve));
  busy++;
  try {
    return await fn();
  } finally {
    busy--;
    queued.shift()?.();
  }
}

describe('each example', { concurrent: true }, () => {
  it.each(examples.map((b) => [named(b), b] as const))(
    '%s runs and exits 0',
    async (_name, block) => {
      const { code, output } = await inSlot(async () => {
        const services = await servicesFor(llmUrl);
        try {
          return await run(block, sandbox, services.env);
        } finally {
          await services.close();
        }
      });
      expect(code, output).toBe(0);
    },
    // Waiting for a slot counts too: at most every other example ahead of this one.
    (EXAMPLE_TIMEOUT_MS + 30_000) * Math.ceil(examples.length / SLOTS),
  );
});

/**
 * This process's environment without what names a queue or compactor's settings: what a shell
 * that never set them has (no `REDIS_URL`, no `COMPACTOR_*`).
 */
function defaultEnvironment(): NodeJS.ProcessEnv {
  const names = /^(REDIS_URL|DATABASE_URL|COMPACTOR_|TEST_|ANTHROPIC_|OPENAI_)/;
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !names.test(name)));
}

/** Starts `compactor worker` with `env`; resolves once it logged that it started. */
async function startCliWorker(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(process.execPath, [COMPACTOR_BIN, 'worker', '--concurrency', '1'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('"worker started"')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`compactor worker exited ${code} before starting:\n${log}`)),
    );
  });
  return { child, log: () => log };
}

describe('the README turn, beside `compactor worker` started with the default environment', () => {
  it(
    'enqueues where that worker listens, and the worker records its event in the ledger',
    async () => {
      const readme = examples.find((b) => b.file === 'README.md' && runnerOf(b) === 'typescript') as DocBlock;
      const tdb = await createTestDatabase();
      const base = defaultEnvironment();
      // The worker gets the database and nothing that names a queue: it listens on Postgres.
      const worker = await startCliWorker({ ...base, DATABASE_URL: tdb.url, COMPACTOR_LOG_LEVEL: 'info' });
      try {
        expect(worker.log()).toMatch(/"queueBackend":"postgres"/);
        const { code, output } = await run(
          readme,
          sandbox,
          { DATABASE_URL: tdb.url, ANTHROPIC_API_KEY: 'sk-ant-example', ANTHROPIC_BASE_URL: llmUrl },
          base,
        );
        expect(code, output).toBe(0);
        expect(output).not.toMatch(/queue mismatch/);
        const sessionId = /session (\S+): /.exec(output)?.[1] as string;
        expect(sessionId, output).toBeDefined();
        // The worker takes the job from the Postgres queue and writes the event's ledger row.
        let rows: Array<{ trigger: string; status: string }> = [];
        while (rows.length === 0 && worker.child.exitCode === null) {
          rows = await tdb.database.sql<{ trigger: string; status: string }[]>`
          select trigger, status from compactions where tenant_id = 'acme' and session_id = ${sessionId}`;
          if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 250));
        }
        expect(rows, worker.log()).toEqual([{ trigger: 'event', status: expect.any(String) }]);
      } finally {
        const exited = new Promise((resolve) => worker.child.once('exit', resolve));
        worker.child.kill('SIGTERM');
        await exited;
        await tdb.drop();
      }
    },
    EXAMPLE_TIMEOUT_MS * 2,
  );
});
