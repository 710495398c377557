/**
 * The session page in a real browser after real compactions (in-process worker; summaries by the
 * anthropic summarizer against a fake Messages API, so a test can make one fail): the chart marks
 * each compaction and each restore where it happened; the checkpoint, the ledger and the live
 * context with its token total are shown; the page's own script runs under its CSP; "compact now"
 * says what happened (applied, skipped, failed) and the ledger follows without a reload; a ledger
 * row's "details" opens the compaction's page; another tenant gets a 404. Screenshots go to
 * test/browser/screenshots/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { appendMessages, createSession } from '../../producer/index.ts';
import { type DashboardFixture, startDashboardFixture, TENANT_TOKENS } from '../support/dashboard-fixture.ts';
import { describeBrowser, type LaunchedBrowser, launchChromium } from './chromium.ts';
import { saveScreenshot } from './screenshots.ts';

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
    f = await startDashboardFixture({ anthropic: true });
    await f.seed('acme', session, 'openhands__ponyc-4588');
    await f.seed('acme', 'fragile');
    await f.seed('acme', 'fresh');
    await f.seed('globex', 'theirs');
    await createSession(f.tdb.database.db, {
      tenantId: 'acme',
      sessionId: 'tiny',
      messages: ['fix the flaky test', 'done: it was a race'].map((content, seq) => ({
        seq,
        role: seq === 0 ? 'user' : 'assistant',
        kind: 'message',
        content,
      })),
    });
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

    await saveScreenshot(page, 'session-page');
    expect(problems).toEqual([]);
  });

  it('"compact now" says it applied, with the sizes, and the ledger shows the row without a reload', async () => {
    const { page, problems } = await pageAs('acme');
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${f.dashboard.url}/sessions/fresh`);
    const ledgerRows = page.locator('table.ledger tbody tr');
    const before = await ledgerRows.count();
    await page.getByRole('button', { name: 'compact now' }).click();
    const said = await outcomeOf(page, '#action-result');

    const [row] = await f.tdb.database.sql<Sizes[]>`
      select id, status, messages_before, messages_after, tokens_before::int, tokens_after::int
      from compactions where session_id = 'fresh'`;
    expect(row?.status).toBe('applied');
    expect(said).toBe(
      `applied: messages ${row?.messages_before} → ${row?.messages_after}, tokens ${fmt(row?.tokens_before)} → ${fmt(row?.tokens_after)}`,
    );
    expect(await page.locator('#action-result').getAttribute('class')).toContain('outcome-applied');
    // The ledger, the chart and the stats were read again: the new row is on top, the line still said.
    await ledgerRows.nth(before).waitFor();
    expect(await ledgerRows.first().getAttribute('id')).toBe(`c-${row?.id}`);
    expect(await ledgerRows.first().textContent()).toMatch(/manual[\s\S]*applied/);
    expect(await page.locator('svg.chart').getAttribute('data-compactions')).toBe(String(before + 1));
    expect(await page.locator('#action-result').textContent()).toBe(said);
    expect(await page.locator('p.context-total').textContent()).toBe(
      `${fmt(row?.tokens_after)} tokens in ${row?.messages_after} messages`,
    );
    await saveScreenshot(page, 'compact-now-applied');
    expect(problems).toEqual([]);
  });

  it('shows the live context as stored: each message, the summary highlighted, and the token total', async () => {
    await f.seed('acme', 'contextual');
    expect((await f.compact('acme', 'contextual', { type: 'summarize', keepRecent: 6 })).state).toBe(
      'completed',
    );
    const live = await f.tdb.database.sql<{ seq: number; kind: string; token_count: number }[]>`
      select seq::int, kind, token_count from messages where session_id = 'contextual' order by seq`;
    const tokens = live.reduce((sum, m) => sum + m.token_count, 0);
    const { page, problems } = await pageAs('acme');
    await page.goto(`${f.dashboard.url}/sessions/contextual`);

    expect(await page.locator('p.context-total').textContent()).toBe(
      `${fmt(tokens)} tokens in ${live.length} messages`,
    );
    const rows = page.locator('table.context tbody tr');
    expect(await rows.count()).toBe(live.length);
    expect(await rows.locator('td:first-child').allTextContents()).toEqual(live.map((m) => fmt(m.seq)));
    expect(await rows.locator('td:nth-child(5)').allTextContents()).toEqual(
      live.map((m) => fmt(m.token_count)),
    );
    // The summary message stands out: its own background, and it says "summary".
    const summary = rows.filter({ hasText: 'summary' });
    expect(await summary.count()).toBe(1);
    expect(await summary.locator('td:first-child').textContent()).toBe(
      fmt(live.find((m) => m.kind === 'summary')?.seq),
    );
    const background = (row: typeof summary) =>
      row
        .locator('td')
        .first()
        .evaluate((td) => (globalThis as unknown as BrowserWindow).getComputedStyle(td).backgroundColor);
    expect(await background(summary)).toBe('rgb(236, 253, 245)');
    expect(await background(rows.last())).not.toBe('rgb(236, 253, 245)');
    expect(await page.locator('.context-shown').count()).toBe(0); // all shown: nothing capped
    await page.locator('#context').scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'session-live-context');
    expect(problems).toEqual([]);
  });

  it('"compact now" says it skipped, and why', async () => {
    const { page, problems } = await pageAs('acme');
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${f.dashboard.url}/sessions/tiny`);
    await page.getByRole('button', { name: 'compact now' }).click();
    const said = await outcomeOf(page, '#action-result');
    const [row] = await f.tdb.database.sql<{ status: string; reason: string }[]>`
      select status, reason from compactions where session_id = 'tiny'`;
    expect(row?.status).toBe('skipped');
    expect(said).toBe(`skipped: ${row?.reason}`);
    await page.locator('table.ledger tbody tr').first().waitFor();
    expect(await page.locator('table.ledger tbody tr').first().textContent()).toContain(row?.reason ?? '?');
    await saveScreenshot(page, 'compact-now-skipped');
    expect(problems).toEqual([]);
  });

  it('"compact now" says it failed, with the error', async () => {
    // The Messages API refuses the summary request (400): no retry can help, the job fails for good.
    f.fake?.enqueue({ status: 400, message: 'prompt is too long for this model' });
    const { page, problems } = await pageAs('acme');
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${f.dashboard.url}/sessions/fragile`);
    await page.getByRole('button', { name: 'compact now' }).click();
    const said = await outcomeOf(page, '#action-result');
    expect(said).toMatch(/^failed: .*prompt is too long for this model/);
    await page.locator('table.ledger td.status-failed').waitFor();
    await saveScreenshot(page, 'compact-now-failed');
    expect(problems).toEqual([]);
  });

  it('marks a restore at the time it happened, right of what came between', async () => {
    await f.seed('acme', 'restorable');
    expect((await f.compact('acme', 'restorable', { type: 'slidingWindow', maxMessages: 6 })).state).toBe(
      'completed',
    );
    expect((await f.compact('acme', 'restorable', { type: 'none' })).state).toBe('completed');
    const [applied] = await f.tdb.database.sql<{ id: string; archived: number }[]>`
      select id, messages_archived as archived from compactions
      where session_id = 'restorable' and status = 'applied'`;

    // Restored from the page: its line says so and the chart is redrawn without a reload.
    const { page, problems } = await pageAs('acme');
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${f.dashboard.url}/sessions/restorable`);
    await page.locator(`tr#c-${applied?.id}`).getByRole('button', { name: 'restore' }).click();
    expect(await outcomeOf(page, '#ledger-result')).toBe(
      `restored: ${applied?.archived} archived messages back in the session`,
    );
    await page.locator('g.marker-restored[data-kind="restore"]').first().waitFor();
    // In ms, as the page has them (JavaScript dates drop Postgres's microseconds).
    const [row] = await f.tdb.database.sql<{ created: number; restored: number }[]>`
      select floor(extract(epoch from created_at) * 1000)::float8 as created,
             floor(extract(epoch from restored_at) * 1000)::float8 as restored
      from compactions where id = ${applied?.id ?? ''}`;

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

  it("opens a compaction's details as a page: its fields, summary, checkpoint before and archived messages", async () => {
    // The second summary of the session: it replaced a checkpoint, and the LLM's usage was recorded.
    const [row] = await f.tdb.database.sql<
      { id: string; messages_archived: number; model: string; cost_usd: string; summary: string }[]
    >`
      select id, messages_archived, model, cost_usd::text, summary from compactions
      where session_id = ${session} and strategy = 'summarize' and checkpoint_before is not null
      order by created_at limit 1`;
    expect(row).toBeDefined();
    const { page, problems } = await pageAs('acme');
    await page.goto(`${f.dashboard.url}/sessions/${session}`);
    await page.locator(`tr#c-${row?.id}`).getByRole('link', { name: 'details' }).click();
    await page.waitForURL(`**/sessions/${session}/compactions/${row?.id}`);

    expect(await page.locator('h1').textContent()).toBe(`Compaction applied of session ${session}`);
    const field = async (name: string) =>
      (
        await page
          .locator('table.fields tr', { has: page.getByRole('rowheader', { name, exact: true }) })
          .locator('td')
          .textContent()
      )?.trim();
    expect(await field('status')).toBe('applied');
    expect(await field('strategy')).toMatch(/^summarize/);
    expect(await field('summarizer')).toBe('anthropic');
    expect(await field('model')).toBe(row?.model);
    expect(await field('cost USD')).toBe(`$${Number(row?.cost_usd).toFixed(6)}`);
    expect(await field('messages archived')).toBe(String(row?.messages_archived));
    // A client-side summary changes the history under earlier thinking.
    expect(await field('earlier thinking')).toBe('left out from here on');
    expect(await field('LLM input / output tokens')).toMatch(/^[\d,]+ \/ [\d,]+$/);
    expect(await field('total time')).toMatch(/^[\d,]+ ms$/);
    expect(await page.locator('pre.summary').textContent()).toBe(row?.summary);
    expect(await page.locator('.checkpoint').textContent()).toContain('Working set');
    // Every archived message (fewer than a page here), in seq order, each clipped.
    const seqs = await page.locator('table.archived tbody tr td:first-child').allTextContents();
    expect(seqs).toHaveLength(row?.messages_archived ?? -1);
    const numbers = seqs.map((v) => Number(v.replaceAll(',', '')));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(await page.locator('p.archived-total').textContent()).toMatch(
      new RegExp(`^${row?.messages_archived} messages, [\\d,]+ tokens$`),
    );
    for (const cell of await page.locator('table.archived td.preview').allTextContents()) {
      expect(cell.length).toBeLessThanOrEqual(240 + ' characters)'.length + 20);
    }
    await saveScreenshot(page, 'compaction-details');

    // Back to the session page, at the ledger row.
    await page.locator('a.back').first().click();
    await page.waitForURL(`**/sessions/${session}#c-${row?.id}`);
    await page.locator('svg.chart').waitFor();
    expect(problems).toEqual([]);

    const { page: other } = await pageAs('globex');
    const foreign = await other.goto(`${f.dashboard.url}/sessions/${session}/compactions/${row?.id}`);
    expect(foreign?.status()).toBe(404);
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

/** Sizes of a ledger row. */
interface Sizes {
  id: string;
  status: string;
  messages_before: number;
  messages_after: number;
  tokens_before: number;
  tokens_after: number;
}

function fmt(v: number | undefined): string {
  return v === undefined ? '?' : v.toLocaleString('en-US');
}

/** The line an action ends with, once it is no longer the "working" one. */
async function outcomeOf(page: Page, selector: string): Promise<string> {
  const out = page.locator(`${selector}:not(.outcome-running)`);
  await out.filter({ hasText: /\S/ }).waitFor({ timeout: 40_000 });
  return (await out.textContent()) ?? '';
}

/** What the tests call on the page's window (the project's TypeScript has no DOM types). */
interface BrowserWindow {
  getComputedStyle(element: unknown): { backgroundColor: string };
}
