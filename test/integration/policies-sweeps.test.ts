/**
 * Policies, triggers, sweeps and the new-session transition, end to end on real Redis, Postgres and
 * BullMQ: policy precedence, triggers and the storm guard, sweeps that overlap with events, the
 * scheduler, and a child session that continues the compacted history.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appendMessages,
  appendToLiveSession,
  createSession,
  liveSessionOf,
  SessionContinuedError,
} from '../../producer/index.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { PolicyInput } from '../../shared/policy/policy.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import type { CompactionWorker } from '../../worker/queue/compaction/worker.ts';
import { runSweep, SWEEP_QUEUE, startSweepService } from '../../worker/queue/sweeps/sweep.ts';
import { openServices } from '../../worker/runtime/services.ts';
import { runCli } from '../support/cli.ts';
import { loadCorpusSession, silentLogger, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
let summaries = 0;

/** The extractive summarizer, counting its calls (a stand-in for money spent on an LLM). */
const counting: Summarizer = {
  name: 'extractive',
  summarize(input) {
    summaries++;
    return createExtractiveSummarizer().summarize(input);
  },
};

afterEach(async () => {
  await ctx.closeWorkers();
});

function worker(concurrency = 4): CompactionWorker {
  return ctx.startWorker({ summarizers: { primary: counting }, concurrency });
}

async function seed(
  tenantId: string,
  sessionId: string,
  agentId: string | null = null,
  corpus = 'sweagent__ctf-web-i_got_id',
) {
  const messages = await loadCorpusSession(corpus);
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, agentId, messages });
  return messages;
}

async function event(tenantId: string, sessionId: string, extra: Record<string, unknown> = {}) {
  const eventId = randomUUID();
  await ctx.producer.runCompleted({ eventId, tenantId, sessionId, ...extra });
  await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(jobIdOf(tenantId, eventId));
    return s === 'completed' || s === 'failed' ? s : undefined;
  });
  return eventId;
}

const policy = (tenantId: string, agentId: string | null, input: PolicyInput) =>
  setPolicy(ctx.tdb.database.db, tenantId, agentId, input);

describe('policies', () => {
  it('event override > agent policy > tenant policy > built-in default', async () => {
    const t = 'prec';
    await policy(t, null, { strategy: { type: 'slidingWindow', maxMessages: 30 } });
    await policy(t, 'coder', { strategy: { type: 'slidingWindow', maxMessages: 20 } });
    await seed(t, 'by-agent', 'coder');
    await seed(t, 'by-tenant', 'other');
    await seed(t, 'by-event', 'coder');
    await seed('nopolicy', 'by-default');
    worker();
    await event(t, 'by-agent');
    await event(t, 'by-tenant');
    await event(t, 'by-event', { strategy: { type: 'slidingWindow', maxMessages: 10 } });
    await event('nopolicy', 'by-default');
    const ledgerOf = async (tenant: string, s: string) => (await ctx.reads.history(tenant, s))[0];
    // The window keeps N, plus the pinned system prompt, plus at most a tool call kept with its result.
    const keptAbout = (n: number) => ({
      status: 'applied',
      strategy: 'slidingWindow',
      messagesAfter: expect.toSatisfy((m: number) => m > n && m <= n + 2),
    });
    expect(await ledgerOf(t, 'by-agent')).toMatchObject(keptAbout(20));
    expect(await ledgerOf(t, 'by-tenant')).toMatchObject(keptAbout(30));
    expect(await ledgerOf(t, 'by-event')).toMatchObject(keptAbout(10));
    expect(await ledgerOf('nopolicy', 'by-default')).toMatchObject({
      status: 'applied',
      strategy: 'summarize',
    });
  });

  it('records an event below every trigger as skipped, with no summary paid for', async () => {
    const t = 'below';
    await policy(t, null, { strategy: { type: 'summarize', keepRecent: 5 }, triggers: { maxMessages: 500 } });
    await seed(t, 's');
    worker();
    const before = summaries;
    await event(t, 's');
    const [row] = await ctx.reads.history(t, 's');
    expect(row).toMatchObject({ status: 'skipped', reason: 'below every trigger: 64 of 500 messages' });
    expect(summaries).toBe(before);
  });

  it('storm guard: a compaction that cannot get under the trigger is not retried on every event', async () => {
    const t = 'storm';
    // Pinned messages alone are over the token trigger: no compaction can help.
    await policy(t, null, {
      strategy: { type: 'slidingWindow', maxMessages: 5 },
      triggers: { maxTokens: 1_000 },
    });
    const messages = (await loadCorpusSession('sweagent__ctf-web-i_got_id')).map((m) => ({
      ...m,
      pinned: true,
    }));
    await createSession(ctx.tdb.database.db, { tenantId: t, sessionId: 's', messages });
    worker();
    await event(t, 's');
    await event(t, 's');
    await event(t, 's');
    const rows = await ctx.reads.history(t, 's');
    expect(rows.map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(rows[0]?.reason).toMatch(/^nothing can leave/);
    expect(rows[1]?.reason).toMatch(/^storm guard: /);
    expect(rows[2]?.reason).toMatch(/^storm guard: /);
    // Enough new messages lift the guard.
    await appendMessages(
      ctx.tdb.database.db,
      t,
      's',
      Array.from({ length: 5 }, (_, i) => ({
        role: 'user' as const,
        kind: 'message' as const,
        content: `more ${i}`,
      })),
    );
    await event(t, 's');
    const last = (await ctx.reads.history(t, 's')).at(-1);
    expect(last?.reason).not.toMatch(/^storm guard/);
  });

  it("storm guard: a manual compaction with a looser strategy does not hold back the policy's own", async () => {
    const t = 'storm-manual';
    await policy(t, null, {
      strategy: { type: 'slidingWindow', maxMessages: 5 },
      triggers: { maxMessages: 20 },
    });
    await seed(t, 's');
    const manual = await runCli(
      ['compact', '--tenant', t, '--session', 's', '--strategy', 'slidingWindow:40'],
      ctx.cliEnv,
    );
    expect(manual.code, manual.stderr).toBe(0);
    // Still over the trigger of 20 messages: the looser run could not have got under it.
    expect(JSON.parse(manual.stdout)).toMatchObject({
      status: 'applied',
      trigger: 'manual',
      messagesAfter: expect.toSatisfy((m: number) => m > 20),
    });
    worker();
    await event(t, 's');
    const last = (await ctx.reads.history(t, 's')).at(-1);
    expect(last).toMatchObject({
      status: 'applied',
      trigger: 'event',
      strategy: 'slidingWindow',
      messagesAfter: expect.toSatisfy((m: number) => m <= 7),
    });
    expect(violations(await audit(ctx.tdb.database.db, t, 's'))).toEqual([]);
  });

  it('policy set/get/list on the command line, refusing a bad policy and naming the field', async () => {
    const env = ctx.cliEnv;
    const set = await runCli(
      ['policy', 'set', '--tenant', 'cli', '--agent', 'a1', '--policy', '{"strategy":{"type":"none"}}'],
      env,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      tenantId: 'cli',
      agentId: 'a1',
      policy: { mode: 'inPlace' },
    });
    const bad = await runCli(
      [
        'policy',
        'set',
        '--tenant',
        'cli',
        '--policy',
        '{"strategy":{"type":"slidingWindow","maxMessages":0}}',
      ],
      env,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('policy.strategy.maxMessages');
    const list = await runCli(['policy', 'list', '--tenant', 'cli'], env);
    expect(list.stdout.trim().split('\n')).toHaveLength(1);
    const get = await runCli(['policy', 'get', '--tenant', 'cli'], env);
    expect(get.code).toBe(1);
    expect(get.stderr).toContain('no policy for tenant "cli"');
  });
});

describe('sweeps', () => {
  it('finds sessions over their trigger; --dry-run only lists them', async () => {
    const t = 'sweepdry';
    await policy(t, null, {
      strategy: { type: 'slidingWindow', maxMessages: 10 },
      triggers: { maxMessages: 50 },
    });
    await seed(t, 'big'); // 64 messages
    await seed(t, 'small', null, 'sweagent__ctf-rev-rock'); // 37 messages
    const dry = await runSweep(ctx.tdb.database.db, null, { dryRun: true });
    expect(dry.sample.filter((d) => d.tenantId === t)).toEqual([
      { tenantId: t, sessionId: 'big', compactionVersion: 0, reason: '64 messages, over the limit of 50' },
    ]);
    const env = ctx.cliEnv;
    const cli = await runCli(['sweep', '--dry-run'], env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('"sessionId":"big"');
    expect(cli.stdout).not.toContain('"sessionId":"small"');
    expect(await ctx.reads.history(t, 'big')).toEqual([]);
    expect(await ctx.producer.queue.getJobCounts('waiting', 'active', 'delayed')).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
    });
  });

  it('repeated sweeps overlapping with events compact each session once', async () => {
    const t = 'overlap';
    await policy(t, null, { strategy: { type: 'summarize', keepRecent: 10 }, triggers: { maxMessages: 40 } });
    const ids = Array.from({ length: 6 }, (_, i) => `s${i}`);
    for (const id of ids) await seed(t, id);
    worker(4);
    worker(4);
    await Promise.all([
      ...ids.map((id) => ctx.producer.runCompleted({ eventId: randomUUID(), tenantId: t, sessionId: id })),
      runSweep(ctx.tdb.database.db, ctx.producer),
      runSweep(ctx.tdb.database.db, ctx.producer),
    ]);
    await runSweep(ctx.tdb.database.db, ctx.producer);
    await waitFor(async () => {
      const c = await ctx.producer.queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(c).every((n) => n === 0);
    }, 30_000);
    for (const id of ids) {
      const rows = await ctx.reads.history(t, id);
      expect(
        rows.filter((r) => r.status === 'applied'),
        id,
      ).toHaveLength(1);
    }
    const report = await audit(ctx.tdb.database.db, t);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(64 * ids.length);
  });

  it('creates the scheduler once however many workers start', async () => {
    const config = { ...ctx.config, sweepEveryMs: 60_000 };
    const services = [0, 1, 2].map(() => openServices(config, silentLogger, { poolSize: 1 }));
    const sweeps = await Promise.all(services.map((s) => startSweepService(s)));
    const queue = ctx.queue(SWEEP_QUEUE);
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => [s.key, s.every])).toEqual([['compactor-sweep', 60_000]]);
    } finally {
      // The sweep workers first: obliterating a queue they still poll can deadlock with them on
      // the PostgreSQL backend.
      for (const s of sweeps) await s.close();
      await queue.obliterate({ force: true });
      for (const s of services) await s.close();
    }
  });
});

describe('the context size the agent reports', () => {
  it('fires a token trigger the estimate alone would not, and is cleared by the compaction', async () => {
    const t = 'reported';
    await policy(t, null, {
      strategy: { type: 'slidingWindow', maxMessages: 10 },
      triggers: { maxTokens: 50_000 },
    });
    await seed(t, 's');
    worker();
    const reported = () => ctx.tdb.database.sql`
      select reported_input_tokens, reported_token_count::int, token_count::int
      from sessions where tenant_id = ${t} and id = 's'`;
    // By compactor's estimate the session is far below 50,000 tokens: skipped.
    await event(t, 's');
    expect((await ctx.reads.history(t, 's')).at(-1)).toMatchObject({ status: 'skipped' });
    // The agent says its last request was 60,000 tokens (images, tools, system prompt).
    await event(t, 's', { inputTokens: 60_000 });
    const [row] = (await ctx.reads.history(t, 's')).slice(-1);
    expect(row).toMatchObject({ status: 'applied' });
    expect(row?.reason).toBeNull();
    const [after] = await reported();
    expect(after).toMatchObject({ reported_input_tokens: null, reported_token_count: null });
    // A report without a compaction stays, with the estimate it was made at.
    await event(t, 's', { inputTokens: 1_000 });
    const [kept] = await reported();
    expect(kept).toMatchObject({ reported_input_tokens: 1_000, reported_token_count: kept?.token_count });
    expect((await ctx.reads.history(t, 's')).at(-1)?.reason).toMatch(
      /1000 of 50000 tokens \(as the agent reported them\)/,
    );
  });

  it('refuses a negative or fractional report, naming the field', async () => {
    await expect(
      ctx.producer.runCompleted({
        eventId: randomUUID(),
        tenantId: 'reported',
        sessionId: 's',
        inputTokens: -1,
      }),
    ).rejects.toThrow(/inputTokens/);
  });
});

describe('new-session transition', () => {
  it('continues the compacted history in a child; the parent stays whole and points to it', async () => {
    const t = 'lineage';
    await policy(t, null, { strategy: { type: 'summarize', keepRecent: 10 }, mode: 'newSession' });
    const original = await seed(t, 'root');
    worker();
    await event(t, 'root');
    const [row] = await ctx.reads.history(t, 'root');
    expect(row).toMatchObject({
      status: 'applied',
      mode: 'newSession',
      childSessionId: 'root.v1',
      messagesArchived: 0,
    });
    const parent = await ctx.tdb.database.sql`
      select count(*)::int as n from messages where tenant_id = ${t} and session_id = 'root'`;
    expect(parent[0]?.n).toBe(original.length);
    const [child] = await ctx.tdb.database.sql`
      select parent_session_id, message_count from sessions where tenant_id = ${t} and id = 'root.v1'`;
    expect(child).toMatchObject({ parent_session_id: 'root', message_count: row?.messagesAfter });
    expect(await liveSessionOf(ctx.tdb.database.db, t, 'root')).toBe('root.v1');

    // The child grows and transitions again; the lineage resolves to the grandchild in one call.
    await appendMessages(
      ctx.tdb.database.db,
      t,
      'root.v1',
      Array.from({ length: 20 }, (_, i) => ({
        role: 'user' as const,
        kind: 'message' as const,
        content: `step ${i} ${'x'.repeat(400)}`,
      })),
    );
    await event(t, 'root.v1');
    expect(await liveSessionOf(ctx.tdb.database.db, t, 'root')).toBe('root.v1.v1');
    // An event for the parent is skipped: its history continues elsewhere.
    await event(t, 'root');
    expect((await ctx.reads.history(t, 'root')).at(-1)?.reason).toBe(
      'the session continued in session "root.v1"',
    );
    expect(violations(await audit(ctx.tdb.database.db, t))).toEqual([]);
  });

  it('refuses an append to a frozen parent, naming the live session; appendToLiveSession follows it', async () => {
    const t = 'frozen';
    await policy(t, null, { strategy: { type: 'summarize', keepRecent: 10 }, mode: 'newSession' });
    await seed(t, 'root');
    worker();
    await event(t, 'root');
    expect(await liveSessionOf(ctx.tdb.database.db, t, 'root')).toBe('root.v1');
    const counts = () => ctx.tdb.database.sql`
      select id, last_seq::int, message_count, (select count(*)::int from messages m
        where m.tenant_id = s.tenant_id and m.session_id = s.id) as rows
      from sessions s where tenant_id = ${t} order by id`;
    const before = await counts();
    const late = [{ role: 'user' as const, kind: 'message' as const, content: 'one more thing' }];

    const refused = appendMessages(ctx.tdb.database.db, t, 'root', late);
    await expect(refused).rejects.toBeInstanceOf(SessionContinuedError);
    await expect(refused).rejects.toThrow('session "root" continued in session "root.v1"');
    expect(await counts()).toEqual(before);

    const appended = await appendToLiveSession(ctx.tdb.database.db, t, 'root', late);
    expect(appended.sessionId).toBe('root.v1');
    const after = await counts();
    expect(after.find((r) => r.id === 'root')).toEqual(before.find((r) => r.id === 'root'));
    const child = after.find((r) => r.id === 'root.v1');
    expect(child?.rows).toBe((before.find((r) => r.id === 'root.v1')?.rows ?? 0) + 1);
    expect(appended.seqs).toEqual([child?.last_seq]);
    expect(violations(await audit(ctx.tdb.database.db, t))).toEqual([]);
  });
});
