/** Runs shutdown steps in order, each even if an earlier one failed. */
import type { Logger } from 'pino';

/** Runs every cleanup step even if some fail, so one failed close never leaves a connection open. */
export async function runAll(logger: Logger, steps: Array<() => Promise<unknown>>): Promise<void> {
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      logger.warn({ err: error }, 'shutdown step failed');
    }
  }
}
