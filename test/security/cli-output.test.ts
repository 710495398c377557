/**
 * What the `compactor` command prints about hostile ids, and what it refuses. Ids are checked when
 * they come in, but a row written by SQL (or an older release) may hold an ANSI escape or a bidi
 * override: no command may let one reach the terminal. An event for a session the tenant does not
 * have is refused by `compactor enqueue` before anything is enqueued.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { appendMessages, createSession } from '../../producer/index.ts';
import { runCli } from '../support/cli.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();

/** A session id as SQL could have written it: red text, a screen clear, and a bidi override. */
const HOSTILE = 'run\u001b[31m-red\u001b[2J\u202Egnp.exe\u009b1m';
const TENANT = 'acme\u001b]0;pwned\u0007';
/** Characters that act on a terminal or reorder what it shows. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

beforeAll(async () => {
  await ctx.tdb.database.sql`
    insert into sessions (tenant_id, id, last_seq, message_count, token_count)
    values (${TENANT}, ${HOSTILE}, -1, 0, 0)`;
  await appendMessages(
    ctx.tdb.database.db,
    TENANT,
    HOSTILE,
    Array.from(
      { length: 12 },
      (_, i) => ({ message: { role: i % 2 === 0 ? 'user' : 'assistant', content: `turn ${i}` } }) as const,
    ),
  );
  await createSession(ctx.tdb.database.db, { tenantId: 'acme', sessionId: 'plain', messages: [] });
});

describe('ids printed by the CLI', () => {
  it('compact --dry-run writes the escapes out instead of sending them to the terminal', async () => {
    const run = await runCli(
      ['compact', '--tenant', TENANT, '--session', HOSTILE, '--strategy', 'slidingWindow:4', '--dry-run'],
      ctx.cliEnv,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(ACTIVE);
    expect(run.stdout).toContain('session "run\\u001b[31m-red\\u001b[2J\\u202egnp.exe\\u009b1m"');
    expect(run.stdout).toContain('tenant "acme\\u001b]0;pwned\\u0007"');
  });

  it('compact --dry-run --json, sessions list and its --json keep the id readable and inert', async () => {
    const json = await runCli(
      [
        'compact',
        '--tenant',
        TENANT,
        '--session',
        HOSTILE,
        '--strategy',
        'slidingWindow:4',
        '--dry-run',
        '--json',
      ],
      ctx.cliEnv,
    );
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(json.stdout).sessionId).toBe(HOSTILE); // the same JSON to a parser
    const table = await runCli(['sessions', 'list', '--tenant', TENANT], ctx.cliEnv);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).not.toMatch(ACTIVE);
    expect(table.stdout).toContain('\\u202egnp.exe');
    const lines = await runCli(['sessions', 'list', '--tenant', TENANT, '--json'], ctx.cliEnv);
    expect(lines.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(lines.stdout).id).toBe(HOSTILE);
  });

  it('errors quoting an id escape it too', async () => {
    const run = await runCli(['history', '--tenant', TENANT, '--session', `${HOSTILE}-gone`], ctx.cliEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(ACTIVE);
    expect(run.stderr).toContain('\\u001b[31m');
  });
});

describe('compactor enqueue', () => {
  it('refuses a session the tenant does not have (exit 1), and enqueues nothing', async () => {
    const run = await runCli(['enqueue', '--tenant', 'acme', '--session', 'never-created'], ctx.cliEnv);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toBe('compactor enqueue: session "never-created" not found for tenant "acme"');
    expect(await ctx.producer.queue.getJobCounts('waiting', 'delayed', 'prioritized')).toEqual({
      waiting: 0,
      delayed: 0,
      prioritized: 0,
    });
  });

  it("refuses another tenant's session the same way", async () => {
    const run = await runCli(['enqueue', '--tenant', 'globex', '--session', HOSTILE], ctx.cliEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^compactor enqueue: session ".*" not found for tenant "globex"\n$/);
  });

  it('enqueues for a session that exists', async () => {
    const run = await runCli(
      ['enqueue', '--tenant', 'acme', '--session', 'plain', '--event-id', 'evt-1'],
      ctx.cliEnv,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ jobId: 'acme~evt-1', coalesced: false });
  });
});
