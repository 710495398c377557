/**
 * Runs the `compactor` command line in this process, the way the bin script does (`main(argv)`),
 * with its output captured and its environment given: the same router, commands, exit codes and
 * printed lines as a child process, without paying Node's and tsx's start-up for every command.
 * What only a real process shows (signals, the bin script, the process exiting) stays with
 * `processes.ts`.
 */
import { main } from '../../worker/cli/cli.ts';
import { trackHandles } from './handles.ts';
import { childEnv, type Run } from './processes.ts';

/**
 * Runs `compactor <args>` in-process with `childEnv(env)` (as `startCompactor` gives a child) and
 * resolves with its exit code and what it wrote. A real process does not exit while a connection,
 * server or timer it opened is still open; so this rejects when the command returns with one of its
 * own still open (after up to two seconds for closing ones to finish). What the test itself opened,
 * before or meanwhile, does not count.
 */
export async function runCli(args: string[], env: Record<string, string>): Promise<Run> {
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
  const { value: code, left } = await trackHandles(() => main(args, io, childEnv(env)));
  if (left) throw new Error(`compactor ${args.join(' ')} returned with ${left} still open: ${stderr}`);
  return { code, signal: null, stdout, stderr };
}
