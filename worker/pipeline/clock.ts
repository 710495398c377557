/** The process's clocks, as the pipeline's {@link Clock} port. */
import type { Clock } from './ports.ts';

/** `performance.now()` for durations, `Date.now()` for the wall clock. */
export const systemClock: Clock = {
  now: () => performance.now(),
  wall: () => Date.now(),
};
