/** How the long-running commands (`worker`, `dashboard`) stop on SIGTERM/SIGINT. */

/**
 * Resolves with exit code 0 after the first SIGTERM/SIGINT has run `stop(false)` (graceful), or 1
 * if that throws; a second signal runs `stop(true)` and exits 1 at once, leaving unfinished jobs to
 * stall and be recovered by another worker.
 *
 * `repeat: 'ignore'` is for a worker process of `compactor worker --processes N`: it may receive the
 * same stop twice (Ctrl-C signals the whole process group, and the primary forwards it too), so a
 * repeat does not force; the primary forces by ending the process (SIGKILL) on its own second signal.
 */
export function waitForSignals(
  stop: (force: boolean) => Promise<void>,
  options: { repeat?: 'force' | 'ignore' } = {},
): Promise<number> {
  return new Promise((resolve) => {
    let signals = 0;
    const onSignal = () => {
      signals++;
      if (signals === 1) {
        stop(false).then(
          () => resolve(0),
          () => resolve(1),
        );
      } else if (options.repeat !== 'ignore') {
        void stop(true).finally(() => process.exit(1));
        setTimeout(() => process.exit(1), 2_000).unref();
      }
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
