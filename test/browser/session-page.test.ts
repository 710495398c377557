/**
 * The session page in a real browser after real compactions (in-process worker, extractive
 * summarizer): the chart marks each compaction, the checkpoint and the ledger are shown, the
 * page's own script runs under its CSP, "compact now" goes through the API, and another tenant
 * gets a 404. Saves a screenshot under the OS temp directory.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appendMessages } from '../../producer/index.ts';
import { type DashboardFixture, startDashboardFixture, TENANT_TOKENS } from '../support/dashboard-fixture.ts';
import { waitFor } from '../support/fixtures.ts';
import { describeBrowser, type LaunchedBrowser, launchChromium } from './chromium.ts';
import { saveScreenshot } from './screenshots.ts';

/** Where the screenshot of the session page is saved. */
const SCREENSHOT = path.join(tmpdir(), 'compactor-session-page.png');

let f: DashboardFixture;
const browsers: LaunchedBrowser[] = [];
const session = 'research';

async function pageAs(tenant: keyof typeof TENANT_TOKENS): Promise<{ page: Page; problems: string[] }> {
  const launched = await launchChromium({
    httpCredentials: { username: tenant, password: TENANT_TOKENS[tenant] },
  });
  browsers.push(launched);
  const page = await launched.context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  // A CSP violation or a script error shows up here.
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return { page, problems };
}

describeBrowser('session page in Chromium', () => {
  beforeAll(async () => {
    f = await startDashboardFixture();
    await f.seed('acme', session, 'openhands__ponyc-4588');
    await f.seed('globex', 'theirs');
    // The agent goes on between compactions, so the size rises again after each drop.
    const more = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
        kind: 'message' as const,
        content: `follow-up ${i}: ${'details of the next step '.repeat(40)}`,
      }));
    expect((await f.compact('acme', session, { type: 'summarize', keepRecent: 40 })).state).toBe('completed');
    await appendMessages(f.tdb.database.db, 'acme', session, more(30));
    expect((await f.compact('acme', session, { type: 'none' })).state).toBe('completed');
    expect((await f.compact('acme', session, { type: 'summarize', keepRecent: 12 })).state).toBe('completed');
    await appendMessages(f.tdb.database.db, 'acme', session, more(16));
    expect((await f.compact('acme', session, { type: 'slidingWindow', maxMessages: 10 })).state).toBe(
      'completed',
    );
  });

  afterAll(async () => {
    await Promise.all(browsers.map((b) => b.close()));
    await f?.close();
  });

  it('renders the chart, the checkpoint and the ledger after real compactions', async () => {
    const rows = await f.tdb.database.sql<{ id: string; status: string }[]>`
      select id, status from compactions where tenant_id = 'acme' and session_id = ${session}`;
    expect(rows.map((r) => r.status).sort()).toEqual(['applied', 'applied', 'applied', 'skipped']);

    const { page, problems } = await pageAs('acme');
    await page.goto(`${f.dashboard.url}/sessions`);
    await page.getByRole('link', { name: session }).click();
    await page.waitForURL(`**/sessions/${session}`);
    expect(await page.locator('h1').textContent()).toBe(`Session ${session}`);

    const chart = page.locator('svg.chart');
    expect(await chart.getAttribute('data-compactions')).toBe('4');
    expect(await chart.locator('g.marker-applied').count()).toBe(6); // 3 applied × 2 panels
    expect(await chart.locator('g.marker-skipped').count()).toBe(2);
    expect(await chart.locator('path.series-tokens').getAttribute('d')).toMatch(
      /^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+$/,
    );
    expect(await page.locator('table.ledger tbody tr').count()).toBe(4);
    expect(await page.locator('.checkpoint').textContent()).toContain('Working set');

    // The page's own script runs (its CSP nonce works): a marker finds its ledger row.
    const marker = chart.locator('g.marker-applied').first();
    const id = await marker.getAttribute('data-compaction');
    await marker.locator('rect').click();
    expect(await page.locator(`tr#c-${id}`).getAttribute('class')).toContain('hl');

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(problems).toEqual([]);
  });

  it('"compact now" enqueues a manual compaction through the API', async () => {
    const { page, problems } = await pageAs('acme');
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${f.dashboard.url}/sessions/${session}`);
    await page.getByRole('button', { name: 'compact now' }).click();
    await page.locator('#action-result', { hasText: /^done: / }).waitFor();
    await waitFor(async () => {
      const [row] = await f.tdb.database.sql`
        select 1 from compactions where session_id = ${session} and trigger = 'manual'`;
      return row;
    });
    expect(problems).toEqual([]);
  });

  it('marks a restore at the time it happened, right of what came between', async () => {
    await f.seed('acme', 'restorable');
    expect((await f.compact('acme', 'restorable', { type: 'slidingWindow', maxMessages: 6 })).state).toBe(
      'completed',
    );
    expect((await f.compact('acme', 'restorable', { type: 'none' })).state).toBe('completed');
    const [applied] = await f.tdb.database.sql<{ id: string }[]>`
      select id from compactions where session_id = 'restorable' and status = 'applied'`;
    const restore = await f.request('acme', `/api/sessions/restorable/compactions/${applied?.id}/restore`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(restore.status).toBe(200);
    // In ms, as the page has them (JavaScript dates drop Postgres's microseconds).
    const [row] = await f.tdb.database.sql<{ created: number; restored: number }[]>`
      select floor(extract(epoch from created_at) * 1000)::float8 as created,
             floor(extract(epoch from restored_at) * 1000)::float8 as restored
      from compactions where id = ${applied?.id ?? ''}`;

    const { page, problems } = await pageAs('acme');
    await page.goto(`${f.dashboard.url}/sessions/restorable`);
    const chart = page.locator('svg.chart');
    const attr = async (name: string) => Number(await chart.getAttribute(name));
    const scale = {
      t0: await attr('data-t0'),
      t1: await attr('data-t1'),
      x0: await attr('data-x0'),
      x1: await attr('data-x1'),
      width: Number((await chart.getAttribute('viewBox'))?.split(' ')[2]),
    };
    const box = await chart.boundingBox();
    /** Where a person sees time `t` on the screen, from the chart's own scale. */
    const screenX = (t: number) =>
      (box?.x ?? 0) +
      ((scale.x0 + ((t - scale.t0) / (scale.t1 - scale.t0)) * (scale.x1 - scale.x0)) / scale.width) *
        (box?.width ?? 0);
    const lineX = async (selector: string) => {
      const line = await chart.locator(`${selector} line`).first().boundingBox();
      return (line?.x ?? 0) + (line?.width ?? 0) / 2;
    };

    const restoreMarker = chart.locator('g.marker-restored[data-kind="restore"]').first();
    expect(Number(await restoreMarker.getAttribute('data-at'))).toBe(row?.restored);
    expect(await restoreMarker.getAttribute('data-compaction')).toBe(applied?.id);
    const restoreX = await lineX('g.marker-restored[data-kind="restore"]');
    expect(Math.abs(restoreX - screenX(row?.restored ?? 0))).toBeLessThan(1.5);
    // The compaction itself stays at its own time, as applied; the skip came between the two.
    const compaction = chart.locator(`g.marker-applied[data-compaction="${applied?.id}"]`).first();
    expect(Number(await compaction.getAttribute('data-at'))).toBe(row?.created);
    const compactionX = await lineX(`g.marker-applied[data-compaction="${applied?.id}"]`);
    const skippedX = await lineX('g.marker-skipped');
    expect(compactionX).toBeLessThan(skippedX);
    expect(skippedX).toBeLessThan(restoreX);
    expect(await page.locator(`tr#c-${applied?.id}`).textContent()).toContain('restored');

    await saveScreenshot(page, 'session-page-restore');
    expect(problems).toEqual([]);
  });

  it("does not show a tenant another tenant's session", async () => {
    const { page } = await pageAs('globex');
    const response = await page.goto(`${f.dashboard.url}/sessions/${session}`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('main').textContent()).toContain(`session "${session}" not found`);
    const named = await page.goto(`${f.dashboard.url}/sessions/${session}?tenant=acme`);
    expect(named?.status()).toBe(403);
    const own = await page.goto(`${f.dashboard.url}/sessions/theirs`);
    expect(own?.status()).toBe(200);
  });
});
