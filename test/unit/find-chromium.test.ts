/** How the browser tests find their Chromium: a named binary wins, and a wrong name is an error. */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../support/find-chromium.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'compactor-chromium-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('findChromium', () => {
  it('uses the binary COMPACTOR_CHROMIUM names', async () => {
    const browser = path.join(dir, 'my-chrome');
    await writeFile(browser, '#!/bin/sh\n');
    await chmod(browser, 0o755);
    expect(findChromium({ COMPACTOR_CHROMIUM: browser })).toBe(browser);
  });

  it('refuses a COMPACTOR_CHROMIUM that is not an executable file, rather than pick another browser', async () => {
    const plain = path.join(dir, 'not-executable');
    await writeFile(plain, '');
    expect(() => findChromium({ COMPACTOR_CHROMIUM: plain })).toThrow(
      `COMPACTOR_CHROMIUM=${plain} is not an executable file`,
    );
    expect(() => findChromium({ COMPACTOR_CHROMIUM: path.join(dir, 'missing') })).toThrow(
      /not an executable/,
    );
  });
});
