/**
 * The bounded heap of `compactor api`. V8 fixes its heap bound when the process starts (setting
 * `--max-old-space-size` later changes nothing), so `compactor api` started without one starts
 * itself again as a child process of the same Node with `--max-old-space-size=<COMPACTOR_API_MAX_HEAP_MB>`
 * and serves from there. The parent only relays: its output (the child writes to the same stdout
 * and stderr), SIGINT and SIGTERM (sent on to the child, which is in a process group of its own
 * so that a terminal's Ctrl-C reaches it once, through the parent), and the child's exit code. A
 * child whose parent dies (SIGKILL) closes as on SIGTERM: the IPC channel between them tells it.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import type { CommandIo } from './command.ts';

/** The Node flag that bounds V8's old space, MB. */
const HEAP_FLAG = '--max-old-space-size';

/**
 * Whether Node was started with its own old-space bound on the command line (`node
 * --max-old-space-size=N`): the child this module starts has one, and a user who gave one keeps it.
 * `NODE_OPTIONS` is not looked at: the child's command-line flag comes after it and wins.
 */
export function hasHeapFlag(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => arg === HEAP_FLAG || arg.startsWith(`${HEAP_FLAG}=`));
}

/** V8's heap bound of this process, MB: the old-space bound plus the young generation's (about 48 MB). */
export function heapLimitMb(): number {
  return Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
}

/**
 * The `compactor` entry to start again: beside this file's build, `dist/worker/bin/compactor.js`;
 * in a checkout run through tsx, `worker/bin/compactor-dev.js` (which registers tsx itself).
 */
function entryScript(): string {
  const here = import.meta.url;
  return fileURLToPath(
    new URL(here.endsWith('.ts') ? '../bin/compactor-dev.js' : '../bin/compactor.js', here),
  );
}

/** The child's command line: this Node, its flags, the heap bound, the entry, then `args`. */
export function relaunchArgv(heapMb: number, args: readonly string[], execArgv: readonly string[]): string[] {
  return [...execArgv, `${HEAP_FLAG}=${heapMb}`, entryScript(), ...args];
}

/**
 * Runs `compactor <args>` in a child process bounded to `heapMb` of old space, relaying its
 * output to `io` (the same file descriptors when `io` is this process's own), SIGINT and SIGTERM
 * to it, until it exits.
 * @returns its exit code; 128 + the signal's number when a signal ended it.
 * @throws {Error} when the child cannot be started.
 */
export function runWithHeapBound(
  heapMb: number,
  args: readonly string[],
  io: CommandIo,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const own = io.stdout === process.stdout && io.stderr === process.stderr;
  const child = spawn(process.execPath, relaunchArgv(heapMb, args, process.execArgv), {
    env,
    detached: true,
    stdio: ['ignore', own ? 'inherit' : 'pipe', own ? 'inherit' : 'pipe', 'ipc'],
  });
  child.stdout?.on('data', (chunk: Buffer) => io.stdout.write(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => io.stderr.write(chunk.toString()));
  const relay = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', relay).on('SIGTERM', relay);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      process.off('SIGINT', relay).off('SIGTERM', relay);
      reject(error);
    });
    child.once('close', (code, signal) => {
      process.off('SIGINT', relay).off('SIGTERM', relay);
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}

/**
 * In the child {@link runWithHeapBound} started: closes as on SIGTERM when the parent is gone (its
 * IPC channel disconnects), and lets the channel keep nothing alive. Does nothing elsewhere.
 */
export function followParent(): void {
  if (!process.channel) return;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
