/**
 * For the tests of the embedded PostgreSQL: folders its users can reach, the PostgreSQL processes
 * of a cluster folder, and a command line that runs a program as an ordinary user.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The uid and gid of `nobody` (Debian's nogroup). */
export const NOBODY = { uid: 65534, gid: 65534 };

/**
 * A new folder under the system's temporary folder, open to every user (mkdtemp makes it 0700,
 * which the user PostgreSQL runs as under root could not enter).
 */
export async function openFolder(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  return dir;
}

/**
 * The pids of the processes whose command line names the cluster's data folder (`postgres -D
 * <dir>/data ...`) and whose parent's does not: its postmaster while it runs. (A process the
 * postmaster has just forked shows the same command line until it sets its own title; one left
 * without its postmaster is counted.)
 */
export function postgresProcessesOf(clusterDir: string): number[] {
  const data = path.join(clusterDir, 'data');
  const matching = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const words = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const at = words.indexOf('-D');
      if (at < 0 || words[at + 1] !== data) continue;
      const parent = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]);
      matching.set(Number(entry), parent);
    } catch {
      // gone meanwhile
    }
  }
  return [...matching].filter(([, parent]) => !matching.has(parent)).map(([pid]) => pid);
}

/**
 * Ends whatever a failed test left running in the cluster folders under `root` (SIGQUIT: immediate
 * shutdown), waits for it, and removes `root`.
 */
export async function removeFolder(root: string): Promise<void> {
  const clusters = existsSync(root)
    ? readdirSync(root, { recursive: true, withFileTypes: true })
        .filter((e) => e.isDirectory() && e.name === 'data')
        .map((e) => e.parentPath)
    : [];
  for (const dir of clusters) {
    for (const pid of postgresProcessesOf(dir)) process.kill(pid, 'SIGQUIT');
    for (let i = 0; i < 100 && postgresProcessesOf(dir).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
  }
  await rm(root, { recursive: true, force: true });
}

/** The uid of the ordinary user of the tests (see {@link asOrdinaryUser}). */
export const ORDINARY_UID = 1000;

/**
 * `command` as an ordinary user: in a user namespace of its own (util-linux's unshare), this
 * process's uid and gid mapped to {@link ORDINARY_UID}. The command sees itself as that user, not
 * root, so compactor runs PostgreSQL as itself, as it does for anyone but root; outside, its files
 * are still read as the tests' user, so the checkout may be anywhere, even under a folder only root
 * may enter (a real other user, such as nobody, could not load the sources there).
 */
export function asOrdinaryUser(command: string[]): string[] {
  return ['unshare', '--user', `--map-user=${ORDINARY_UID}`, `--map-group=${ORDINARY_UID}`, ...command];
}

/**
 * The uid process `pid` has in its own user namespace: its uid as seen here (/proc/<pid>/status),
 * mapped through its /proc/<pid>/uid_map (lines of inside, outside, count).
 */
export async function uidInItsNamespace(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const outside = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
  const map = await readFile(`/proc/${pid}/uid_map`, 'utf8');
  for (const line of map.trim().split('\n')) {
    const [inside, from, count] = line.trim().split(/\s+/).map(Number) as [number, number, number];
    if (outside >= from && outside < from + count) return inside + (outside - from);
  }
  return -1;
}
