/**
 * Part 15 of `npm run bench`: how long the `compactor` command takes as a user runs it, from spawn
 * to exit, for the commands a user types most: `--version`, `--help`, and `history` and `context`
 * on a session of 500 messages (the corpus's 509-message mini-swe-agent run, imported first). The
 * CLI runs built (tsc, as the package's bin), each command {@link RUNS} times after one warm-up
 * run; reported: the median wall ms and the peak RSS of each, against the targets (0.3 s for
 * `--version` and `--help`, 0.8 s for `history` and `context`). Prints numbers; asserts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORPUS_DIR } from '../support/fixtures.ts';
import { buildCli } from './noisy-neighbor.ts';
import { fmt } from './report.ts';

/** Timed runs of each command (after one warm-up run). */
const RUNS = 5;
/** The session the read commands read: 509 messages. */
const SESSION_FILE = 'minisweagent__astroid-1333.jsonl';
const TENANT = 'bench-cli';
const SESSION = 'big';
const RSS_HOOK = fileURLToPath(new URL('./rss-on-exit.mjs', import.meta.url));

/** A section writer, as `Report.section`. */
type Section = (title: string, header: string[], rows: string[][], notes?: string[]) => void;

/** What one run of the CLI took: wall ms from spawn to exit, peak RSS kB. */
interface Timed {
  ms: number;
  rssKb: number;
}

/**
 * Runs `node <cli> <args>` with `env` to its end.
 * @throws when it exits otherwise than 0.
 */
async function timedRun(
  cli: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  rssFile: string,
): Promise<Timed> {
  const began = performance.now();
  const child = spawn(process.execPath, ['--import', RSS_HOOK, cli, ...args], {
    env: { ...env, BENCH_RSS_FILE: rssFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const ms = performance.now() - began;
  if (code !== 0) throw new Error(`compactor ${args.join(' ')} exited ${code}: ${stderr.slice(0, 500)}`);
  return { ms, rssKb: Number(await readFile(rssFile, 'utf8')) };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Runs part 15 against the migrated database at `url`. */
export async function cliStartup(url: string, section: Section): Promise<void> {
  const cli = await buildCli();
  const dir = await mkdtemp(path.join(tmpdir(), 'compactor-bench-cli-'));
  const env = { ...process.env, DATABASE_URL: url, COMPACTOR_LOG_LEVEL: 'warn' };
  const rssFile = path.join(dir, 'rss');
  try {
    const file = path.join(CORPUS_DIR, SESSION_FILE);
    await timedRun(cli, ['import', file, '--tenant', TENANT, '--session', SESSION], env, rssFile);
    const read = ['--tenant', TENANT, '--session', SESSION];
    const commands: Array<{ args: string[]; targetMs: number }> = [
      { args: ['--version'], targetMs: 300 },
      { args: ['--help'], targetMs: 300 },
      { args: ['history', ...read], targetMs: 800 },
      { args: ['context', ...read], targetMs: 800 },
    ];
    const rows: string[][] = [];
    for (const { args, targetMs } of commands) {
      await timedRun(cli, args, env, rssFile);
      const runs: Timed[] = [];
      for (let i = 0; i < RUNS; i++) runs.push(await timedRun(cli, args, env, rssFile));
      const ms = median(runs.map((r) => r.ms));
      rows.push([
        `compactor ${args.join(' ').replace(read.join(' '), '…')}`,
        fmt(ms, 0),
        `${fmt(targetMs, 0)} ms: ${ms <= targetMs ? 'met' : 'NOT met'}`,
        `${fmt(Math.max(...runs.map((r) => r.rssKb)) / 1024, 0)} MB`,
      ]);
    }
    section(
      '15. The command line: wall time from spawn to exit, median of 5',
      ['command', 'median ms', 'target', 'peak RSS'],
      rows,
      [
        `Built (tsc, as the package's bin), Node ${process.version}, one warm-up run before each command's ${RUNS}; history and context read a session of 509 messages (corpus/sessions/${SESSION_FILE}, imported first).`,
      ],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
