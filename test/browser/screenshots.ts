/**
 * Screenshots the browser tests leave behind for a person to look at: saved under
 * `test/browser/screenshots/` (ignored by git), each path printed so a run's log says where.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/** The folder the screenshots go to. */
export const SCREENSHOTS_DIR = fileURLToPath(new URL('./screenshots', import.meta.url));

/**
 * Saves a full-page screenshot of `page` as `<name>.png` and prints where.
 * @returns the file's path.
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOTS_DIR, { recursive: true });
  const file = path.join(SCREENSHOTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot: ${file}`);
  return file;
}
