/**
 * Bull Board in a real browser (Debian's Chromium): refused without credentials; with the admin's
 * it lists both queues and shows a failed job with its reason, a session's job links to the
 * session page, and nothing is fetched from any origin but the dashboard's own (no web fonts).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type DashboardFixture,
  startDashboardFixture,
} from '../support/dashboard-fixture.ts';
import { waitFor } from '../support/fixtures.ts';
import { describeBrowser, type LaunchedBrowser, launchChromium } from './chromium.ts';
import { saveScreenshot } from './screenshots.ts';

let f: DashboardFixture;
const browsers: LaunchedBrowser[] = [];
const badEventId = randomUUID();
let goodJobId: string;

async function browser(credentials?: { username: string; password: string }) {
  const launched = await launchChromium(credentials ? { httpCredentials: credentials } : {});
  browsers.push(launched);
  return launched.context;
}

describeBrowser('Bull Board in Chromium', () => {
  beforeAll(async () => {
    f = await startDashboardFixture();
    await f.seed('acme', 'linked');
    const good = await f.compact('acme', 'linked', { type: 'slidingWindow', maxMessages: 5 });
    expect(good.state).toBe('completed');
    goodJobId = good.jobId;
    // A bad event, straight onto the queue as a buggy producer would send it: it fails for good.
    await f.producer.queue.add(
      RUN_COMPLETED,
      { eventId: badEventId, tenantId: 'acme', sessionIdd: 'typo' },
      { jobId: badEventId },
    );
    await waitFor(async () =>
      (await f.producer.queue.getJobState(badEventId)) === 'failed' ? true : undefined,
    );
  });

  afterAll(async () => {
    await Promise.all(browsers.map((b) => b.close()));
    await f?.close();
  });

  it('is refused without credentials', async () => {
    const context = await browser();
    const page = await context.newPage();
    // The dashboard challenges for basic auth; a browser with nothing to answer gives up.
    for (const path of ['/queues', '/sessions', `/sessions/linked?tenant=acme`]) {
      await expect(page.goto(`${f.dashboard.url}${path}`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
      const answer = await context.request.get(`${f.dashboard.url}${path}`);
      expect(answer.status()).toBe(401);
      expect(answer.headers()['www-authenticate']).toMatch(/^Basic /);
      expect(await answer.text()).toContain('credentials required');
    }
  });

  it('lists the queues and shows the failed job with its reason', async () => {
    const page = await (await browser({ username: ADMIN_USER, password: ADMIN_PASSWORD })).newPage();
    const response = await page.goto(`${f.dashboard.url}/queues`);
    expect(response?.status()).toBe(200);
    await page.getByRole('link', { name: 'compaction-sweep' }).first().waitFor();
    await page.getByRole('link', { name: 'compaction', exact: true }).first().waitFor();

    await page.goto(`${f.dashboard.url}/queues/queue/compaction?status=failed`);
    await page.getByText(badEventId).first().waitFor();
    await page.getByText('event.sessionId', { exact: false }).first().waitFor();
    expect(await page.textContent('body')).toContain('invalid event');
  });

  it("links a session's job to its session page", async () => {
    const page = await (await browser({ username: ADMIN_USER, password: ADMIN_PASSWORD })).newPage();
    await page.goto(`${f.dashboard.url}/queues/queue/compaction?status=completed`);
    await page.getByText(goodJobId).first().waitFor();
    const link = page.getByRole('link', { name: 'Session page' }).first();
    expect(await link.getAttribute('href')).toBe('/sessions/linked?tenant=acme');
    await page.goto(new URL('/sessions/linked?tenant=acme', f.dashboard.url).toString());
    await page.locator('svg.chart').waitFor();
    expect(await page.locator('h1').textContent()).toBe('Session linked');
  });

  it('loads nothing from another origin: no web fonts, every request to the dashboard itself', async () => {
    const context = await browser({ username: ADMIN_USER, password: ADMIN_PASSWORD });
    const requested: string[] = [];
    // Context-wide, so requests of any page, worker or preload are seen too.
    context.on('request', (request) => requested.push(request.url()));
    const page = await context.newPage();
    await page.goto(`${f.dashboard.url}/queues`);
    await page.getByRole('link', { name: 'compaction-sweep' }).first().waitFor();
    await page.waitForLoadState('networkidle');
    await page.goto(`${f.dashboard.url}/queues/queue/compaction?status=completed`);
    await page.getByText(goodJobId).first().waitFor();
    await page.waitForLoadState('networkidle');
    await saveScreenshot(page, 'bull-board-queue');

    const own = new URL(f.dashboard.url).origin;
    const web = requested.filter((url) => /^https?:/.test(url));
    expect(web.length).toBeGreaterThan(0);
    expect(web.filter((url) => new URL(url).origin !== own)).toEqual([]);
    // The page still looks like Bull Board: its own stylesheet loaded.
    expect(web.some((url) => /\/queues\/static\/css\/main\.[\w]+\.css$/.test(url))).toBe(true);
  });
});
