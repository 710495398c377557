/**
 * A vitest setup file (runs before each test file): the file's default test and hook timeouts
 * become the idle machine's ones (vitest.config.ts) times the slowdown measured in this run
 * (patience.ts), so a test fails on a loaded machine only when it hangs. vitest restores its
 * config after each file; a test that names its own timeout scales it with `patient` itself.
 */
import { vi } from 'vitest';
import { IDLE_HOOK_TIMEOUT_MS, IDLE_TEST_TIMEOUT_MS } from './idle-machine.ts';
import { patient } from './patience.ts';

vi.setConfig({ testTimeout: patient(IDLE_TEST_TIMEOUT_MS), hookTimeout: patient(IDLE_HOOK_TIMEOUT_MS) });
