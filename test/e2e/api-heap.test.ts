/**
 * `compactor api` serves under a bounded V8 heap, as a user runs it: the real bin script as a child
 * process. Started without `--max-old-space-size`, it serves from a child of its own started with
 * `--max-old-space-size=COMPACTOR_API_MAX_HEAP_MB`; the line "api listening" gives that process's
 * pid and its heap bound, /proc shows the flag, and SIGTERM (or the parent's death) stops it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { patient } from '../support/patience.ts';
import { type Child, killAllChildren, startCompactor } from '../support/processes.ts';

const ctx = useIntegration();
afterAll(killAllChildren);

interface Listening {
  pid: number;
  url: string;
  heapLimitMb: number;
}

/** Resolves with the "api listening" log line once the child writes it; rejects if it exits first. */
function listening(child: Child): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = child
        .output()
        .stderr.split('\n')
        .find((l) => l.includes('"msg":"api listening"'));
      if (!line) return;
      child.stderr?.off('data', check);
      resolve(JSON.parse(line) as Listening);
    };
    child.stderr?.on('data', check);
    check();
    child.done.then((run) => reject(new Error(`exited ${run.code} before listening: ${run.stderr}`)));
  });
}

/** `compactor api` on this file's database, on a free port, logging at info. */
function startApi(env: Record<string, string> = {}): Child {
  return startCompactor(['api', '--port', '0'], {
    ...ctx.cliEnv,
    COMPACTOR_DASHBOARD_TOKEN: 'api-heap-test-token-7c3e9a1f',
    COMPACTOR_LOG_LEVEL: 'info',
    ...env,
  });
}

/** Whether a process runs (a zombie, ended and not yet reaped, does not). */
function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** The command line of a process, its arguments split. */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
}

describe('compactor api and its heap', () => {
  it(
    'serves from a process bounded to COMPACTOR_API_MAX_HEAP_MB, and stops it on SIGTERM',
    async () => {
      const parent = startApi({ COMPACTOR_API_MAX_HEAP_MB: '160' });
      const served = await listening(parent);
      expect(served.pid).not.toBe(parent.pid);
      expect(commandLine(served.pid)).toContain('--max-old-space-size=160');
      // V8's bound is the old space's plus the young generation's.
      expect(served.heapLimitMb).toBeGreaterThanOrEqual(160);
      // The young generation's share depends on the Node line (about 50 MB on 22, 96 MB on 24).
      expect(served.heapLimitMb).toBeLessThan(256 + 128);
      expect((await fetch(`${served.url}/v1`)).status).toBe(200);

      parent.kill('SIGTERM');
      const run = await parent.done;
      expect(run.code, run.stderr).toBe(0);
      expect(alive(served.pid)).toBe(false);
    },
    patient(240_000),
  ); // two Node processes start, each slow on a busy machine

  it(
    'with COMPACTOR_API_MAX_HEAP_MB=0, leaves Node its own bound and serves in the process itself',
    async () => {
      const unbounded = startApi({ COMPACTOR_API_MAX_HEAP_MB: '0' });
      const itself = await listening(unbounded);
      expect(itself.pid).toBe(unbounded.pid);
      expect(commandLine(itself.pid).some((arg) => arg.startsWith('--max-old-space-size'))).toBe(false);
      unbounded.kill('SIGTERM');
      const run = await unbounded.done;
      expect(run.code, `${run.signal}: ${run.stderr}`).toBe(0);
    },
    patient(240_000),
  );

  it(
    'closes the serving process when its parent is killed',
    async () => {
      const parent = startApi({ COMPACTOR_API_MAX_HEAP_MB: '128' });
      const served = await listening(parent);
      parent.kill('SIGKILL');
      await parent.done;
      await waitFor(async () => !alive(served.pid), 60_000);
    },
    patient(240_000),
  ); // two Node processes start, each slow on a busy machine
});
