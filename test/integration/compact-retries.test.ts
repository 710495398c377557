/**
 * `compactor compact` with the `anthropic` summarizer, run as a user runs it against the fake
 * Messages API: a 429 and a 529 are waited out as the worker would, and the compaction applies
 * once; when the last attempt fails too, it ends as a job's last attempt does (the strategy's
 * fallback summarizer, else a failed ledger row).
 */
import { describe, expect, it } from 'vitest';
import { createSession, loadContext } from '../../producer/index.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'acme';

describe('compactor compact: retries', () => {
  it('waits out a 429 and a 529 from the Messages API, then applies once', async () => {
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'busy', messages });
    ctx.fake.enqueue({ status: 429, retryAfter: 1 }, 'overloaded', 'ok');
    const requestsBefore = ctx.fake.requests.length;

    const run = await runCli(['compact', '--tenant', tenantId, '--session', 'busy'], {
      ...ctx.cliEnv,
      ANTHROPIC_API_KEY: 'sk-test',
      ANTHROPIC_BASE_URL: ctx.llm.url,
    });

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('429 from the Messages API: retrying in 1 s (attempt 2 of 5)');
    expect(run.stderr).toContain('529 from the Messages API: retrying in 2 s (attempt 3 of 5)');
    expect(JSON.parse(run.stdout)).toMatchObject({
      status: 'applied',
      trigger: 'manual',
      summarizer: 'anthropic',
    });
    expect(ctx.fake.requests.length - requestsBefore).toBe(3);
    const rows = await ctx.reads.history(tenantId, 'busy');
    expect(rows.map((r) => r.status)).toEqual(['applied']);
  });

  /** Five 429s: every attempt `compact` makes fails. */
  const everyAttemptRateLimited = () =>
    ctx.fake.enqueue(...Array.from({ length: 5 }, () => ({ status: 429, retryAfterMs: 10 }) as const));
  const env = () => ({ ...ctx.cliEnv, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: ctx.llm.url });

  it('summarizes offline when every attempt failed and the strategy falls back to extractive', async () => {
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'fallback', messages });
    const before = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'fallback' });
    everyAttemptRateLimited();
    const strategy = JSON.stringify({ type: 'summarize', keepRecent: 10, fallback: 'extractive' });

    const run = await runCli(
      ['compact', '--tenant', tenantId, '--session', 'fallback', '--strategy', strategy],
      env(),
    );

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('(attempt 5 of 5)');
    const row = JSON.parse(run.stdout);
    expect(row).toMatchObject({ status: 'applied', trigger: 'manual', summarizer: 'extractive' });
    expect(row.reason).toContain('fell back to extractive: anthropic failed on the last attempt');
    const rows = await ctx.reads.history(tenantId, 'fallback');
    expect(rows.map((r) => r.status)).toEqual(['applied']);
    const context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'fallback' });
    expect(context.messages.length).toBeLessThan(before.messages.length);
  });

  it('records a failed row and exits non-zero when every attempt failed and nothing falls back', async () => {
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 'failing', messages });
    const before = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'failing' });
    everyAttemptRateLimited();

    const run = await runCli(
      ['compact', '--tenant', tenantId, '--session', 'failing', '--strategy', 'summarize:10'],
      env(),
    );

    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('429');
    const rows = await ctx.reads.history(tenantId, 'failing');
    expect(rows.map((r) => [r.status, r.trigger])).toEqual([['failed', 'manual']]);
    expect(rows[0]?.error ?? rows[0]?.reason).toContain('429');
    const context = await loadContext(ctx.tdb.database.db, { tenantId, sessionId: 'failing' });
    expect(context.messages).toEqual(before.messages);
  });
});
