/**
 * Ids on the dashboard's pages: a session id written by SQL with a bidi override or an ANSI
 * escape is shown written out (`\u202e`), so the page cannot show another id than the real one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DashboardFixture, startDashboardFixture } from '../support/dashboard-fixture.ts';

/** Shows as "run-exe.png" with the override applied. */
const SPOOFED = 'run-\u202Egnp.exe\u001b[2J';
/** Bidi overrides and isolates, and C0/C1 controls other than tab and newline. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let f: DashboardFixture;

beforeAll(async () => {
  f = await startDashboardFixture();
  await f.tdb.database.sql`
    insert into sessions (tenant_id, id, agent_id, last_seq, message_count, token_count)
    values ('acme', ${SPOOFED}, ${'agent\u202E1'}, -1, 0, 0)`;
});

afterAll(async () => {
  await f?.close();
});

describe('the dashboard shows ids written out', () => {
  it('on the overview and the sessions list', async () => {
    for (const path of ['/', '/sessions']) {
      const response = await f.request('acme', path);
      const html = await response.text();
      expect(response.status, path).toBe(200);
      expect(html, path).not.toMatch(ACTIVE);
      expect(html, path).toContain('run-\\u202egnp.exe\\u001b[2J');
      expect(html, path).toContain('agent\\u202e1');
    }
  });
});
