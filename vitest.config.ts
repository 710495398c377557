import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files wait on Redis, Postgres, child processes and timers far more than they compute,
    // so two run side by side even on two cores (vitest's default is cores - 1: one at a time).
    // Each file isolates itself (own database, own queue prefix), so they can.
    maxWorkers: 2,
    // A fork runs file after file without re-importing the modules they share, which costs seconds
    // per file; files keep no global state (no module mocks, stubbed globals or env writes).
    isolate: false,
  },
});
