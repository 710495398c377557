/**
 * The package as a user installs it: `npm pack`, the tarball installed into an empty project, the
 * client imported with plain `node` (ESM and CommonJS `require`), a consumer type-checked with
 * `tsc`, the client's installed size reported; then the worker's peer dependencies added and the
 * built `compactor` binary migrating a database.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_DATABASE_URL, databaseUrlFor, REDIS_URL } from '../support/env.ts';
import { cleanRedis, testPrefix } from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  peerDependencies: Record<string, string>;
};
const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

let work: string;
let project: string;
let tarball: string;
let packed: string[];
const prefix = testPrefix();
const database = `compactor_pkg_${randomBytes(5).toString('hex')}`;
const admin = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });

/** The version of `name` this checkout installed, so the consumer gets the same from the cache. */
async function installedVersion(name: string): Promise<string> {
  const text = await readFile(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Runs `node <file>` in the consumer project. */
async function node(file: string, env: Record<string, string> = {}) {
  return run(process.execPath, [file], { cwd: project, env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(full);
    else if (entry.isFile()) total += (await stat(full)).size;
  }
  return total;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'compactor-pack-'));
  // `npm pack` runs the `prepare` build first, so the tarball holds what the sources build to now.
  const out = JSON.parse(await npm(['pack', '--json', '--pack-destination', work], ROOT)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const [info] = out;
  if (!info) throw new Error('npm pack printed nothing');
  tarball = path.join(work, info.filename);
  packed = info.files.map((f) => f.path);
  project = path.join(work, 'consumer');
  await run('mkdir', ['-p', project]);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await npm(['install', ...NPM_FLAGS, tarball], project);
  await admin.unsafe(`create database "${database}"`);
}, patient(300_000));

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
  await admin.unsafe(`drop database if exists "${database}" with (force)`);
  await admin.end();
  await cleanRedis(prefix);
});

describe('the packed tarball', () => {
  it('ships the build, the migrations, the README and the licence, and no tests or sources', () => {
    expect(packed).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'LICENSE',
        'dist/producer/index.js',
        'dist/producer/index.d.ts',
        'dist/worker/index.js',
        'dist/worker/bin/compactor.js',
        'dist/worker/http/dashboard/index.js',
        'dist/producer/postgres/schema.js',
        'dist/worker/http/api/index.js',
        'shared/contract/schemas/run-completed.schema.json',
        'drizzle/0000_init.sql',
        'drizzle/meta/_journal.json',
      ]),
    );
    const stray = packed.filter(
      (f) =>
        f.startsWith('test/') ||
        f.startsWith('corpus/') ||
        (f.startsWith('shared/') && !f.endsWith('.schema.json')) ||
        (f.endsWith('.ts') && !f.endsWith('.d.ts')),
    );
    expect(stray).toEqual([]);
  });
});

describe('the client, installed alone', () => {
  it('brings only the dependencies the client needs, and reports its installed size', async () => {
    const modules = path.join(project, 'node_modules');
    for (const worker of Object.keys(pkg.peerDependencies)) {
      await expect(stat(path.join(modules, worker)), `${worker} should not be installed`).rejects.toThrow();
    }
    const bytes = await sizeOf(modules);
    const own = await sizeOf(path.join(modules, ...pkg.name.split('/')));
    console.log(
      `client install: ${(bytes / 1e6).toFixed(1)} MB in node_modules (the package itself ${(own / 1e6).toFixed(1)} MB)`,
    );
    expect(bytes).toBeGreaterThan(own);
  });

  it('imports with plain node as ESM, and enqueues an event on a real Redis', async () => {
    const eventId = randomUUID();
    await writeFile(
      path.join(project, 'enqueue.mjs'),
      `import { createProducer, parseRunCompleted } from '${pkg.name}';
import { sessions } from '${pkg.name}/schema';
const producer = createProducer({ redisUrl: process.env.REDIS_URL, prefix: process.env.PREFIX });
const result = await producer.runCompleted({ eventId: '${eventId}', tenantId: 't', sessionId: 's' });
await producer.close();
let refused = '';
try { parseRunCompleted({ tenantId: '' }); } catch (e) { refused = e.name; }
console.log(JSON.stringify({ result, refused, table: sessions[Symbol.for('drizzle:Name')] }));
`,
    );
    const out = await node('enqueue.mjs', { REDIS_URL, PREFIX: prefix });
    expect(out.stderr).toBe('');
    expect(JSON.parse(out.stdout)).toEqual({
      result: { jobId: `t~${eventId}`, coalesced: false },
      refused: 'InvalidInputError',
      table: 'sessions',
    });
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.exists(`${prefix}:compaction:t~${eventId}`)).toBe(1);
    } finally {
      await redis.quit();
    }
  });

  it('loads with require() from CommonJS', async () => {
    await writeFile(
      path.join(project, 'require.cjs'),
      `const compactor = require('${pkg.name}');
const event = compactor.parseRunCompleted({ eventId: 'e-1', tenantId: 't', sessionId: 's' });
console.log(typeof compactor.createProducer, typeof compactor.loadContext, event.trigger);
`,
    );
    const out = await node('require.cjs');
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe('function function event');
  });

  it(
    'type-checks a consumer with tsc, and its types catch a wrong call',
    async () => {
      await npm(
        [
          'install',
          ...NPM_FLAGS,
          `@types/node@${await installedVersion('@types/node')}`,
          `@anthropic-ai/sdk@${await installedVersion('@anthropic-ai/sdk')}`,
        ],
        project,
      );
      await writeFile(
        path.join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: true,
            noEmit: true,
            types: ['node'],
          },
          include: ['*.ts'],
        }),
      );
      await writeFile(
        path.join(project, 'agent.ts'),
        `import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { appendMessages, createProducer, type LoadedContext, loadContext, openDatabase } from '${pkg.name}';

export async function turn(url: string, redisUrl: string, reply: MessageParam): Promise<LoadedContext> {
  const { db } = openDatabase(url, { schema: 'compactor' });
  await appendMessages(db, 't', 's', [reply]);
  const producer = createProducer({ redisUrl, prefix: 'compactor' });
  const outcome = await producer.compactNow({ tenantId: 't', sessionId: 's' }, { timeoutMs: 5_000 });
  if (outcome.state === 'settled') console.log(outcome.result);
  // @ts-expect-error a Redis URL is a string: the types say so.
  createProducer({ redisUrl: 6379, prefix: 'compactor' });
  return loadContext(db, { tenantId: 't', sessionId: 's' });
}
`,
      );
      const checked = await run(process.execPath, [TSC, '-p', project]).then(
        () => '',
        (e: { stdout: string }) => e.stdout,
      );
      expect(checked).toBe('');
    },
    patient(120_000),
  );
});

describe('the worker, with its peer dependencies', () => {
  it(
    'the built binary says what to install, then migrates a database once they are there',
    async () => {
      const bin = path.join(project, 'node_modules', '.bin', 'compactor');
      const env = {
        ...process.env,
        DATABASE_URL: databaseUrlFor(database),
        COMPACTOR_SCHEMA: 'agent_memory',
      };
      const before = await run(bin, ['migrate'], { cwd: project, env }).then(
        () => '',
        (e: { stderr: string }) => e.stderr,
      );
      expect(before).toContain('npm install @anthropic-ai/sdk');

      const peers = await Promise.all(
        Object.keys(pkg.peerDependencies).map(async (p) => `${p}@${await installedVersion(p)}`),
      );
      await npm(['install', ...NPM_FLAGS, ...peers], project);
      const version = await run(bin, ['--version'], { cwd: project, env });
      expect(version.stdout.trim()).toBe(pkg.version);
      const migrated = await run(bin, ['migrate'], { cwd: project, env });
      expect(migrated.stdout).toMatch(/^applied \d+ migrations to schema "agent_memory"/);

      await writeFile(
        path.join(project, 'worker.mjs'),
        `import { migrateDatabase, startWorker } from '${pkg.name}/worker';
import { createDashboardApp } from '${pkg.name}/dashboard';
import { createApiApp } from '${pkg.name}/api';
import { createRequire } from 'node:module';
const eventSchema = createRequire(import.meta.url)('${pkg.name}/schemas/run-completed.schema.json');
const report = await migrateDatabase(process.env.DATABASE_URL, { schema: 'agent_memory' });
console.log(typeof startWorker, typeof createDashboardApp, typeof createApiApp, eventSchema.required.includes('eventId'), report.applied);
`,
      );
      const out = await node('worker.mjs', { DATABASE_URL: databaseUrlFor(database) });
      expect(out.stdout.trim()).toBe('function function function true 0');
    },
    patient(180_000),
  );
});
