/**
 * The machine's Chromium driven by playwright-core (no browser download): the global set-up finds
 * it, or installs Debian's package where it can (`find-chromium.ts`). Each launch is a browser with
 * a fresh profile (`--user-data-dir`, given through `launchPersistentContext`, which Playwright
 * requires for it), removed on close.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, type BrowserContextOptions, chromium } from 'playwright-core';
import { describe, inject } from 'vitest';

/** The Chromium the global set-up found; empty when there is none (then the browser tests skip). */
export const CHROMIUM = inject('chromium');

/**
 * `describe` for tests that need a browser: skipped, with the one line of what to install printed
 * by the global set-up, when this machine has no Chromium. Under `CI=true` the set-up fails instead.
 */
export const describeBrowser = describe.skipIf(CHROMIUM === '');

/** A browser (one context) and the cleanup of its profile. */
export interface LaunchedBrowser {
  context: BrowserContext;
  /** Closes the browser and removes its profile directory. Memoized. */
  close(): Promise<void>;
}

/**
 * Launches headless Chromium with a fresh profile, no sandbox (root on CI) and no background
 * network traffic.
 * @param options context options, e.g. `httpCredentials` for basic auth.
 */
export async function launchChromium(
  options: Pick<BrowserContextOptions, 'httpCredentials' | 'viewport'> = {},
): Promise<LaunchedBrowser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'compactor-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: options.viewport ?? { width: 1280, height: 900 },
    ...(options.httpCredentials ? { httpCredentials: options.httpCredentials } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    context,
    close: () => {
      closing ??= context
        .close()
        .catch(() => {})
        .then(() => rm(profile, { recursive: true, force: true }));
      return closing;
    },
  };
}
