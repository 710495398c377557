/**
 * What `compactor --version`, `--help` and a usage error load: a command line answers at once only
 * if these paths load none of what a run needs. Each runs as a child process with a module trace
 * (test/support/module-trace.mjs) and the test names every heavy package it finds loaded; how long
 * they take is `npm run bench -- --parts 15`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCompactor } from '../support/processes.ts';

const TRACE = fileURLToPath(new URL('../support/module-trace.mjs', import.meta.url));

/** Packages a run may need and none of these paths should: SDKs, servers, queues, databases, logging. */
const HEAVY = [
  'hono',
  '@hono/node-server',
  '@bull-board/api',
  'bullmq',
  'ioredis',
  'postgres',
  'drizzle-orm',
  'pino',
  '@anthropic-ai/sdk',
  'openai',
  '@opentelemetry/api',
  'prom-client',
  'piscina',
];

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-startup-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages under node_modules that `compactor <args>` resolved, and how it ended. */
async function packagesLoaded(args: string[], env: Record<string, string> = {}) {
  const file = path.join(dir, `${args.join('_').replace(/\W/g, '') || 'none'}.txt`);
  const run = await runCompactor(args, { ...env, MODULE_TRACE_FILE: file }, [
    process.execPath,
    '--import',
    TRACE,
    BIN,
  ]);
  const urls = (await readFile(file, 'utf8')).split('\n');
  const packages = new Set<string>();
  for (const url of urls) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (match?.[1]) packages.add(match[1]);
  }
  return { run, packages };
}

describe('the command line starts light', () => {
  it('answers --version without loading zod or any heavy package', async () => {
    const { run, packages } = await packagesLoaded(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect([...packages].filter((p) => HEAVY.includes(p) || p === 'zod')).toEqual([]);
  });

  it('prints --help, and a command’s --help, without loading zod or any heavy package', async () => {
    for (const args of [['--help'], ['compact', '--help'], ['key', '--help']]) {
      const { run, packages } = await packagesLoaded(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout).toContain('compactor');
      expect(
        [...packages].filter((p) => HEAVY.includes(p)),
        args.join(' '),
      ).toEqual([]);
    }
  });

  it('reports a usage error without loading what a run needs', async () => {
    const { run, packages } = await packagesLoaded(['histroy']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('did you mean "history"?');
    expect([...packages].filter((p) => HEAVY.includes(p) || p === 'zod')).toEqual([]);
  });

  it('still loads what a command needs when it runs (the trace sees packages)', async () => {
    // Nothing listens on port 1: the run fails, but only after loading its database layer.
    const { run, packages } = await packagesLoaded(['history', '--tenant', 't', '--session', 's'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/compactor',
    });
    expect(run.code).toBe(1);
    expect(packages.has('postgres')).toBe(true);
  });
});
