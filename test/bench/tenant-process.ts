/**
 * Another tenant's client as a process of its own, for the bench parts that measure one tenant
 * while another floods or attacks (parts 10 and 12): a tsx script that writes a line when it has
 * started, and its result as JSON on its last line when it exits.
 *
 * In a deployment such a client runs on its own machines; here it shares two cores with the
 * service, so it runs at a lower CPU priority (`nice`), and what is measured is the service's
 * isolation rather than the bench host's.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';

/** A running client process. */
export interface TenantProcess<T> {
  /** Resolves once the script has written `readyLine` (or exited). */
  ready: Promise<void>;
  /** What the script wrote as JSON after `readyLine`, once it exits 0; rejects on another exit. */
  result: Promise<T>;
  /** Asks the script to stop (SIGTERM) and resolves to its result. */
  stop(): Promise<T>;
}

/**
 * Starts `script` (a URL of a .ts file) with `args` at CPU priority `nice`.
 * @param readyLine the line the script writes on stdout when it has started.
 * @param name what the process is called in an error (`the flood`).
 */
export function tenantProcess<T>(
  script: URL,
  args: string[],
  options: { nice: number; readyLine: string; name: string },
): TenantProcess<T> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.pid !== undefined) setPriority(child.pid, options.nice);
  let out = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (out.startsWith(`${options.readyLine}\n`)) markReady();
  });
  const result = new Promise<T>((resolve, reject) =>
    child.once('exit', (code) => {
      markReady();
      if (code !== 0) reject(new Error(`${options.name} exited ${code}`));
      else resolve(JSON.parse(out.slice(options.readyLine.length + 1)) as T);
    }),
  );
  return {
    ready,
    result,
    stop: () => {
      child.kill('SIGTERM');
      return result;
    },
  };
}
