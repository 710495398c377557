/**
 * `compactor compact` with the `anthropic` summarizer, run as a user runs it (a child process)
 * against the fake Messages API: a 429 and a 529 are waited out as the worker would, and the
 * compaction applies once.
 */
import { describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
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
    const rows = await ctx.store.history(tenantId, 'busy');
    expect(rows.map((r) => r.status)).toEqual(['applied']);
  });
});
