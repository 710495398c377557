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

/**
 * {@link waitForSignals} for a command whose start takes a while (`compactor worker` migrates
 * first): the signals are taken before `start` runs, so one that arrives during the start is not
 * lost. A first SIGTERM/SIGINT aborts `starting` (the start stops retrying and throws, or finishes
 * what it was doing) and, once `start` has resolved, runs `stop(started, false)`; resolves with 0,
 * or 1 if that throws. A second signal (with `repeat: 'force'`) runs `stop(started, true)` and exits
 * 1, at once when nothing has started yet.
 * @throws what `start` throws (the listeners are removed first).
 */
export async function startUntilSignal<T>(
  start: (starting: AbortSignal) => Promise<T>,
  stop: (started: T, force: boolean) => Promise<void>,
  options: { repeat?: 'force' | 'ignore' } = {},
): Promise<number> {
  const starting = new AbortController();
  let started: { value: T } | null = null;
  let signals = 0;
  let firstSignal: () => void = () => {};
  const signalled = new Promise<void>((resolve) => {
    firstSignal = resolve;
  });
  const onSignal = () => {
    signals++;
    if (signals === 1) {
      starting.abort();
      firstSignal();
    } else if (options.repeat !== 'ignore') {
      if (!started) process.exit(1);
      void stop(started.value, true).finally(() => process.exit(1));
      setTimeout(() => process.exit(1), 2_000).unref();
    }
  };
  process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
  try {
    started = { value: await start(starting.signal) };
  } catch (error) {
    process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
    throw error;
  }
  await signalled;
  return stop(started.value, false).then(
    () => 0,
    () => 1,
  );
}
