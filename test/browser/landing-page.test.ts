/**
 * The landing page in a real browser: the admin sees every tenant's totals as the database holds
 * them, the biggest sessions and the sessions whose compaction failed, and each link leads to the
 * right page; a tenant sees its own only. Screenshots go to test/browser/screenshots/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type DashboardFixture,
  startDashboardFixture,
  TENANT_TOKENS,
} from '../support/dashboard-fixture.ts';
import { describeBrowser, type LaunchedBrowser, launchChromium } from './chromium.ts';
import { saveScreenshot } from './screenshots.ts';

let f: DashboardFixture;
const browsers: LaunchedBrowser[] = [];

async function pageAs(username: string, password: string): Promise<{ page: Page; problems: string[] }> {
  const launched = await launchChromium({ httpCredentials: { username, password } });
  browsers.push(launched);
  const page = await launched.context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { page, problems };
}

/** `12,345`, as the page writes numbers. */
const fmt = (v: number) => v.toLocaleString('en-US');

describeBrowser('landing page in Chromium', () => {
  beforeAll(async () => {
    f = await startDashboardFixture({ anthropic: true });
    await f.seed('acme', 'big', 'openhands__ponyc-4588');
    await f.seed('acme', 'small');
    await f.seed('acme', 'broken');
    await f.seed('globex', 'theirs');
    expect((await f.compact('acme', 'small', { type: 'summarize', keepRecent: 6 })).state).toBe('completed');
    expect((await f.compact('globex', 'theirs', { type: 'slidingWindow', maxMessages: 8 })).state).toBe(
      'completed',
    );
    // The Messages API refuses the summary (400): the job fails for good, the ledger says failed.
    f.fake?.enqueue({ status: 400, message: 'prompt is too long for this model' });
    expect((await f.compact('acme', 'broken', { type: 'summarize', keepRecent: 6 })).state).toBe('failed');
  });

  afterAll(async () => {
    await Promise.all(browsers.map((b) => b.close()));
    await f?.close();
  });

  it("lists every tenant's totals, the biggest and the failing sessions for the admin, each linked", async () => {
    const totals = await f.tdb.database.sql<
      { tenant_id: string; sessions: number; messages: number; tokens: number }[]
    >`
      select tenant_id, count(*)::int as sessions, sum(message_count)::int as messages,
             sum(token_count)::int as tokens
      from sessions group by tenant_id order by tokens desc`;
    const { page, problems } = await pageAs(ADMIN_USER, ADMIN_PASSWORD);
    await page.goto(`${f.dashboard.url}/`);
    expect(await page.locator('h1').textContent()).toBe('Overview');

    const rows = page.locator('table.tenants tbody tr');
    expect(await rows.locator('td:first-child').allTextContents()).toEqual(totals.map((t) => t.tenant_id));
    for (const [i, t] of totals.entries()) {
      const cells = await rows.nth(i).locator('td').allTextContents();
      expect(cells.slice(1, 4)).toEqual([fmt(t.sessions), fmt(t.messages), fmt(t.tokens)]);
    }
    const acme = rows.filter({ hasText: 'acme' });
    // acme: one applied summary, one failure, and the summary's cost.
    expect((await acme.locator('td').allTextContents()).slice(4, 6)).toEqual(['1', '1']);
    expect(await acme.locator('td').nth(6).textContent()).toMatch(/^\$0\.0\d{3}$/);

    // The biggest session of all comes first.
    const [biggest] = await f.tdb.database.sql<{ tenant_id: string; id: string }[]>`
      select tenant_id, id from sessions order by token_count desc limit 1`;
    const first = page.locator('table.biggest tbody tr').first();
    expect(await first.locator('td').first().textContent()).toBe(biggest?.tenant_id);
    expect(await first.getByRole('link').textContent()).toBe(biggest?.id);

    // The failing session, with its error.
    const failing = page.locator('table.failing tbody tr');
    expect(await failing.count()).toBe(1);
    expect(await failing.locator('td').allTextContents()).toEqual([
      'acme',
      'broken',
      '1',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/),
      expect.stringContaining('prompt is too long for this model'),
      'details',
    ]);
    await saveScreenshot(page, 'landing-admin');

    // Each link leads to its page.
    await failing.getByRole('link', { name: 'details' }).click();
    await page.waitForURL(/\/sessions\/broken\/compactions\/[\da-f-]{36}\?tenant=acme$/);
    expect(await page.locator('h1').textContent()).toBe('Compaction failed of session broken');
    await page.goBack();
    await failing.getByRole('link', { name: 'broken' }).click();
    await page.waitForURL('**/sessions/broken?tenant=acme');
    expect(await page.locator('h1').textContent()).toBe('Session broken');
    await page.goBack();
    await first.getByRole('link').click();
    await page.waitForURL(`**/sessions/${biggest?.id}?tenant=${biggest?.tenant_id}`);
    expect(await page.locator('h1').textContent()).toBe(`Session ${biggest?.id}`);
    await page.goBack();
    await acme.getByRole('link', { name: 'acme' }).click();
    await page.waitForURL('**/?tenant=acme');
    expect(await page.locator('h1').textContent()).toBe('Overview of acme');
    await page.goBack();
    await acme.getByRole('link', { name: 'sessions' }).click();
    await page.waitForURL('**/sessions?tenant=acme');
    expect(await page.locator('table.sessions tbody tr').count()).toBe(3);
    expect(problems).toEqual([]);
  });

  it('shows a tenant its own totals, biggest and failing sessions only', async () => {
    const { page, problems } = await pageAs('globex', TENANT_TOKENS.globex);
    await page.goto(`${f.dashboard.url}/`);
    expect(await page.locator('h1').textContent()).toBe('Overview of globex');
    expect(await page.locator('table.tenants tbody tr').count()).toBe(1);
    expect(await page.locator('table.biggest tbody tr').allTextContents()).toEqual([
      expect.stringContaining('theirs'),
    ]);
    expect(await page.locator('table.failing tbody').textContent()).toBe('none');
    expect(await page.locator('main').textContent()).not.toContain('acme');
    await saveScreenshot(page, 'landing-tenant');
    await page.locator('table.biggest').getByRole('link', { name: 'theirs' }).click();
    await page.waitForURL('**/sessions/theirs');
    expect(await page.locator('h1').textContent()).toBe('Session theirs');
    expect(problems).toEqual([]);

    const other = await page.goto(`${f.dashboard.url}/?tenant=acme`);
    expect(other?.status()).toBe(403);
  });
});
