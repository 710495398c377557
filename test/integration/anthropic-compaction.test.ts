/**
 * The `anthropic-compaction` summarizer end to end: an agent session built against the strict fake
 * Messages API (thinking signed by it), compacted by Anthropic's on-demand compaction (beta
 * `compact-2026-09-04`), then continued from `loadContext`: the block comes first, the kept turns
 * keep their thinking exactly when the documented conditions hold, and the fake (which binds
 * thinking to the block as the API does) accepts the next request. Also a real Claude Code
 * session, and the documented failures.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { appendToLiveSession, createSession, type LoadedContext, loadContext } from '../../producer/index.ts';
import type { Block } from '../../shared/contract/blocks.ts';
import { SummaryRejectedError } from '../../shared/contract/errors.ts';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { COMPACTION_BETA } from '../../shared/summary/compaction-block.ts';
import { costUsd } from '../../shared/summary/pricing.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { createAnthropicCompactionSummarizer } from '../../worker/summarizers/anthropic-compaction.ts';
import { waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { ADAPTIVE_THINKING } from '../support/models.ts';

const MODEL = 'claude-sonnet-4-6';
const ctx = useIntegration({ anthropic: true, config: { model: MODEL } });
const tenantId = 'compact-api';
const SYSTEM = 'You are a careful coding agent.';
const TOOLS = [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' as const } }];
const CLAUDE_CODE = fileURLToPath(
  new URL('../../corpus/claude-code/general-tool-calls.jsonl', import.meta.url),
);
const THINKING = new Set(['thinking', 'redacted_thinking']);
/** A tool's output of about 1,500 tokens: what makes a coding agent's history worth compacting. */
const OUTPUT = (i: number) =>
  Array.from(
    { length: 120 },
    (_, n) => `src/mod${i}.ts:${n + 1}: const value${n} = compute(${n}); // ok`,
  ).join('\n');
let client: Anthropic;

beforeAll(() => {
  ctx.fake.strict = true;
  client = new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 });
});

afterEach(() => {
  expect(ctx.fake.pending, 'every scripted answer was used').toBe(0);
  ctx.fake.acceptForeignSignatures = false;
});

const db = () => ctx.tdb.database.db;
const summarizers = () => ({
  'anthropic-compaction': createAnthropicCompactionSummarizer({
    apiKey: 'test',
    baseURL: ctx.llm.url,
    model: MODEL,
  }),
});
const strategy = (extra: Partial<Extract<Strategy, { type: 'summarize' }>> = {}): Strategy => ({
  type: 'summarize',
  keepRecent: 4,
  cutAtUserTurn: true,
  maxSummaryTokens: 2_000,
  summarizer: 'anthropic-compaction',
  ...extra,
});

/** Sends `context` plus `next` as the agent's next request, with the betas it names. */
function send(context: LoadedContext, next: Anthropic.MessageParam[]) {
  return client.messages.create(
    {
      model: MODEL,
      max_tokens: 2_048,
      thinking: ADAPTIVE_THINKING,
      system: context.system ?? SYSTEM,
      tools: TOOLS,
      messages: [...context.messages, ...next],
    },
    context.betas.length > 0 ? { headers: { 'anthropic-beta': context.betas.join(',') } } : {},
  );
}

/**
 * One agent run: a user message, a thinking tool call, its result, a thinking answer; each model
 * turn made by the fake from the loaded context and appended as received, with its version.
 */
async function agentRun(sessionId: string, i: number) {
  const user: Anthropic.MessageParam = { role: 'user', content: `task ${i}: edit src/mod${i}.ts` };
  await appendToLiveSession(db(), tenantId, sessionId, [user]);
  for (const step of ['call', 'answer'] as const) {
    const context = await loadContext(db(), { tenantId, sessionId });
    ctx.fake.enqueue({
      reply:
        step === 'call'
          ? {
              thinking: `plan ${i}`,
              toolUse: [{ name: 'bash', input: { command: `sed -i s/a/b/ src/mod${i}.ts` } }],
            }
          : { thinking: `check ${i}`, text: `edited src/mod${i}.ts` },
    });
    const reply = await send(context, []);
    const content = reply.content as unknown as Anthropic.ContentBlockParam[];
    const messages: Anthropic.MessageParam[] = [{ role: 'assistant', content }];
    const call = content.find((b) => b.type === 'tool_use');
    if (call && call.type === 'tool_use') {
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, content: OUTPUT(i) }],
      });
    }
    await appendToLiveSession(db(), tenantId, sessionId, messages, { contextVersion: context.version });
  }
}

/** A session of `runs` agent runs under a pinned system prompt; `tools` declared or not. */
async function agentSession(sessionId: string, runs: number, declareTools: boolean) {
  await createSession(db(), {
    tenantId,
    sessionId,
    messages: [{ seq: 0, message: { role: 'system', content: SYSTEM }, pinned: true }],
    ...(declareTools ? { tools: TOOLS } : {}),
  });
  for (let i = 0; i < runs; i++) await agentRun(sessionId, i);
}

async function compact(sessionId: string, s: Strategy = strategy()) {
  const outcome = await ctx.compactInProcess(
    { tenantId, sessionId, strategy: s },
    { summarizers: { named: summarizers() } },
  );
  if (outcome.row === null) throw new Error('a manual compaction is never batched');
  return outcome.row;
}

const thinkingOf = (context: LoadedContext) =>
  context.messages
    .flatMap((m) => (typeof m.content === 'string' ? [] : (m.content as unknown as Block[])))
    .filter((b) => THINKING.has(b.type));

async function rowsOf(sessionId: string) {
  return ctx.tdb.database.sql<{ seq: number; kind: string; blocks: string }[]>`
    select seq::int, kind, content_blocks::text as blocks from messages
    where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

describe('anthropic-compaction: an agent continues after the block', () => {
  it('sends the block first with the beta, keeps the kept turns’ thinking, and the API accepts it', async () => {
    await agentSession('agent', 4, true);
    const before = await rowsOf('agent');
    const sent = ctx.fake.requests.length;

    const row = await compact('agent');
    expect(row.status, row.reason ?? '').toBe('applied');
    expect(row).toMatchObject({ summarizer: 'anthropic-compaction', thinkingPreserved: true, model: MODEL });
    expect(row.thinkingNote).toMatch(/same system and tools/);
    expect(row.inputTokens).toBeGreaterThan(0);
    expect(row.costUsd).toBeCloseTo(
      costUsd(MODEL, {
        inputTokens: row.inputTokens ?? 0,
        outputTokens: row.outputTokens ?? 0,
        cacheReadTokens: row.cacheReadTokens ?? 0,
        cacheWriteTokens: row.cacheWriteTokens ?? 0,
      }).usd,
      6,
    );

    // One compaction request: the leaving messages as the context renders them, system, the
    // declared tools, the compaction parameter and the beta header.
    const requests = ctx.fake.requests.slice(sent);
    expect(requests).toHaveLength(1);
    const request = requests[0];
    const body = request?.body as Record<string, unknown>;
    expect(body.compaction).toEqual({ type: 'summarize' });
    expect(String(request?.headers['anthropic-beta'])).toContain(COMPACTION_BETA);
    expect(body.tools).toEqual(TOOLS);
    expect(body.system).toEqual([{ type: 'text', text: SYSTEM }]);

    // The block is stored exactly as returned; the readable checkpoint is kept beside it.
    const block = ctx.fake.compactions.at(-1)?.block;
    expect(block).toBeDefined();
    const after = await rowsOf('agent');
    const summary = after.find((r) => r.kind === 'summary');
    expect(JSON.parse(summary?.blocks ?? 'null')).toEqual([block]);
    const [session] = await ctx.tdb.database.sql<{ checkpoint: { workingSet: string[] } }[]>`
      select checkpoint from sessions where tenant_id = ${tenantId} and id = 'agent'`;
    expect(session?.checkpoint.workingSet).toContain('src/mod0.ts');
    // The kept tail: the last run, untouched; everything before it left.
    const kept = before.slice(-4);
    expect(after.slice(-4)).toEqual(kept);
    expect(after.map((r) => r.seq)).toEqual([0, summary?.seq, ...kept.map((r) => r.seq)]);

    const context = await loadContext(db(), { tenantId, sessionId: 'agent' });
    expect(context.messages[0]).toEqual({ role: 'assistant', content: [block] });
    expect(context.betas).toEqual([COMPACTION_BETA]);
    expect(context.notices.map((n) => n.type)).toEqual(['compaction_block']);
    expect(context.notices[0]?.message).toMatch(/thinking is sent/);
    expect(thinkingOf(context).map((b) => b.thinking)).toEqual(['plan 3', 'check 3']);

    // The agent goes on: the fake checks the block and the kept thinking bound to it.
    await agentRun('agent', 4);
    const next = await loadContext(db(), { tenantId, sessionId: 'agent' });
    expect(thinkingOf(next).map((b) => b.thinking)).toEqual(['plan 3', 'check 3', 'plan 4', 'check 4']);
    ctx.fake.enqueue({ reply: { thinking: 'next', text: 'fine' } });
    await expect(send(next, [{ role: 'user', content: 'what next?' }])).resolves.toMatchObject({
      stop_reason: 'end_turn',
    });
  });

  it('compacts again: the request begins with the old block, and the new one replaces it', async () => {
    await agentSession('again', 3, true);
    expect((await compact('again')).status).toBe('applied');
    const first = ctx.fake.compactions.at(-1)?.block;
    await agentRun('again', 3);
    await agentRun('again', 4);
    const sent = ctx.fake.requests.length;
    const row = await compact('again');
    expect(row.status, row.reason ?? '').toBe('applied');
    expect(row.thinkingPreserved).toBe(true);
    const body = ctx.fake.requests[sent]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(body.messages[0]).toEqual({ role: 'assistant', content: [first] });
    const context = await loadContext(db(), { tenantId, sessionId: 'again' });
    const blocks = JSON.stringify(context.messages).match(/"type":"compaction"/g) ?? [];
    expect(blocks).toHaveLength(1);
    expect(context.messages[0]).toEqual({ role: 'assistant', content: [ctx.fake.compactions.at(-1)?.block] });
    ctx.fake.enqueue({ reply: { thinking: 'next', text: 'fine' } });
    await expect(send(context, [{ role: 'user', content: 'go on' }])).resolves.toMatchObject({
      stop_reason: 'end_turn',
    });
  });

  it('leaves the kept thinking out when the tools were not declared, and says why', async () => {
    await agentSession('no-tools', 3, false);
    const row = await compact('no-tools');
    expect(row.status, row.reason ?? '').toBe('applied');
    expect(row.thinkingPreserved).toBe(false);
    expect(row.thinkingNote).toMatch(/tools are not declared/);
    const context = await loadContext(db(), { tenantId, sessionId: 'no-tools' });
    expect(thinkingOf(context)).toEqual([]);
    expect(context.notices[0]?.message).toMatch(/left out \(the session's tools are not declared/);
    ctx.fake.enqueue({ reply: { thinking: 'next', text: 'fine' } });
    await expect(send(context, [{ role: 'user', content: 'go on' }])).resolves.toMatchObject({
      stop_reason: 'end_turn',
    });
    // The verdict matters: the kept turns as stored, thinking included, are refused after this block.
    const stored = await ctx.tdb.database.sql<{ role: 'user' | 'assistant'; content: Block[] }[]>`
      select case when role = 'tool' then 'user' else role end as role, content_blocks as content
      from messages where tenant_id = ${tenantId} and session_id = 'no-tools' and kind <> 'summary'
        and role <> 'system' order by seq`;
    expect(stored.flatMap((m) => m.content).some((b) => THINKING.has(b.type))).toBe(true);
    const replay = {
      ...context,
      messages: [context.messages[0], ...stored] as unknown as LoadedContext['messages'],
    };
    await expect(send(replay, [{ role: 'user', content: 'go on' }])).rejects.toThrow(
      /bound to a different conversation/,
    );
  });

  it('sends the readable checkpoint instead for a client without the beta', async () => {
    await agentSession('text', 3, true);
    expect((await compact('text')).status).toBe('applied');
    const context = await loadContext(db(), { tenantId, sessionId: 'text', compactionBlock: 'text' });
    expect(context.betas).toEqual([]);
    expect(JSON.stringify(context.messages)).not.toContain('"compaction"');
    expect(JSON.stringify(context.messages)).toContain('src/mod0.ts');
    expect(thinkingOf(context)).toEqual([]);
    ctx.fake.enqueue({ reply: { thinking: 'next', text: 'fine' } });
    await expect(send(context, [{ role: 'user', content: 'go on' }])).resolves.toMatchObject({
      stop_reason: 'end_turn',
    });
  });
});

describe('anthropic-compaction on a real Claude Code session', () => {
  it('archives what leaves byte-exact, keeps pairs whole, is accepted, and restores', async () => {
    // The fake cannot check Anthropic's own signatures in a real transcript: it takes them as valid.
    ctx.fake.acceptForeignSignatures = true;
    await importTranscript(db(), CLAUDE_CODE, { tenantId, sessionId: 'cc', format: 'claude-code' });
    const before = await rowsOf('cc');
    const row = await compact('cc', strategy({ keepRecent: 10 }));
    expect(row.status, row.reason ?? '').toBe('applied');
    expect(row.messagesAfter).toBeLessThan(row.messagesBefore ?? 0);
    expect(row.tokensAfter).toBeLessThan(row.tokensBefore ?? 0);
    expect(violations(await audit(db(), tenantId, 'cc'))).toEqual([]);
    const after = await rowsOf('cc');
    const live = new Map(before.map((r) => [r.seq, r.blocks]));
    for (const r of after.filter((r) => r.kind !== 'summary')) expect(r.blocks).toBe(live.get(r.seq));

    const context = await loadContext(db(), { tenantId, sessionId: 'cc' });
    const block = (context.messages[0]?.content as unknown as Block[] | undefined)?.[0];
    expect(block?.type).toBe('compaction');
    // The fidelity check read the block, as the agent does: a leaving path it lost is one the block does not name.
    const lost = row.lost as { paths: string[] } | null;
    expect(row.fidelity).not.toBeNull();
    expect(lost?.paths.length).toBeGreaterThan(0);
    for (const path of lost?.paths ?? []) expect(String(block?.content)).not.toContain(path);
    ctx.fake.enqueue({ reply: { text: 'fine' } });
    const last = context.messages.at(-1);
    const open =
      last?.role === 'assistant' && typeof last.content !== 'string'
        ? last.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))
        : [];
    const answer: Anthropic.MessageParam[] =
      last?.role !== 'assistant'
        ? []
        : open.length > 0
          ? [
              {
                role: 'user',
                content: open.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' })),
              },
            ]
          : [{ role: 'user', content: 'Please continue.' }];
    const next = await client.messages.create(
      {
        model: MODEL,
        max_tokens: 1_024,
        ...(context.system ? { system: context.system } : {}),
        messages: [...context.messages, ...answer],
      },
      { headers: { 'anthropic-beta': context.betas.join(',') } },
    );
    expect(next.type).toBe('message');

    await restoreCompaction(db(), { tenantId, sessionId: 'cc', compactionId: row.id });
    expect(await rowsOf('cc')).toEqual(before);
  });
});

describe('anthropic-compaction: documented failures', () => {
  it('commits nothing when the answer has no block, and says what its stop reason asks for', async () => {
    await agentSession('stopped', 3, true);
    const before = await rowsOf('stopped');
    ctx.fake.enqueue({ compactionStop: 'max_tokens' });
    const failed = ctx.compactInProcess(
      { tenantId, sessionId: 'stopped', strategy: strategy() },
      { summarizers: { named: summarizers() } },
    );
    await expect(failed).rejects.toThrow(SummaryRejectedError);
    await expect(failed).rejects.toThrow(/stop_reason max_tokens.*raise maxSummaryTokens/);
    expect(await rowsOf('stopped')).toEqual(before);
  });

  it('records a skip with the reason when there is nothing to summarize', async () => {
    await agentSession('nothing', 3, true);
    const before = await rowsOf('nothing');
    ctx.fake.enqueue({
      status: 400,
      errorType: 'invalid_request_error',
      errorCode: 'compaction_nothing_to_summarize',
      message: 'There is nothing to summarize.',
    });
    const row = await compact('nothing');
    expect(row.status).toBe('skipped');
    expect(row.reason).toMatch(/nothing to summarize/);
    expect(await rowsOf('nothing')).toEqual(before);
  });

  it('falls back to the anthropic summarizer on the last attempt while compaction is unavailable', async () => {
    await agentSession('unavailable', 3, true);
    const worker = ctx.startWorker({ concurrency: 1 });
    const eventId = randomUUID();
    ctx.fake.enqueue('compaction-unavailable', 'compaction-unavailable', 'ok');
    await ctx.producer.queue.add(
      RUN_COMPLETED,
      { eventId, tenantId, sessionId: 'unavailable', strategy: strategy({ fallback: 'anthropic' }) },
      { jobId: eventId, attempts: 2, backoff: { type: 'fixed', delay: 50 } },
    );
    const state = await waitFor(async () => {
      const s = await ctx.producer.queue.getJobState(eventId);
      return s === 'completed' || s === 'failed' ? s : undefined;
    }, 25_000);
    await worker.close();
    expect(state).toBe('completed');
    const [row] = (await ctx.reads.history(tenantId, 'unavailable')).filter((r) => r.status === 'applied');
    expect(row).toMatchObject({ summarizer: 'anthropic', thinkingPreserved: false });
    expect(row?.reason).toMatch(
      /^fell back to anthropic: anthropic-compaction failed on the last attempt: .*compaction_unavailable/,
    );
    const context = await loadContext(db(), { tenantId, sessionId: 'unavailable' });
    expect(context.betas).toEqual([]);
    expect(JSON.stringify(context.messages)).not.toContain('"compaction"');
  });
});
