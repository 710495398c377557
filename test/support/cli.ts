/**
 * Runs the `compactor` command line in this process, the way the bin script does (`main(argv)`),
 * with its output captured and its environment given: the same router, commands, exit codes and
 * printed lines as a child process, without paying Node's and tsx's start-up for every command.
 * What only a real process shows (signals, the bin script, the process exiting) stays with
 * `processes.ts`.
 */
import { main } from '../../worker/cli/cli.ts';
import type { Run } from './processes.ts';

/** Resource kinds that keep a process alive: what a command must have closed when it returns. */
const HANDLES = new Set(['TCPSocketWrap', 'TCPServerWrap', 'PipeWrap', 'Timeout', 'Immediate']);

function openHandles(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo())
    if (HANDLES.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** What `after` holds more of than `before`, as `kind ×n` words; empty when nothing. */
function grown(before: Map<string, number>, after: Map<string, number>): string {
  return [...after]
    .filter(([kind, n]) => n > (before.get(kind) ?? 0))
    .map(([kind, n]) => `${kind} ×${n - (before.get(kind) ?? 0)}`)
    .join(', ');
}

/**
 * Runs `compactor <args>` in-process with `env` (this process's environment without Anthropic
 * variables, plus `env`, as `startCompactor` gives a child) and resolves with its exit code and
 * what it wrote. As a real process would hang on a connection or timer left open, this rejects
 * when the command returns with more of them open than before it ran (once closing ones had up
 * to two seconds to finish). So a test file's own clients must have connected before it runs a
 * command (a producer: `await producer.queue.waitUntilReady()`), or their sockets count as the
 * command's.
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
  const before = openHandles();
  const code = await main(args, io, { ...inherited, ...env });
  const deadline = Date.now() + 2_000;
  let left = grown(before, openHandles());
  while (left && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = grown(before, openHandles());
  }
  if (left) throw new Error(`compactor ${args.join(' ')} returned with ${left} still open: ${stderr}`);
  return { code, signal: null, stdout, stderr };
}
