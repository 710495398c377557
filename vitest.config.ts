import { defineConfig } from 'vitest/config';
import { IDLE_HOOK_TIMEOUT_MS, IDLE_TEST_TIMEOUT_MS } from './test/support/idle-machine.ts';

/**
 * The test files that touch the queue, run a second time on BullMQ's PostgreSQL backend (the
 * `postgres` project; every file runs on Redis in the `redis` project). Only these: the rest never
 * reaches a queue, and running them twice would add minutes for nothing.
 */
const QUEUE_FILES = [
  'test/integration/worker.test.ts',
  'test/integration/compact-now.test.ts',
  'test/integration/session-events.test.ts',
  'test/integration/webhooks.test.ts',
  'test/integration/policies-sweeps.test.ts',
  'test/integration/batches.test.ts',
  'test/integration/dashboard-api.test.ts',
  'test/integration/http-api.test.ts',
  'test/integration/metrics.test.ts',
  'test/security/worker-share.test.ts',
  'test/security/limits.test.ts',
  'test/faults/crash.test.ts',
  'test/faults/duplicates.test.ts',
  'test/faults/lease.test.ts',
  'test/faults/postgres.test.ts',
  'test/faults/shutdown.test.ts',
  'test/browser/bull-board.test.ts',
];

/** Files about the Postgres backend's own parts: they run in the `postgres` project only. */
const POSTGRES_ONLY = ['test/integration/postgres-coordination.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // The idle machine's timeouts; each file gets them times the slowdown measured in this run
    // (test/support/patient-timeouts.ts, patience.ts), so only a hang fails on a loaded machine.
    setupFiles: ['test/support/patient-timeouts.ts'],
    testTimeout: IDLE_TEST_TIMEOUT_MS,
    hookTimeout: IDLE_HOOK_TIMEOUT_MS,
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
    projects: [
      {
        extends: true,
        test: {
          name: 'redis',
          include: ['test/**/*.test.ts'],
          exclude: POSTGRES_ONLY,
          provide: { queueBackend: 'redis' },
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: [...QUEUE_FILES, ...POSTGRES_ONLY],
          provide: { queueBackend: 'postgres' },
          // After the redis project, not beside it: the fault files of both at once start so many
          // `compactor worker` processes that, on two busy cores, a worker missed its 20 s to reach
          // its first lock wait. One after the other, each project runs as it does alone.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
