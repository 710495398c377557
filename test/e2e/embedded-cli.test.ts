/**
 * `compactor demo --embedded` and `compactor dev --embedded` as a user runs them: child processes
 * of the real bin script on the embedded PostgreSQL (one folder, initialised once, shared by the
 * root tests), with the queue on this machine's Redis. Each run says in one line where its
 * database is, and when it ends (normally, on Ctrl-C, on SIGTERM) no PostgreSQL process of the
 * folder is left. The same demo with no Redis and no PostgreSQL at all is
 * demo-without-services.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asOrdinaryUser, openFolder, postgresProcessesOf, removeFolder } from '../support/embedded.ts';
import { REDIS_URL } from '../support/env.ts';
import { CORPUS_DIR, cleanRedis, testPrefix } from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';
import {
  BIN,
  type Child,
  childEnv,
  killAllChildren,
  runCompactor,
  startCompactor,
} from '../support/processes.ts';

const SESSIONS = ['sweagent__ctf-rev-rock', 'openhands__runtime-basic_gui_mode', 'minisweagent__pvlib-1854'];

let base: string;
let transcripts: string;
let cluster: string;
let prefix: string;
/** Children started around processes.ts (as another user): killed in afterAll if a test fails. */
const others = new Set<ChildProcess>();

/** What every run gets: the shared folder, this file's queue prefix, any free server ports. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    COMPACTOR_EMBEDDED_DIR: cluster,
    REDIS_URL,
    COMPACTOR_QUEUE_PREFIX: prefix,
    COMPACTOR_LOG_LEVEL: 'warn',
    COMPACTOR_API_PORT: '0',
    COMPACTOR_DASHBOARD_PORT: '0',
    ...extra,
  };
}

beforeAll(async () => {
  base = await openFolder('compactor-embedded-cli-');
  transcripts = path.join(base, 'transcripts');
  await mkdir(transcripts);
  for (const s of SESSIONS)
    await copyFile(path.join(CORPUS_DIR, `${s}.jsonl`), path.join(transcripts, `${s}.jsonl`));
  cluster = path.join(base, 'root', 'postgres');
  prefix = testPrefix();
});

afterAll(async () => {
  for (const child of others) child.kill('SIGKILL');
  await killAllChildren();
  await cleanRedis(prefix);
  await removeFolder(base);
});

/** Resolves with stdout once it holds `text` (or rejects when the child ends first). */
function printed(child: Child, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const { stdout } = child.output();
      if (stdout.includes(text)) {
        clearInterval(timer);
        resolve(stdout);
      }
    };
    const timer = setInterval(check, 50);
    child.done.then((run) => {
      clearInterval(timer);
      reject(new Error(`exited ${run.code} before printing "${text}": ${run.stderr}`));
    });
  });
}

/** The URLs and credentials `compactor dev` prints. */
function devOutput(stdout: string) {
  const api = /^api +(\S+)\/v1 +Authorization: Bearer (\S+)$/m.exec(stdout);
  const dashboard = /^dashboard +(\S+)\/ +user (\S+), password (\S+)$/m.exec(stdout);
  expect(api, stdout).not.toBeNull();
  expect(dashboard, stdout).not.toBeNull();
  return {
    api: api?.[1] as string,
    token: api?.[2] as string,
    dashboard: dashboard?.[1] as string,
    basic: `Basic ${Buffer.from(`${dashboard?.[2]}:${dashboard?.[3]}`).toString('base64')}`,
  };
}

describe('compactor demo --embedded', () => {
  it(
    'initialises the folder, compacts every session, loses nothing, and leaves no PostgreSQL running',
    async () => {
      const run = await runCompactor(['demo', '--embedded', transcripts], env());
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const lines = run.stderr.split('\n').filter((l) => l.includes('embedded PostgreSQL'));
      expect(lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^compactor demo: --embedded: initialised and started the embedded PostgreSQL in ${cluster} on 127\\.0\\.0\\.1:\\d+ as user postgres; queue backend postgres$`,
          ),
        ),
      ]);
      expect(run.stdout).toMatch(/^sessions: 3 {3}compacted: \d+ {3}skipped: \d+/m);
      expect(run.stdout).toMatch(
        /nothing lost: \d+ live \+ \d+ archived = (\d+) of \1 imported messages; all invariants hold/,
      );
      expect(run.stdout).not.toContain('CHECK FAILED');
      expect(postgresProcessesOf(cluster)).toEqual([]);

      const again = await runCompactor(['demo', '--embedded', transcripts], env());
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`: --embedded: started the embedded PostgreSQL in ${cluster}`);
      expect(postgresProcessesOf(cluster)).toEqual([]);
    },
    patient(120_000),
  ); // two whole demos as child processes: about 10 s alone, more beside other test files

  it(
    'stops the database when interrupted with Ctrl-C, exiting 130',
    async () => {
      const child = startCompactor(['demo', '--embedded', transcripts], env());
      await new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          if (child.output().stderr.includes('importing')) {
            clearInterval(timer);
            resolve();
          }
        }, 20);
      });
      child.kill('SIGINT');
      const run = await child.done;
      expect(run.code).toBe(130);
      expect(postgresProcessesOf(cluster)).toEqual([]);
    },
    patient(60_000),
  );
});

describe('compactor dev --embedded', () => {
  it(
    'serves the API and the dashboard with the credentials it prints, and stops everything on Ctrl-C',
    async () => {
      const child = startCompactor(['dev', '--embedded'], env());
      const urls = devOutput(await printed(child, 'Ctrl-C stops everything.'));
      expect(child.output().stderr).toMatch(
        /^compactor dev: --embedded: started the embedded PostgreSQL in /m,
      );
      expect(postgresProcessesOf(cluster)).toHaveLength(1);

      const context = `${urls.api}/v1/sessions/no-such-session/context`;
      expect((await fetch(context)).status).toBe(401);
      const authorized = await fetch(context, {
        headers: { authorization: `Bearer ${urls.token}`, 'compactor-tenant': 'acme' },
      });
      expect(authorized.status).toBe(404);
      expect((await fetch(`${urls.dashboard}/`)).status).toBe(401);
      expect((await fetch(`${urls.dashboard}/`, { headers: { authorization: urls.basic } })).status).toBe(
        200,
      );

      child.kill('SIGINT');
      const run = await child.done;
      expect(run.code, run.stderr).toBe(0);
      expect(postgresProcessesOf(cluster)).toEqual([]);
    },
    patient(60_000),
  );

  it(
    'runs as an ordinary user in a folder of its own, and stops everything on SIGTERM',
    async () => {
      const home = path.join(base, 'ordinary');
      await mkdir(home);
      const own = path.join(home, 'postgres');
      const [file, ...args] = asOrdinaryUser([process.execPath, BIN, 'dev', '--embedded', '--insecure']);
      const child = spawn(file as string, args, {
        cwd: home,
        env: childEnv({ ...env({ COMPACTOR_EMBEDDED_DIR: own }), HOME: home }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      others.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const deadline = Date.now() + patient(30_000);
      while (Date.now() < deadline && !stdout.includes('Ctrl-C stops everything.') && child.exitCode === null)
        await new Promise((r) => setTimeout(r, 50));
      expect(stdout, stderr).toContain('Ctrl-C stops everything.');
      expect(stderr).toContain(
        'compactor dev: --embedded: initialised and started the embedded PostgreSQL in postgres on',
      );
      expect(stderr).not.toContain(' as user ');
      const api = /^api +(\S+)\/v1 +no authentication/m.exec(stdout)?.[1];
      const answered = await fetch(`${api}/v1/sessions/no-such-session/context`, {
        headers: { 'compactor-tenant': 'acme' },
      });
      expect(answered.status).toBe(404);
      expect(postgresProcessesOf(own)).toHaveLength(1);

      child.kill('SIGTERM');
      expect(await exited, stderr).toBe(0);
      expect(postgresProcessesOf(own)).toEqual([]);
    },
    patient(60_000),
  );
});
