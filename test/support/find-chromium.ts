/**
 * Finds a Chromium for the browser tests, or installs Debian's where it can. playwright-core
 * downloads no browser of its own, so the tests drive one that is already on the machine:
 * `COMPACTOR_CHROMIUM` when set, else the first of the usual Debian/Ubuntu paths and `PATH` names.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/** What to do when no Chromium can be had: the one line the browser tests print. */
export const CHROMIUM_HINT =
  'browser tests need Chromium: `apt-get install chromium` (Debian/Ubuntu), or set COMPACTOR_CHROMIUM=/path/to/chrome';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const PATH_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium to drive, or null when none is installed.
 * @throws {Error} when `COMPACTOR_CHROMIUM` names a file that is not executable (a typo must not
 *   silently fall back to another browser).
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | null {
  const named = env.COMPACTOR_CHROMIUM;
  if (named) {
    if (!executable(named)) throw new Error(`COMPACTOR_CHROMIUM=${named} is not an executable file`);
    return named;
  }
  for (const file of CANDIDATES) if (executable(file)) return file;
  for (const name of PATH_NAMES) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const file = found.stdout.trim();
    if (found.status === 0 && file && executable(file)) return file;
  }
  return null;
}

/**
 * Installs Debian's `chromium` package when this process may (root, with apt-get), then looks
 * again. Prints one line before it starts, since it takes a minute.
 * @returns the installed Chromium, or null when it cannot be installed here.
 */
export function installChromium(log: (line: string) => void = console.log): string | null {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) return null;
  log("browser tests: installing Debian's chromium package with apt-get (once)");
  const apt = (args: string[]) =>
    execFileSync('apt-get', args, {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 600_000,
    });
  try {
    try {
      apt(['install', '-y', '--no-install-recommends', 'chromium']);
    } catch {
      apt(['update']);
      apt(['install', '-y', '--no-install-recommends', 'chromium']);
    }
  } catch {
    return null;
  }
  return findChromium();
}
