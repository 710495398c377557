/**
 * The example agent (examples/agent-loop.ts) closes the loop: 42 requests with manual extended
 * thinking and tool calls, each built by loadContext, each reply appended as received, an event
 * after every run, a real worker compacting in between — and the strict fake Messages API, which
 * checks the turn structure and every thinking signature against its place, accepts all of them.
 * Nothing is lost: live + archived = appended.
 */
import Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileTool, runAgent, startSession } from '../../examples/agent-loop.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { jobIdOf } from '../../shared/protocol/events.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'agents';
const RUNS = 14;
/** Files the scripted model reads: a few kB of source each, so the session outgrows its trigger. */
const FILES = [
  'shared/contract/blocks.ts',
  'shared/planning/window.ts',
  'shared/context/render.ts',
  'producer/sessions.ts',
  'worker/postgres/effects.ts',
  'shared/policy/policy.ts',
  'worker/postgres/restore.ts',
];

beforeAll(() => {
  ctx.fake.strict = true;
});

describe('the example agent', () => {
  it('runs 42 requests with thinking and tools through several compactions, every one accepted', async () => {
    const db = ctx.tdb.database.db;
    await setPolicy(db, tenantId, null, {
      strategy: { type: 'summarize', keepRecent: 6, maxSummaryTokens: 1_000 },
      triggers: { maxTokens: 9_000 },
    });
    ctx.startWorker({ summarizers: { primary: createExtractiveSummarizer() }, concurrency: 2 });
    const sessionId = 'agent-loop';
    await startSession(db, { tenantId, sessionId, system: 'You are a careful coding assistant.' });
    const client = new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 });
    const options = {
      db,
      producer: ctx.producer,
      client,
      tenantId,
      sessionId,
      model: 'claude-sonnet-5',
      maxTokens: 2_048,
      thinking: { type: 'adaptive' } as const,
      tools: [readFileTool(process.cwd())],
    };

    let requests = 0;
    let appended = 1; // the system prompt
    let thinkingSentAfterCompaction = 0;
    for (let run = 0; run < RUNS; run++) {
      const [a, b] = [FILES[run % FILES.length] as string, FILES[(run + 3) % FILES.length] as string];
      ctx.fake.enqueue(
        {
          reply: {
            thinking: `Run ${run}: I need ${a}.`,
            text: 'Reading.',
            toolUse: [{ name: 'read_file', input: { path: a } }],
          },
        },
        { reply: { thinking: `Now ${b}.`, toolUse: [{ name: 'read_file', input: { path: b } }] } },
        { reply: { thinking: 'I have what I need.', text: `Run ${run} done: ${a} and ${b} read.` } },
      );
      const before = ctx.fake.requests.length;
      const compactedBefore = await appliedCompactions();
      const result = await runAgent(options, `Run ${run}: read two files and tell me what they do.`);
      expect(result.requests).toBe(3);
      expect(result.text).toBe(`Run ${run} done: ${a} and ${b} read.`);
      requests += result.requests;
      appended += 1 + 3 + 2;
      if (compactedBefore > 0) {
        // Thinking of this run's own turns was signed over the compacted history: it went back.
        const sent = ctx.fake.requests.slice(before).map((r) => JSON.stringify(r.body));
        thinkingSentAfterCompaction += sent.filter((body) => body.includes('"type":"thinking"')).length;
      }
      await waitFor(async () => {
        const state = await ctx.producer.queue.getJobState(jobIdOf(tenantId, result.eventId));
        return state === 'completed' || state === 'failed' ? state : undefined;
      }, 30_000);
      expect(await ctx.producer.queue.getJobState(jobIdOf(tenantId, result.eventId))).toBe('completed');
    }

    expect(requests).toBeGreaterThanOrEqual(40);
    expect(await appliedCompactions()).toBeGreaterThanOrEqual(3);
    expect(thinkingSentAfterCompaction).toBeGreaterThan(0);
    // Every request the agent sent was answered 200: runAgent throws on a 400 (no retries).
    expect(ctx.fake.requests.filter((r) => r.path.startsWith('/v1/messages')).length).toBe(requests);
    const report = await audit(db, tenantId, sessionId);
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(appended);
    // Each compaction's payback was predicted, and measured from the runs reported after it.
    const ledger = await ctx.tdb.database.sql<
      { ratio: number | null; requests: number | null; sent: number | null; without: number | null }[]
    >`select payback_ratio::float8 as ratio, measured_requests as requests, measured_tokens_sent::int as sent,
             measured_tokens_without::int as without
        from compactions where tenant_id = ${tenantId} and status = 'applied' order by created_at`;
    expect(ledger.every((r) => r.ratio !== null)).toBe(true);
    for (const r of ledger.slice(0, -1)) {
      expect(r.requests).toBeGreaterThanOrEqual(1);
      expect(r.without).toBeGreaterThan(r.sent ?? Number.POSITIVE_INFINITY);
    }
  });
});

async function appliedCompactions(): Promise<number> {
  const [row] = await ctx.tdb.database.sql<{ n: number }[]>`
    select count(*)::int as n from compactions where tenant_id = ${tenantId} and status = 'applied'`;
  return row?.n ?? 0;
}
