/**
 * The machine's Chromium driven by playwright-core (no browser download): the global set-up finds
 * it, or installs Debian's package where it can (`find-chromium.ts`). A test file's pages share one
 * browser process, started on first use and closed with the last of its contexts, since starting
 * Chromium costs seconds; each {@link launchChromium} is a context of its own, which shares no
 * cookies, cache, storage or credentials with any other (a fresh profile, as far as a page can tell).
 */
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium } from 'playwright-core';
import { describe, inject } from 'vitest';

/** The Chromium the global set-up found; empty when there is none (then the browser tests skip). */
export const CHROMIUM = inject('chromium');

/**
 * `describe` for tests that need a browser: skipped, with the one line of what to install printed
 * by the global set-up, when this machine has no Chromium. Under `CI=true` the set-up fails instead.
 */
export const describeBrowser = describe.skipIf(CHROMIUM === '');

/** A browser context of its own and its close. */
export interface LaunchedBrowser {
  context: BrowserContext;
  /** Closes the context, and the browser when no other context uses it. Memoized. */
  close(): Promise<void>;
}

/** The running browser and how many contexts use it. */
interface Shared {
  browser: Promise<Browser>;
  users: number;
}

let shared: Shared | undefined;

/** Drops one user of `s`; closes its browser when that was the last. */
async function release(s: Shared): Promise<void> {
  s.users--;
  if (s.users > 0) return;
  if (shared === s) shared = undefined;
  await s.browser.then((b) => b.close()).catch(() => {});
}

/**
 * A new context in headless Chromium (started when none runs: no sandbox, as root on CI, and no
 * background network traffic).
 * @param options context options, e.g. `httpCredentials` for basic auth.
 */
export async function launchChromium(
  options: Pick<BrowserContextOptions, 'httpCredentials' | 'viewport'> = {},
): Promise<LaunchedBrowser> {
  shared ??= {
    browser: chromium.launch({
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
    }),
    users: 0,
  };
  const mine = shared;
  mine.users++;
  let context: BrowserContext;
  try {
    context = await (await mine.browser).newContext({
      viewport: options.viewport ?? { width: 1280, height: 900 },
      ...(options.httpCredentials ? { httpCredentials: options.httpCredentials } : {}),
    });
  } catch (error) {
    await release(mine);
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    context,
    close: () => {
      closing ??= context
        .close()
        .catch(() => {})
        .then(() => release(mine));
      return closing;
    },
  };
}
