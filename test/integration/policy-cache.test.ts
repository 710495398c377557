/**
 * The policies a worker's jobs read are cached in the worker and kept current by LISTEN/NOTIFY
 * (worker/postgres/policy-cache.ts): a policy changed by another process is what the next job uses,
 * and the cache is emptied when its listening connection comes back after a loss.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import type { Services } from '../../worker/runtime/services.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { runCompactor } from '../support/processes.ts';

const ctx = useIntegration();

const messages = Array.from({ length: 6 }, (_, seq) => ({
  seq,
  message: { role: seq % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `turn ${seq}` },
}));

/** The strategy the next job of (tenant, session) would take from the agent's policy. */
async function agentStrategy(services: Services, tenantId: string, sessionId: string) {
  return (await services.reads.loadGate(tenantId, sessionId)).agentPolicy?.strategy;
}

/** Changes the agent's policy by hand, as SQL without the notification policy writes send. */
async function changeSilently(tenantId: string, agentId: string, maxMessages: number) {
  const strategy = JSON.stringify({ type: 'slidingWindow', maxMessages });
  await ctx.tdb.database.sql`
    update compaction_policies
    set policy = jsonb_set(policy::jsonb, '{strategy}', ${strategy}::jsonb)::json
    where tenant_id = ${tenantId} and agent_id = ${agentId}`;
}

/** The window of the strategy the next job would take from the agent's policy (null: not a window). */
async function agentWindow(services: Services, tenantId: string, sessionId: string) {
  const strategy = await agentStrategy(services, tenantId, sessionId);
  return strategy?.type === 'slidingWindow' ? strategy.maxMessages : null;
}

describe('policies cached in the worker', () => {
  it('a job reads the policy another process set, and the cache holds it until a change is notified', async () => {
    const tenantId = 'cache-t1';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 's1', agentId: 'a1', messages });
    await setPolicy(ctx.tdb.database.db, tenantId, 'a1', {
      strategy: { type: 'slidingWindow', maxMessages: 50 },
    });
    const services = ctx.services();
    expect(await agentStrategy(services, tenantId, 's1')).toMatchObject({ type: 'slidingWindow' });
    // Cached once the LISTEN is up.
    await waitFor(async () => (await agentStrategy(services, tenantId, 's1')) && services.policies.size > 0);

    // A change that notifies no one is not seen: the job reads the cache, not Postgres.
    await changeSilently(tenantId, 'a1', 7);
    expect(await agentWindow(services, tenantId, 's1')).toBe(50);

    // Another process sets the policy: the NOTIFY of its transaction drops the entry.
    const set = await runCompactor(
      ['policy', 'set', '--tenant', tenantId, '--agent', 'a1', '--policy', '{"strategy":{"type":"none"}}'],
      ctx.cliEnv,
    );
    expect(set.code, set.stderr).toBe(0);
    await waitFor(async () => (await agentStrategy(services, tenantId, 's1'))?.type === 'none');

    // The next job runs under it.
    ctx.startWorker({ services, concurrency: 1 });
    const eventId = randomUUID();
    await ctx.producer.runCompleted({ eventId, tenantId, sessionId: 's1' });
    const row = await waitFor(async () => {
      const [found] = await ctx.tdb.database.sql<{ strategy: string }[]>`
        select strategy from compactions where tenant_id = ${tenantId} and event_id = ${eventId}`;
      return found;
    });
    expect(row.strategy).toBe('none');
    await ctx.closeWorkers();
  });

  it("drops every agent's entry of a tenant whose own policy changed", async () => {
    const tenantId = 'cache-t2';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 's1', agentId: 'a1', messages });
    await setPolicy(ctx.tdb.database.db, tenantId, null, {
      strategy: { type: 'slidingWindow', maxMessages: 40 },
    });
    const services = ctx.services();
    const tenantStrategy = async () => (await services.reads.loadGate(tenantId, 's1')).tenantPolicy?.strategy;
    await waitFor(async () => (await tenantStrategy()) && services.policies.size > 0);
    await setPolicy(ctx.tdb.database.db, tenantId, null, { strategy: { type: 'none' } });
    await waitFor(async () => (await tenantStrategy())?.type === 'none');
    await services.close();
  });

  it('empties the cache when the listening connection is established again', async () => {
    const tenantId = 'cache-t3';
    await createSession(ctx.tdb.database.db, { tenantId, sessionId: 's1', agentId: 'a1', messages });
    await setPolicy(ctx.tdb.database.db, tenantId, 'a1', {
      strategy: { type: 'slidingWindow', maxMessages: 50 },
    });
    const services = ctx.services();
    await waitFor(async () => (await agentStrategy(services, tenantId, 's1')) && services.policies.size > 0);
    await changeSilently(tenantId, 'a1', 7);
    expect(await agentWindow(services, tenantId, 's1')).toBe(50);

    // The listening connection is lost (the only one: the other tests closed theirs); notifications
    // sent meanwhile would be missed.
    const listeners = () => ctx.tdb.database.sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = current_database() and query = 'listen "compactor_policy_changes"'`;
    const [before] = await listeners();
    expect(await listeners()).toHaveLength(1);
    await ctx.tdb.database.sql`select pg_terminate_backend(${before?.pid as number})`;

    // postgres.js listens again on a new connection, and the cache starts over from Postgres.
    await waitFor(async () => (await agentWindow(services, tenantId, 's1')) === 7);
    const after = await listeners();
    expect(after).toHaveLength(1);
    expect(after[0]?.pid).not.toBe(before?.pid);
  });
});
