/**
 * A long-running command takes SIGTERM from before it has started: a signal that arrives while the
 * worker is still migrating stops it once it has started, instead of being lost (the process would
 * then wait for a second signal that never comes). Run in a child process of its own, so the signals
 * are real ones and reach no test runner.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const SIGNALS = pathToFileURL(
  path.join(path.dirname(fileURLToPath(import.meta.url)), '../../worker/cli/signals.ts'),
).href;

/**
 * Runs a script whose start takes `startMs` and prints what happens; SIGTERM is sent `signalAtMs`
 * after the child says it began. Resolves with its exit code and the lines it printed.
 */
function runScript(startMs: number, signalAtMs: number): Promise<{ code: number | null; lines: string[] }> {
  const script = `
    const { startUntilSignal } = await import(${JSON.stringify(SIGNALS)});
    console.log('began');
    setInterval(() => {}, 1_000); // what a started worker's open sockets do: keep the process up
    const code = await startUntilSignal(
      async (starting) => {
        await new Promise((resolve) => setTimeout(resolve, ${startMs}));
        console.log('started; aborted=' + starting.aborted);
        return 'worker';
      },
      async (started, force) => console.log('stop ' + started + ' force=' + force),
    );
    console.log('exit ' + code);
    process.exit(code);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith('began\n') && !child.signalCode && signalAtMs >= 0) {
      const at = signalAtMs;
      signalAtMs = -1;
      setTimeout(() => child.kill('SIGTERM'), at);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise((resolve) => {
    child.once('close', (code) =>
      resolve({
        code,
        lines: out
          .trim()
          .split('\n')
          .concat(err ? [err] : []),
      }),
    );
  });
}

describe('startUntilSignal', () => {
  it('stops what it started when the signal came during the start', async () => {
    const { code, lines } = await runScript(1_500, 100);
    expect(lines).toEqual(['began', 'started; aborted=true', 'stop worker force=false', 'exit 0']);
    expect(code).toBe(0);
  });

  it('stops on a signal after the start, as before', async () => {
    const { code, lines } = await runScript(50, 1_000);
    expect(lines).toEqual(['began', 'started; aborted=false', 'stop worker force=false', 'exit 0']);
    expect(code).toBe(0);
  });
});
