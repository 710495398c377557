/**
 * Runs the `compactor` command line in this process, the way the bin script does (`main(argv)`),
 * with its output captured and its environment given: the same router, commands, exit codes and
 * printed lines as a child process, without paying Node's and tsx's start-up for every command.
 * What only a real process shows (signals, the bin script, the process exiting) stays with
 * `processes.ts`.
 */
import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { main } from '../../worker/cli/cli.ts';
import type { Run } from './processes.ts';

/** Async resource types that keep a process alive while open and referenced. */
const HANDLES = new Set(['TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'Timeout', 'Immediate']);

interface Opened {
  type: string;
  resource: { hasRef?: () => boolean };
}

/** The resources each running command opened and has not closed yet, by async id. */
const running = new AsyncLocalStorage<Map<number, Opened>>();
const owners = new Map<number, Map<number, Opened>>();
let runs = 0;
const hook = createHook({
  init(id, type, _trigger, resource) {
    const opened = running.getStore();
    if (!opened || !HANDLES.has(type)) return;
    opened.set(id, { type, resource: resource as Opened['resource'] });
    owners.set(id, opened);
  },
  destroy(id) {
    owners.get(id)?.delete(id);
    owners.delete(id);
  },
});

/** The still-open resources of `opened` that would keep a process alive, as `type ×n` words. */
function keepingAlive(opened: Map<number, Opened>): string {
  const counts = new Map<string, number>();
  for (const { type, resource } of opened.values())
    if (resource.hasRef?.() ?? true) counts.set(type, (counts.get(type) ?? 0) + 1);
  return [...counts].map(([type, n]) => `${type} ×${n}`).join(', ');
}

/**
 * Runs `compactor <args>` in-process with `env` (this process's environment without Anthropic
 * variables, plus `env`, as `startCompactor` gives a child) and resolves with its exit code and
 * what it wrote. A real process does not exit while a connection, server or timer it opened is
 * still open; so this rejects when the command returns with one of its own still open (after up to
 * two seconds for closing ones to finish). What the test itself opened, before or meanwhile, does
 * not count.
 */
export async function runCli(args: string[], env: Record<string, string>): Promise<Run> {
  const { ANTHROPIC_API_KEY: _k, ANTHROPIC_BASE_URL: _u, ...inherited } = process.env;
  let stdout = '';
  let stderr = '';
  const io = {
    stdout: {
      write: (text: string) => {
        stdout += text;
        return true;
      },
    },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
    },
  };
  const opened = new Map<number, Opened>();
  if (runs++ === 0) hook.enable();
  try {
    const code = await running.run(opened, () => main(args, io, { ...inherited, ...env }));
    const deadline = Date.now() + 2_000;
    let left = keepingAlive(opened);
    while (left && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      left = keepingAlive(opened);
    }
    if (left) throw new Error(`compactor ${args.join(' ')} returned with ${left} still open: ${stderr}`);
    return { code, signal: null, stdout, stderr };
  } finally {
    for (const id of opened.keys()) owners.delete(id);
    if (--runs === 0) hook.disable();
  }
}
