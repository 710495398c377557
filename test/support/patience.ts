/**
 * How long a test waits for a child process or an event, measured instead of guessed. On an idle
 * machine a `compactor` child starts in about three seconds; beside another test run on two cores it
 * has taken 10–19 s, and every deadline written for the idle machine then failed. So each deadline
 * is a base (what the wait needs on an idle machine) times the slowdown measured in this run:
 *
 * - the slowest `compactor` start seen: the global set-up times one (loading what `compactor
 *   worker` loads, spawn to exit) before any test file runs, and {@link recordStart} adds each child's start
 *   (spawn to its first output) as the run goes on;
 * - the machine's load: the one-minute load average per core (a load of 8 on two cores is four
 *   processes wanting each core).
 *
 * The slowdown is the larger of the two ratios, never below 1: an idle machine waits the base.
 */
import { availableParallelism, loadavg } from 'node:os';
import { inject } from 'vitest';
import { IDLE_START_MS } from './idle-machine.ts';

/**
 * The most the slowdown counts: a child that prints nothing until it has done minutes of work
 * would otherwise make every later deadline of its fork wait an hour for a real hang. Two suites
 * at once beside other work (load 20–30 on two cores) measured starts of 30–76 s, 15–38 times the
 * idle one: the cap stays above that.
 */
export const MAX_SLOWDOWN = 40;

let slowestStartMs = 0;

/** The start measured by the global set-up (`cliStartMs`), or 0 outside vitest (the tsx scripts). */
function measuredAtSetup(): number {
  try {
    const ms = inject('cliStartMs');
    return typeof ms === 'number' ? ms : 0;
  } catch {
    return 0;
  }
}

/** Adds a measured start of a child process (ms, spawn to first output) to the run's slowest. */
export function recordStart(ms: number): void {
  if (Number.isFinite(ms) && ms > slowestStartMs) slowestStartMs = ms;
}

/**
 * How much slower this machine is now than the idle one the bases were written for: at least 1,
 * else the larger of (slowest start / {@link IDLE_START_MS}) and (one-minute load per core), at
 * most {@link MAX_SLOWDOWN}.
 */
export function slowdown(): number {
  const start = Math.max(slowestStartMs, measuredAtSetup()) / IDLE_START_MS;
  const load = (loadavg()[0] ?? 0) / availableParallelism();
  return Math.min(MAX_SLOWDOWN, Math.max(1, start, load));
}

/** `baseMs` (what a wait needs on an idle machine) scaled by the measured {@link slowdown}, ms. */
export function patient(baseMs: number): number {
  return Math.round(baseMs * slowdown());
}

/** What a deadline was made of, for a failure message: `60000 ms (20000 ms × 3.0 measured slowdown)`. */
export function describeDeadline(baseMs: number): string {
  const factor = slowdown();
  return `${Math.round(baseMs * factor)} ms (${baseMs} ms × ${factor.toFixed(1)} measured slowdown)`;
}
