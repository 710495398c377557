/**
 * The README's first command on a machine with nothing but Node: `compactor demo` in a network
 * namespace of its own (`unshare -n`, loopback up), where nothing listens on any port — no
 * PostgreSQL, no Redis. It must find nothing on 127.0.0.1:5432, start the embedded PostgreSQL, run
 * its queues on it (COMPACTOR_QUEUE_BACKEND=postgres), compact every session, lose nothing, exit 0
 * and leave no PostgreSQL process behind.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asOrdinaryUser, openFolder, postgresProcessesOf, removeFolder } from '../support/embedded.ts';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { patient } from '../support/patience.ts';
import { BIN, killAllChildren, runCompactor } from '../support/processes.ts';

const SESSIONS = ['sweagent__ctf-rev-rock', 'openhands__runtime-basic_gui_mode', 'minisweagent__pvlib-1854'];

let base: string;
let transcripts: string;

beforeAll(async () => {
  base = await openFolder('compactor-no-services-');
  transcripts = path.join(base, 'transcripts');
  await mkdir(transcripts);
  for (const s of SESSIONS)
    await copyFile(path.join(CORPUS_DIR, `${s}.jsonl`), path.join(transcripts, `${s}.jsonl`));
});

afterAll(async () => {
  await killAllChildren();
  await removeFolder(base);
});

describe('compactor demo with no services at all', () => {
  it(
    'runs on the embedded PostgreSQL alone, loses nothing, exits 0 and leaves nothing running',
    async () => {
      const cluster = path.join(base, 'postgres');
      const run = await runCompactorInEmptyNetwork(['demo', transcripts], {
        COMPACTOR_EMBEDDED_DIR: cluster,
        COMPACTOR_LOG_LEVEL: 'warn',
      });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stderr).toMatch(
        /^compactor demo: no DATABASE_URL and nothing answers on 127\.0\.0\.1:5432: initialised and started the embedded PostgreSQL in .+ on 127\.0\.0\.1:\d+ as user postgres; queue backend postgres$/m,
      );
      expect(run.stdout).toMatch(/^sessions: 3 {3}compacted: \d+ {3}skipped: \d+/m);
      expect(run.stdout).toMatch(
        /nothing lost: \d+ live \+ \d+ archived = (\d+) of \1 imported messages; all invariants hold/,
      );
      expect(run.stdout).not.toContain('CHECK FAILED');
      expect(postgresProcessesOf(cluster)).toEqual([]);
    },
    patient(60_000),
  );

  it(
    'does the same as an ordinary user, PostgreSQL running as that user',
    async () => {
      const cluster = path.join(base, 'postgres-ordinary');
      const run = await runCompactorInEmptyNetwork(
        ['demo', transcripts],
        { COMPACTOR_EMBEDDED_DIR: cluster, COMPACTOR_LOG_LEVEL: 'warn' },
        true,
      );
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stderr).toMatch(
        /started the embedded PostgreSQL in .+ on 127\.0\.0\.1:\d+; queue backend postgres$/m,
      );
      expect(run.stderr).not.toContain(' as user ');
      expect(run.stdout).toMatch(
        /nothing lost: \d+ live \+ \d+ archived = (\d+) of \1 imported messages; all invariants hold/,
      );
      expect(postgresProcessesOf(cluster)).toEqual([]);
    },
    patient(60_000),
  );
});

/**
 * `compactor <args>` in a new network namespace with loopback up and nothing listening, with
 * DATABASE_URL, REDIS_URL and COMPACTOR_QUEUE_BACKEND unset (empty counts as unset); `ordinary`:
 * as an ordinary user (support/embedded.ts asOrdinaryUser).
 */
function runCompactorInEmptyNetwork(args: string[], env: Record<string, string>, ordinary = false) {
  const unset = { DATABASE_URL: '', REDIS_URL: '', COMPACTOR_QUEUE_BACKEND: '' };
  const namespace = ['unshare', '-n', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh'];
  const command = ordinary ? asOrdinaryUser([process.execPath, BIN]) : [process.execPath, BIN];
  return runCompactor(args, { ...unset, ...env }, [...namespace, ...command]);
}
