/**
 * Runs the real `compactor` command as a child process, as a user or an orchestrator would, and
 * keeps track of the children so a test file can kill any it leaves behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { recordStart } from './patience.ts';

/** The `compactor` bin script. */
export const BIN = fileURLToPath(new URL('../../worker/bin/compactor-dev.js', import.meta.url));

/** What a finished child printed and how it ended. */
export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running child: its output so far and a promise of how it ends. */
export type Child = ChildProcess & { done: Promise<Run>; output(): { stdout: string; stderr: string } };

const children = new Set<ChildProcess>();

/**
 * The environment a `compactor` run gets: this process's environment without the Anthropic
 * variables (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, so no test reaches a real model by
 * accident), with Node's compile cache off (`NODE_DISABLE_COMPILE_CACHE`, so no test writes to the
 * user's cache folder; the compile-cache test sets its own), plus `env`.
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { ANTHROPIC_API_KEY: _k, ANTHROPIC_BASE_URL: _u, ...inherited } = process.env;
  return { ...inherited, NODE_DISABLE_COMPILE_CACHE: '1', ...env };
}

/**
 * Starts `compactor <args>` with `childEnv(env)`. `command` is what runs the bin script (default
 * `node BIN`): another program may come first, such as one that execs node in a namespace. The
 * time from spawn to the child's first output is recorded as a start (patience.ts).
 */
export function startCompactor(
  args: string[],
  env: Record<string, string>,
  command: string[] = [process.execPath, BIN],
): Child {
  const [file, ...before] = command;
  const child = spawn(file as string, [...before, ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  const began = performance.now();
  let spoke = false;
  const first = () => {
    if (spoke) return;
    spoke = true;
    recordStart(performance.now() - began);
  };
  child.stdout?.on('data', (d) => {
    first();
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    first();
    stderr += d;
  });
  const done = new Promise<Run>((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return Object.assign(child, { done, output: () => ({ stdout, stderr }) });
}

/** Runs `compactor <args>` to completion (`command` as {@link startCompactor}'s). */
export function runCompactor(args: string[], env: Record<string, string>, command?: string[]): Promise<Run> {
  return startCompactor(args, env, command).done;
}

/** SIGKILLs every child still running (for afterAll). */
export async function killAllChildren(): Promise<void> {
  const running = [...children];
  for (const child of running) child.kill('SIGKILL');
  await Promise.all(
    running.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('close', r)))),
  );
}
