import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files wait on Redis, Postgres, child processes and timers far more than they compute, so
    // three run side by side even on two cores (vitest's default is cores - 1: one file at a time
    // there). Each file isolates itself (own database, own queue prefix), so they can. Measured on two
    // cores, whole suite: 2 forks 176 s, 3 forks 122 s, 4 forks 122 s with slower files. Not more:
    // every fork's files hold connections to one Postgres server.
    maxWorkers: 3,
    // A fork runs file after file without re-importing the modules they share, which costs seconds
    // per file; files keep no global state (no module mocks, stubbed globals or env writes).
    isolate: false,
  },
});
