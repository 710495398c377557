import { readdirSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import type { ContentBlockParam, MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendMessages, createSession, type LoadedContext, loadContext } from '../../producer/index.ts';
import { NO_RESULT, SUMMARY_INTRO, THINKING_BINDING_BETA } from '../../shared/context/render.ts';
import { SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { setPolicy } from '../../worker/postgres/policies.ts';
import { runCli } from '../support/cli.ts';
import type { FakeReply } from '../support/fake-anthropic.ts';
import { CORPUS_DIR, loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { MANUAL_THINKING as manual, MANUAL_THINKING_MODEL as model } from '../support/models.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'ctx';
const tools = [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' as const } }];
let client: Anthropic;

beforeAll(() => {
  ctx.fake.strict = true;
  client = new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 });
});

const db = () => ctx.tdb.database.db;
const load = (sessionId: string, tenant = tenantId) => loadContext(db(), { tenantId: tenant, sessionId });

/** The request an agent sends with a loaded context. */
const send = (context: LoadedContext, thinking: Anthropic.ThinkingConfigParam = manual) =>
  client.messages.create({
    model,
    max_tokens: 2048,
    thinking,
    tools,
    ...(context.system ? { system: context.system } : {}),
    messages: context.messages,
  });

/**
 * One agent step: load the context, ask the fake for `reply`, store the answer. The context must
 * end with a user turn (the agent appended its input or tool results first).
 */
async function step(sessionId: string, reply: FakeReply, thinking: Anthropic.ThinkingConfigParam = manual) {
  const context = await load(sessionId);
  ctx.fake.enqueue({ reply });
  const answer = await send(context, thinking);
  const content = answer.content as unknown as ContentBlockParam[];
  await appendMessages(db(), tenantId, context.sessionId, [{ role: 'assistant', content }]);
  return content;
}

/** Appends the results of the calls in `content`. */
async function answerCalls(sessionId: string, content: ContentBlockParam[], output = 'done') {
  const results = content
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ type: 'tool_result' as const, tool_use_id: (b as { id: string }).id, content: output }));
  await appendMessages(db(), tenantId, sessionId, [{ role: 'user', content: results }]);
}

async function compact(sessionId: string, strategy: Strategy, tenant = tenantId) {
  const outcome = await ctx.compactInProcess({
    tenantId: tenant,
    sessionId,
    strategy,
  });
  return outcome.row === null ? null : { ...outcome.row, plan: outcome.plan };
}

/** An agent that ran two tool loops with manual thinking and finished with a text answer. */
async function agentSession(sessionId: string): Promise<MessageParam[]> {
  const appended: MessageParam[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'fix the failing parser test' },
  ];
  await createSession(db(), { tenantId, sessionId, messages: [] });
  await appendMessages(db(), tenantId, sessionId, appended);
  for (const i of [0, 1]) {
    const calls = await step(sessionId, {
      thinking: `plan ${i}`,
      text: `running ${i}`,
      toolUse: [{ name: 'bash', input: { i } }],
    });
    appended.push({ role: 'assistant', content: calls });
    // Output long enough that a summary of it, as the context sends it, is smaller than it is.
    await answerCalls(sessionId, calls, `output ${i}\n${'test_parser.py::case PASSED\n'.repeat(60)}`);
    appended.push((await rows(sessionId)).at(-1) as MessageParam);
  }
  const last = await step(sessionId, { thinking: 'wrap up', text: 'The test passes now.' });
  appended.push({ role: 'assistant', content: last });
  const next: MessageParam = { role: 'user', content: 'thanks; now update the changelog' };
  await appendMessages(db(), tenantId, sessionId, [next]);
  appended.push(next);
  return appended;
}

/** The blocks of message `i` (a string is none). */
function blocksOf(context: LoadedContext, i: number): ContentBlockParam[] {
  const content = context.messages[i]?.content;
  return Array.isArray(content) ? (content as ContentBlockParam[]) : [];
}

/** The stored native content of a session, as MessageParams. */
async function rows(sessionId: string): Promise<MessageParam[]> {
  const stored = await ctx.tdb.database.sql<{ role: MessageParam['role']; content_blocks: unknown }[]>`
    select role, content_blocks from messages
    where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
  return stored.map((r) => ({ role: r.role, content: r.content_blocks }) as MessageParam);
}

describe('loadContext', () => {
  it('returns every stored block as appended before any compaction, and the API accepts it', async () => {
    const appended = await agentSession('plain');
    const context = await load('plain');
    expect(context.sessionId).toBe('plain');
    expect(context.system).toEqual([{ type: 'text', text: 'You are a coding agent.' }]);
    expect(context.messages).toEqual(appended.slice(1));
    const thinking = blocksOf(context, 1)[0];
    expect(thinking).toMatchObject({ type: 'thinking', thinking: 'plan 0', signature: expect.any(String) });
    expect(context.notices).toEqual([]);
    expect(context.tokens).toBeGreaterThan(0);
    await expect(send(context)).resolves.toMatchObject({ type: 'message' });
  });

  it('keeps every block type as appended, signatures and unknown types included', async () => {
    const appended: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'look', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig-1' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'Reading.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.ts', z: 1, a: 2 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'source' }] },
          { type: 'text', text: 'and?' },
        ],
      },
      { role: 'assistant', content: [{ type: 'future_block', payload: { x: [1, 2] } } as never] },
      { role: 'user', content: '123' },
    ];
    await createSession(db(), { tenantId, sessionId: 'blocks', messages: [] });
    await appendMessages(db(), tenantId, 'blocks', appended);
    const context = await load('blocks');
    expect(context.system).toBeUndefined();
    expect(context.messages).toEqual(appended);
  });

  it('after a compaction, leaves out the thinking it covered; what the agent appends next keeps its own', async () => {
    await agentSession('compacted');
    const row = await compact('compacted', { type: 'summarize', keepRecent: 3, maxSummaryTokens: 2000 });
    expect(row?.status, row?.reason ?? '').toBe('applied');
    const context = await load('compacted');
    // The unpinned system message left with the archive and is restated.
    expect(context.system).toEqual([{ type: 'text', text: 'You are a coding agent.' }]);
    const first = blocksOf(context, 0)[0] as TextBlockParam | undefined;
    expect(first?.text.startsWith(SUMMARY_INTRO)).toBe(true);
    expect(first?.cache_control).toEqual({ type: 'ephemeral' });
    expect(JSON.stringify(context.messages)).not.toContain('"thinking"');
    await expect(send(context)).resolves.toMatchObject({ type: 'message' });

    // The agent goes on from the compacted context: its new thinking was signed over it.
    const calls = await step('compacted', {
      thinking: 'changelog',
      toolUse: [{ name: 'bash', input: { c: 1 } }],
    });
    await answerCalls('compacted', calls);
    const after = await load('compacted');
    expect(after.notices).toEqual([]);
    expect(JSON.stringify(after.messages)).toContain('"thinking":"changelog"');
    await expect(send(after)).resolves.toMatchObject({ type: 'message' });
  });

  it('keeps the thinking of an open tool loop a compaction cut into; drop_block lets it through', async () => {
    const sessionId = 'open-loop';
    await createSession(db(), { tenantId, sessionId, messages: [] });
    await appendMessages(db(), tenantId, sessionId, [{ role: 'user', content: 'migrate the database' }]);
    const first = await step(sessionId, { thinking: 'look', toolUse: [{ name: 'bash', input: { n: 0 } }] });
    await answerCalls(sessionId, first, 'table users: 120 columns\n'.repeat(200));
    const open = await step(sessionId, { thinking: 'apply', toolUse: [{ name: 'bash', input: { n: 1 } }] });
    // Compacted while the call at the newest seq waits for its result.
    const row = await compact(sessionId, { type: 'summarize', keepRecent: 1, maxSummaryTokens: 2000 });
    expect(row?.status, row?.reason ?? '').toBe('applied');
    await answerCalls(sessionId, open);

    const context = await load(sessionId);
    expect(context.messages[1]).toEqual({ role: 'assistant', content: open });
    expect(context.notices).toEqual([
      { type: 'thinking_prefix_changed', seq: row?.lastSeq, message: expect.stringContaining('drop_block') },
    ]);
    const refused = send(context);
    await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(refused).rejects.toThrow(/bound to a different conversation/);
    // block_binding needs the beta header...
    await expect(
      send(context, { ...manual, block_binding: { prefix_mismatch_behavior: 'drop_block' } } as never),
    ).rejects.toThrow(/block_binding: Extra inputs are not permitted/);
    // ...with it, the block is dropped and the request goes through, as the notice says.
    const accepted = await client.beta.messages.create({
      model,
      max_tokens: 2048,
      betas: [THINKING_BINDING_BETA],
      thinking: { ...manual, block_binding: { prefix_mismatch_behavior: 'drop_block' } },
      tools,
      messages: context.messages as Anthropic.Beta.BetaMessageParam[],
    });
    expect(accepted.input_transformations).toEqual([
      { type: 'thinking_dropped', reason: 'prefix_binding_mismatch', path: 'messages.1.content.0' },
    ]);
    expect(ctx.fake.requests.at(-1)?.headers['anthropic-beta']).toContain(THINKING_BINDING_BETA);
  });

  it('answers an abandoned tool call, and compacts past it to a context the API accepts', async () => {
    const sessionId = 'abandoned';
    const messages: MessageParam[] = [
      { role: 'user', content: 'run the slow job' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_lost', name: 'bash', input: {} }] },
      { role: 'user', content: 'never mind, it hung; check the logs instead' },
    ];
    for (let i = 0; i < 6; i++) {
      messages.push({ role: 'assistant', content: `log line ${i} looks fine` });
      messages.push({ role: 'user', content: `and the next one ${i}?` });
    }
    await createSession(db(), {
      tenantId,
      sessionId,
      messages: messages.map((message, seq) => ({ message, seq })),
    });
    const before = await load(sessionId);
    expect(before.messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_lost', is_error: true, content: NO_RESULT },
      { type: 'text', text: 'never mind, it hung; check the logs instead' },
    ]);
    await expect(send(before, { type: 'disabled' })).resolves.toMatchObject({ type: 'message' });

    const row = await compact(sessionId, { type: 'slidingWindow', maxMessages: 4 });
    expect(row?.status).toBe('applied');
    expect(row?.plan).toMatchObject({ abandonedCalls: [{ toolCallId: 'toolu_lost', seq: 1 }] });
    const after = await load(sessionId);
    expect(JSON.stringify(after.messages)).not.toContain('toolu_lost');
    await expect(send(after, { type: 'disabled' })).resolves.toMatchObject({ type: 'message' });
  });

  it('follows a newSession lineage to the live session', async () => {
    const tenant = 'ctx-lineage';
    await setPolicy(db(), tenant, null, {
      strategy: { type: 'summarize', keepRecent: 10 },
      mode: 'newSession',
    });
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(db(), { tenantId: tenant, sessionId: 'root', messages });
    const row = await compact('root', { type: 'summarize', keepRecent: 10, maxSummaryTokens: 2000 }, tenant);
    expect(row).toMatchObject({ status: 'applied', childSessionId: 'root.v1' });
    const context = await load('root', tenant);
    expect(context.sessionId).toBe('root.v1');
    expect((blocksOf(context, 0)[0] as TextBlockParam | undefined)?.text.startsWith(SUMMARY_INTRO)).toBe(
      true,
    );
    await expect(send(finish(context), { type: 'disabled' })).resolves.toMatchObject({ type: 'message' });
  });

  it("refuses an unknown session, and another tenant's", async () => {
    await expect(load('no-such-session')).rejects.toBeInstanceOf(SessionNotFoundError);
    await createSession(db(), { tenantId: 'other', sessionId: 'theirs', messages: [] });
    await expect(load('theirs')).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(load('theirs', 'other')).resolves.toMatchObject({ sessionId: 'theirs', messages: [] });
  });
});

describe('compactor context', () => {
  it('prints the context as JSON; an unknown session fails with its name', async () => {
    await agentSession('cli');
    const run = await runCli(['context', '--tenant', tenantId, '--session', 'cli'], ctx.cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(JSON.parse(JSON.stringify(await load('cli'))));
    const stripped = await runCli(
      ['context', '--tenant', tenantId, '--session', 'cli', '--thinking', 'strip'],
      ctx.cliEnv,
    );
    expect(stripped.code, stripped.stderr).toBe(0);
    expect(stripped.stdout).not.toContain('"thinking"');
    const missing = await runCli(['context', '--tenant', tenantId, '--session', 'nope'], ctx.cliEnv);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('compactor context: session "nope" not found for tenant "ctx"');
  });
});

/**
 * What an agent sends next with a loaded context: the results of the calls it left open, or its
 * next user message when the context ends with the assistant's turn.
 */
function finish(context: LoadedContext): LoadedContext {
  const last = context.messages.at(-1);
  if (last?.role !== 'assistant') return context;
  const calls = typeof last.content === 'string' ? [] : last.content.filter((b) => b.type === 'tool_use');
  const next: MessageParam =
    calls.length > 0
      ? {
          role: 'user',
          content: calls.map((c) => ({ type: 'tool_result' as const, tool_use_id: c.id, content: 'ok' })),
        }
      : { role: 'user', content: 'Please continue.' };
  return { ...context, messages: [...context.messages, next] };
}

const CORPUS = readdirSync(CORPUS_DIR)
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => f.replace(/\.jsonl$/, ''))
  .sort();
const STRATEGIES: Strategy[] = [
  { type: 'none' },
  { type: 'slidingWindow', maxMessages: 10 },
  { type: 'summarize', keepRecent: 10, maxSummaryTokens: 2000 },
  { type: 'clearToolResults', keep: 3, clearAtLeast: 0, clearToolInputs: true, excludeTools: [] },
];

describe('every corpus session, compacted by each strategy', () => {
  it.each(CORPUS)('%s gives a context the strict API accepts', async (name) => {
    const messages = await loadCorpusSession(name);
    for (const strategy of STRATEGIES) {
      const sessionId = `${name}:${strategy.type}`;
      await createSession(db(), { tenantId: 'corpus', sessionId, messages });
      const row = await compact(sessionId, strategy, 'corpus');
      // Every session long enough is compacted; a short one may be skipped (with its reason).
      if (strategy.type === 'none') expect(row?.status, sessionId).toBe('skipped');
      // clearToolResults clears only where tool uses beyond the newest 3 have results.
      else if (messages.length > 40 && strategy.type !== 'clearToolResults')
        expect(row?.status, `${sessionId}: ${row?.reason}`).toBe('applied');
      const context = await load(sessionId, 'corpus');
      expect(context.messages[0]?.role, sessionId).toBe('user');
      if (strategy.type === 'summarize' && row?.status === 'applied') {
        expect((blocksOf(context, 0)[0] as TextBlockParam | undefined)?.text, sessionId).toMatch(
          /^\[Summary of/,
        );
      }
      await expect(send(finish(context), { type: 'disabled' }), sessionId).resolves.toMatchObject({
        type: 'message',
      });
    }
  });
});
