/**
 * What the tests need on an idle two-core machine: the bases that patience.ts scales by the
 * slowdown measured in a run. No imports, so vitest.config.ts can read them too.
 */

/**
 * A `compactor` child's start: loading what `compactor worker` loads before it connects, through
 * tsx, spawn to exit (global-setup.ts), ms.
 */
export const IDLE_START_MS = 3_000;

/** vitest's default test timeout, ms (vitest.config.ts; patient-timeouts.ts scales it per file). */
export const IDLE_TEST_TIMEOUT_MS = 30_000;

/** vitest's default hook timeout, ms. */
export const IDLE_HOOK_TIMEOUT_MS = 60_000;
