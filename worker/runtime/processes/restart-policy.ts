/**
 * When the primary of `compactor worker --processes N` restarts a worker process that exited on its
 * own, and when it gives up. Pure: it reads the times of earlier restarts and the clock it is given.
 * The rule (the shape of Kubernetes' CrashLoopBackOff and systemd's `StartLimitBurst`, kept short
 * because a worker process starts in about a second): each slot's restarts within the last
 * {@link RESTART_WINDOW_MS} double its delay from {@link FIRST_RESTART_DELAY_MS}, up to
 * {@link MAX_RESTART_DELAY_MS}; the exit that would be the slot's {@link MAX_RESTARTS_PER_WINDOW}+1st
 * restart in the window stops the whole worker instead, so a process that cannot start never spins.
 */

/** The window restarts are counted in, ms. */
export const RESTART_WINDOW_MS = 60_000;
/** Restarts of one slot within the window before the primary gives up. */
export const MAX_RESTARTS_PER_WINDOW = 5;
/** The delay before the first restart in a window, ms. */
export const FIRST_RESTART_DELAY_MS = 250;
/** The longest delay before a restart, ms. */
export const MAX_RESTART_DELAY_MS = 8_000;

/** What to do after an unexpected exit. */
export type RestartDecision =
  | { action: 'restart'; delayMs: number; recent: number }
  | { action: 'give-up'; recent: number };

/**
 * Decides for a slot whose process exited at `now` (ms), given when its earlier restarts happened
 * (`restarts`, ms, any order). `recent` counts the restarts within the window before this exit.
 */
export function decideRestart(restarts: readonly number[], now: number): RestartDecision {
  const recent = restarts.filter((t) => now - t < RESTART_WINDOW_MS).length;
  if (recent >= MAX_RESTARTS_PER_WINDOW) return { action: 'give-up', recent };
  const delayMs = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** recent);
  return { action: 'restart', delayMs, recent };
}

/** The restart times still inside the window at `now`, so a long-lived slot's list stays short. */
export function pruneRestarts(restarts: readonly number[], now: number): number[] {
  return restarts.filter((t) => now - t < RESTART_WINDOW_MS);
}
