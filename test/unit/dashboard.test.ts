/**
 * The dashboard's pure parts: credentials from the environment, authentication, the start-up
 * refusal, the chart and the escaping of untrusted text, the line "compact now" shows, the Bull
 * Board session link and its template without other origins.
 */
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES, TENANT_SCOPES } from '../../shared/contract/api-keys.ts';
import { ConfigError, loadConfig } from '../../worker/config/config.ts';
import {
  assertStartable,
  authenticate,
  type Credentials,
  DashboardConfigError,
  isLoopback,
  safeEqual,
} from '../../worker/http/dashboard/auth.ts';
import { sessionLink, withoutOtherOrigins } from '../../worker/http/dashboard/bull-board.ts';
import { niceMax, renderChart } from '../../worker/http/dashboard/chart.ts';
import { escapeHtml, href, preview } from '../../worker/http/dashboard/html.ts';
import { describeOutcome } from '../../worker/http/dashboard/outcome.ts';

const credentials: Credentials = {
  adminToken: 'admin-token-0123456789',
  adminUser: 'ops',
  adminPassword: 'ops-password-0123456789',
  tenantTokens: [
    { tenantId: 'acme', token: 'acme-token-0123456789' },
    { tenantId: 'a:b', token: 'ab-token-0123456789ab' },
  ],
};
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('dashboard configuration', () => {
  it('reads credentials and addresses from the environment', () => {
    const config = loadConfig({
      COMPACTOR_DASHBOARD_TOKEN: 'admin-token-0123456789',
      COMPACTOR_DASHBOARD_TOKENS: 'acme:acme-token-0123456789, tenant:with:colon:other-token-0123456789',
      COMPACTOR_DASHBOARD_PORT: '8080',
      COMPACTOR_METRICS_PORT: '9464',
    });
    expect(config.dashboard).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      adminToken: 'admin-token-0123456789',
      tenantTokens: [
        { tenantId: 'acme', token: 'acme-token-0123456789' },
        { tenantId: 'tenant:with:colon', token: 'other-token-0123456789' },
      ],
    });
    expect(config.metrics).toEqual({ port: 9464, host: '127.0.0.1', token: undefined });
    expect(loadConfig({}).metrics.port).toBeNull();
  });

  it('refuses weak, malformed or ambiguous credentials, naming the variable', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ COMPACTOR_DASHBOARD_TOKEN: 'short' }, /COMPACTOR_DASHBOARD_TOKEN: must be at least 16 characters/],
      [{ COMPACTOR_DASHBOARD_TOKENS: 'acme' }, /COMPACTOR_DASHBOARD_TOKENS: must be tenant:token pairs/],
      [{ COMPACTOR_DASHBOARD_TOKENS: 'acme:short' }, /the token of tenant "acme"/],
      [
        { COMPACTOR_DASHBOARD_TOKENS: 'a:same-token-0123456789,b:same-token-0123456789' },
        /reuses another tenant's token/,
      ],
      [
        { COMPACTOR_DASHBOARD_TOKENS: 'a:token-one-0123456789,a:token-two-0123456789' },
        /tenant "a" is given twice/,
      ],
      [
        { COMPACTOR_DASHBOARD_USER: 'ops' },
        /COMPACTOR_DASHBOARD_USER and COMPACTOR_DASHBOARD_PASSWORD go together/,
      ],
      [
        {
          COMPACTOR_DASHBOARD_TOKEN: 'shared-token-0123456789',
          COMPACTOR_DASHBOARD_TOKENS: 'a:shared-token-0123456789',
        },
        /a tenant token equals an admin secret/,
      ],
      [{ COMPACTOR_METRICS_PORT: '70000' }, /COMPACTOR_METRICS_PORT: must be 0 to 65535/],
    ];
    for (const [env, message] of bad) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(message);
    }
  });
});

describe('authentication', () => {
  it('knows the admin (every scope) and each tenant (every tenant scope) by bearer token or basic auth', async () => {
    expect(await authenticate('Bearer admin-token-0123456789', credentials)).toEqual({
      ok: true,
      principal: { role: 'admin', scopes: ALL_SCOPES },
    });
    expect(await authenticate('bearer acme-token-0123456789', credentials)).toEqual({
      ok: true,
      principal: { role: 'tenant', tenantId: 'acme', scopes: TENANT_SCOPES },
    });
    expect(await authenticate('Bearer ab-token-0123456789ab', credentials)).toMatchObject({
      principal: { tenantId: 'a:b' },
    });
    expect(await authenticate(basic('ops', 'ops-password-0123456789'), credentials)).toMatchObject({
      principal: { role: 'admin' },
    });
    expect(await authenticate(basic('acme', 'acme-token-0123456789'), credentials)).toMatchObject({
      principal: { role: 'tenant', tenantId: 'acme' },
    });
  });

  it('refuses anything else, saying why', async () => {
    expect(await authenticate(undefined, credentials)).toEqual({ ok: false, reason: 'missing' });
    const refused: Array<[string, string]> = [
      ['Bearer', 'malformed'],
      ['Bearer wrong', 'unknown_key'],
      ['Token admin-token-0123456789', 'malformed'],
      [basic('ops', 'acme-token-0123456789'), 'unknown_key'],
      [basic('acme', 'ops-password-0123456789'), 'unknown_key'],
      [basic('globex', 'acme-token-0123456789'), 'unknown_key'],
      ['Basic !!!', 'malformed'],
      [basic('', ''), 'unknown_key'],
      // Shaped like an issued key but not one (and no key store here).
      ['Bearer cpt_nothex_secret', 'malformed'],
    ];
    for (const [header, reason] of refused) {
      expect(await authenticate(header, credentials), header).toEqual({ ok: false, reason });
    }
    const tenantsOnly = {
      ...credentials,
      adminToken: undefined,
      adminUser: undefined,
      adminPassword: undefined,
    };
    expect(await authenticate(basic('', ''), tenantsOnly)).toEqual({ ok: false, reason: 'unknown_key' });
  });

  it('compares secrets of any length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });

  it('starts without credentials only when told --insecure on loopback', () => {
    const none: Credentials = {
      adminToken: undefined,
      adminUser: undefined,
      adminPassword: undefined,
      tenantTokens: [],
    };
    expect(() => assertStartable(none, '127.0.0.1', false)).toThrow(DashboardConfigError);
    expect(() => assertStartable(none, '127.0.0.1', false)).toThrow(/COMPACTOR_DASHBOARD_TOKEN/);
    expect(() => assertStartable(none, '0.0.0.0', true)).toThrow(/only allowed on a loopback host/);
    expect(() => assertStartable(none, '192.168.1.4', true)).toThrow(DashboardConfigError);
    expect(() => assertStartable(none, '127.0.0.1', true)).not.toThrow();
    expect(() => assertStartable(none, '::1', true)).not.toThrow();
    expect(() => assertStartable(credentials, '0.0.0.0', false)).not.toThrow();
    expect(['localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.example.com'].some(isLoopback)).toBe(
      false,
    );
  });
});

describe('pages', () => {
  it('escapes text for elements and attributes', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(href({ admin: true, tenantId: 'a&b' }, '/sessions/x', { cursor: 'c"d' })).toBe(
      '/sessions/x?tenant=a%26b&amp;cursor=c%22d',
    );
    expect(href({ admin: false, tenantId: 'acme' }, '/sessions')).toBe('/sessions');
  });

  it('clips a preview by characters, escaped, saying the full length', () => {
    expect(preview('<b>short</b>', 20)).toBe('&lt;b&gt;short&lt;/b&gt;');
    expect(preview('😀'.repeat(5), 3)).toBe('😀😀😀<span class="muted">… (5 characters)</span>');
    // A prefix Postgres cut: the full length comes from the database.
    expect(preview('a<b', 3, 9_000)).toBe('a&lt;b<span class="muted">… (9,000 characters)</span>');
  });

  it('draws one marker per ledger row and the size line through before → after', () => {
    const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 12, 0, s));
    const svg = renderChart({
      rows: [
        {
          id: 'c1',
          createdAt: at(10),
          status: 'applied',
          strategy: 'summarize',
          tokensBefore: 9_000,
          tokensAfter: 1_000,
          messagesBefore: 90,
          messagesAfter: 11,
        },
        {
          id: 'c2"><script>',
          createdAt: at(30),
          status: 'skipped',
          strategy: '<b>x</b>',
          tokensBefore: 4_000,
          tokensAfter: 4_000,
          messagesBefore: 40,
          messagesAfter: 40,
        },
      ],
      current: { at: at(50), tokens: 5_000, messages: 50 },
    });
    expect(svg).toMatch(/^<svg class="chart" data-compactions="2"/);
    expect(svg.match(/class="marker marker-applied"/g)).toHaveLength(2); // one per panel
    expect(svg.match(/class="marker marker-skipped"/g)).toHaveLength(2);
    expect(svg).not.toContain('<script>');
    expect(svg).not.toContain('<b>x</b>');
    expect(svg).toContain(
      'applied summarize at 2025-01-01 12:00:10Z: tokens 9,000 → 1,000, messages 90 → 11',
    );
    // Tokens: 9,000 → 1,000 at 10 s, 4,000 at 30 s, 5,000 now: four points on the path.
    const tokens = /<path class="series series-tokens" d="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(tokens.split(' ')).toHaveLength(4);
    expect(svg).toContain('>10k<');
  });

  it('marks a restore at the time of the restore, and its compaction as applied at its own time', () => {
    const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 12, 0, s));
    const svg = renderChart({
      rows: [
        {
          id: 'c1',
          createdAt: at(0),
          status: 'restored',
          restoredAt: at(60),
          strategy: 'summarize',
          tokensBefore: 9_000,
          tokensAfter: 1_000,
          messagesBefore: 90,
          messagesAfter: 11,
        },
        {
          id: 'c2',
          createdAt: at(20),
          status: 'skipped',
          strategy: 'none',
          tokensBefore: 2_000,
          tokensAfter: 2_000,
          messagesBefore: 20,
          messagesAfter: 20,
        },
      ],
      current: { at: at(100), tokens: 10_000, messages: 100 },
    });
    const attr = (name: string) => Number(new RegExp(`data-${name}="([\\d.]+)"`).exec(svg)?.[1]);
    const [t0, t1, x0, x1] = [attr('t0'), attr('t1'), attr('x0'), attr('x1')] as const;
    const xOf = (t: Date) => x0 + ((t.getTime() - t0) / (t1 - t0)) * (x1 - x0);
    const lineX = (kind: string, status: string) =>
      new RegExp(
        `class="marker marker-${status}" data-compaction="c1" data-kind="${kind}" data-at="(\\d+)"><title>[^<]*</title><line x1="([\\d.]+)"`,
      ).exec(svg);
    const restore = lineX('restore', 'restored');
    expect(Number(restore?.[1])).toBe(at(60).getTime());
    expect(Number(restore?.[2])).toBeCloseTo(xOf(at(60)), 0);
    const compaction = lineX('compaction', 'applied');
    expect(Number(compaction?.[1])).toBe(at(0).getTime());
    expect(Number(compaction?.[2])).toBeCloseTo(xOf(at(0)), 0);
    expect(svg.match(/data-kind="restore"/g)).toHaveLength(2); // one per panel
    expect(svg).toContain(
      'restored at 2025-01-01 12:01:00Z: the compaction summarize at 2025-01-01 12:00:00Z',
    );
    expect(svg).toContain('applied summarize at 2025-01-01 12:00:00Z: tokens 9,000 → 1,000');
    // The restore adds no guessed point: 9,000 → 1,000, 2,000, then the current 10,000.
    const tokens = /<path class="series series-tokens" d="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(tokens.split(' ')).toHaveLength(4);
  });

  it('rounds the axis up to 1, 2, 2.5 or 5 times a power of ten', () => {
    expect([1, 3, 7, 10, 11, 2_600, 19_374, 20_620].map(niceMax)).toEqual([
      1, 5, 10, 10, 20, 5_000, 20_000, 25_000,
    ]);
  });

  it("links a job to its session's page only when its data names one", () => {
    expect(sessionLink({ tenantId: 'a b', sessionId: 'x/y' })).toEqual({
      displayText: 'Session page',
      href: '/sessions/x%2Fy?tenant=a+b',
    });
    for (const data of [
      null,
      'x',
      { tenantId: 'a' },
      { tenantId: 1, sessionId: 'x' },
      { tenantId: '', sessionId: 'x' },
    ]) {
      expect(sessionLink(data)).toBeUndefined();
    }
  });

  it("takes the other origins' links out of Bull Board's template, and refuses one it cannot", () => {
    const template = [
      '<head>',
      '    <link rel="icon" type="image/svg+xml" href="<%= favIconDefault %>">',
      '    <link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>',
      '    <link href="https://fonts.googleapis.com/css2?family=IBM+Plex+Sans&display=swap" rel="stylesheet">',
      '<link href="//cdn.example/x.css" rel="stylesheet"><link href="static/css/main.1.css" rel="stylesheet"></head>',
    ].join('\n');
    expect(withoutOtherOrigins(template)).toBe(
      [
        '<head>',
        '    <link rel="icon" type="image/svg+xml" href="<%= favIconDefault %>">',
        '<link href="static/css/main.1.css" rel="stylesheet"></head>',
      ].join('\n'),
    );
    expect(() => withoutOtherOrigins('<script src="https://cdn.example/x.js"></script>')).toThrow(
      /references another origin: src="https:\/\/cdn\.example/,
    );
  });
});

describe('"compact now" outcome', () => {
  const result = (over: Record<string, unknown>) => ({
    status: 'applied',
    ledgerStatus: 'applied',
    compactionId: 'c1',
    messagesBefore: 120,
    messagesAfter: 11,
    reason: null,
    ...over,
  });
  const plain = { waitedMs: 1_234, coalesced: false };

  it('says what the ledger says, whichever job status the worker version reports', () => {
    expect(
      describeOutcome(
        { state: 'completed', result: result({}) },
        { ...plain, tokens: { before: 40_000, after: 3_210 } },
      ),
    ).toEqual({ outcome: 'applied', message: 'applied: messages 120 → 11, tokens 40,000 → 3,210' });
    // A skip, as today's worker reports it (status applied) and as the next one will (skipped).
    for (const status of ['applied', 'skipped']) {
      expect(
        describeOutcome(
          {
            state: 'completed',
            result: result({ status, ledgerStatus: 'skipped', reason: 'below every trigger' }),
          },
          plain,
        ),
      ).toEqual({ outcome: 'skipped', message: 'skipped: below every trigger' });
    }
    expect(
      describeOutcome({ state: 'completed', result: result({ status: 'duplicate' }) }, plain).message,
    ).toBe('already done by an earlier event: applied: messages 120 → 11');
    expect(
      describeOutcome(
        {
          state: 'completed',
          result: result({
            ledgerStatus: 'batched',
            compactionId: null,
            reason: 'queued for the next message batch',
          }),
        },
        plain,
      ),
    ).toEqual({ outcome: 'batched', message: 'queued for the next message batch' });
    expect(describeOutcome({ state: 'completed', result: null }, plain).outcome).toBe('unknown');
  });

  it('says a failure with its error, a job still running, and a coalesced event', () => {
    expect(describeOutcome({ state: 'failed', error: 'LLM said 400', attemptsMade: 1 }, plain)).toEqual({
      outcome: 'failed',
      message: 'failed: LLM said 400',
    });
    expect(
      describeOutcome(
        { state: 'running', jobState: 'delayed', attemptsMade: 2, lastError: 'timeout' },
        plain,
      ),
    ).toEqual({
      outcome: 'running',
      message:
        'still running after 1.2 s (job delayed; the last attempt failed: timeout); the ledger will show the outcome',
    });
    expect(describeOutcome({ state: 'unknown' }, plain).message).toBe(
      'the job is no longer in the queue; see the ledger',
    );
    expect(
      describeOutcome({ state: 'failed', error: 'x'.repeat(2_000), attemptsMade: 5 }, plain).message,
    ).toHaveLength('failed: '.length + 501);
    expect(
      describeOutcome({ state: 'completed', result: result({}) }, { ...plain, coalesced: true }).message,
    ).toBe('joined the compaction already waiting for this session; applied: messages 120 → 11');
  });
});
