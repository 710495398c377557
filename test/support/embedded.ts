/**
 * For the tests of the embedded PostgreSQL: folders its users can reach, the PostgreSQL processes
 * of a cluster folder, and a command line that runs a program as an ordinary user.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The uid and gid of `nobody` (Debian's nogroup), the ordinary user the tests run commands as. */
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

/** `command` run as {@link NOBODY} with no supplementary groups (util-linux's setpriv). */
export function asNobody(command: string[]): string[] {
  return ['setpriv', `--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups', ...command];
}
