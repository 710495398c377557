import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { createSession, type LoadedContext, loadContext } from '../../producer/index.ts';
import type { Block } from '../../shared/contract/blocks.ts';
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';
import { SONNET } from '../support/models.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'clear';
const CLAUDE_CODE = fileURLToPath(
  new URL('../../corpus/claude-code/general-tool-calls.jsonl', import.meta.url),
);
let client: Anthropic;

beforeAll(() => {
  ctx.fake.strict = true;
  client = new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 });
});

const db = () => ctx.tdb.database.db;

interface Row {
  seq: number;
  kind: string;
  content: string;
  blocks: string;
  tool_use_ids: string[];
  tool_result_ids: string[];
  token_count: number;
}

/** Every column of the live history, in seq order: what "byte-exact" means. */
async function liveRows(sessionId: string) {
  return ctx.tdb.database.sql`
    select seq::int, role, kind, content, content_blocks::text, tool_call_id, tool_name, tool_use_ids,
      tool_result_ids, has_thinking, token_count, pinned, created_at, context_version
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function rows(sessionId: string): Promise<Row[]> {
  return ctx.tdb.database.sql<Row[]>`
    select seq::int, kind, content, content_blocks::text as blocks, tool_use_ids, tool_result_ids, token_count
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

async function sessionRow(sessionId: string) {
  const [row] = await ctx.tdb.database.sql<{ message_count: number; token_count: number }[]>`
    select message_count, token_count::int from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

async function compact(sessionId: string, strategy: Strategy) {
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy,
  });
  if (outcome.row === null) throw new Error('a manual compaction is never batched');
  return outcome.row;
}

/** The tool results of a session, each with its call's id and name, in order. */
function results(history: Row[]): Array<{ seq: number; id: string; block: Block }> {
  return history.flatMap((r) => {
    const blocks = JSON.parse(r.blocks) as Block[] | string;
    if (typeof blocks === 'string') return [];
    return blocks
      .filter((b) => b.type === 'tool_result')
      .map((block) => ({ seq: r.seq, id: block.tool_use_id as string, block }));
  });
}

/** tool_use id -> [name, seq], in the order of the calls. */
function calls(history: Row[]): Array<{ id: string; name: string; seq: number; input: unknown }> {
  return history.flatMap((r) => {
    const blocks = JSON.parse(r.blocks) as Block[] | string;
    if (typeof blocks === 'string') return [];
    return blocks
      .filter((b) => b.type === 'tool_use')
      .map((b) => ({ id: b.id as string, name: b.name as string, seq: r.seq, input: b.input }));
  });
}

const PLACEHOLDER =
  /^\[tool result cleared: (\S+), ([\d,]+) tokens, archived by compactor \(compaction ([0-9a-f-]{36})\)\]$/;

/** The next request the agent sends with its loaded context, to the strict fake API. */
async function accepted(sessionId: string) {
  const context: LoadedContext = await loadContext(db(), { tenantId, sessionId });
  const last = context.messages.at(-1);
  const open =
    last?.role === 'assistant' && typeof last.content !== 'string'
      ? last.content.filter((b) => b.type === 'tool_use')
      : [];
  const next: MessageParam[] =
    last?.role !== 'assistant'
      ? []
      : open.length > 0
        ? [
            {
              role: 'user',
              content: open.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: 'ok' })),
            },
          ]
        : [{ role: 'user', content: 'Please continue.' }];
  return client.messages.create({
    model: SONNET,
    max_tokens: 1024,
    tools: [{ name: 'bash', description: 'run a command', input_schema: { type: 'object' } }],
    ...(context.system ? { system: context.system } : {}),
    messages: [...context.messages, ...next],
  });
}

describe('clearToolResults', () => {
  it('clears the results older than the newest 3 tool uses, and a restore puts them back byte-exact', async () => {
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(db(), { tenantId, sessionId: 'pvlib', messages });
    const before = await liveRows('pvlib');
    const history = await rows('pvlib');
    const sessionBefore = await sessionRow('pvlib');

    const row = await compact('pvlib', parseStrategy('clearToolResults:3'));
    expect(row.status, row.reason ?? '').toBe('applied');
    const after = await rows('pvlib');
    expect(after.map((r) => [r.seq, r.kind, r.tool_use_ids, r.tool_result_ids])).toEqual(
      history.map((r) => [r.seq, r.kind, r.tool_use_ids, r.tool_result_ids]),
    );

    const allCalls = calls(history);
    const newest = new Set(allCalls.slice(-3).map((c) => c.id));
    const was = new Map(results(history).map((r) => [r.id, r]));
    let cleared = 0;
    let namedTokens = 0;
    for (const result of results(after)) {
      const original = was.get(result.id);
      if (newest.has(result.id)) {
        expect(result.block, `the newest result ${result.id} stays`).toEqual(original?.block);
        continue;
      }
      const match = PLACEHOLDER.exec(String(result.block.content));
      expect(match, `result ${result.id} at seq ${result.seq}`).not.toBeNull();
      expect(match?.[1]).toBe('bash');
      expect(match?.[3]).toBe(row.id);
      const named = Number(match?.[2]?.replaceAll(',', ''));
      expect(named).toBeGreaterThan(0);
      namedTokens += named;
      expect(result.block.tool_use_id).toBe(result.id);
      cleared++;
    }
    expect(cleared).toBe(allCalls.length - 3);
    // The calls (and every other row) are untouched.
    const changed = after.filter((r, i) => r.blocks !== history[i]?.blocks);
    expect(changed.every((r) => r.kind === 'tool_result')).toBe(true);
    expect(changed.length).toBe(cleared);

    expect(row).toMatchObject({
      messagesBefore: messages.length,
      messagesAfter: messages.length,
      messagesArchived: cleared,
      blocksCleared: cleared,
      tokensBefore: sessionBefore?.token_count,
    });
    // What the placeholders say was there, less their own few tokens, is what the session lost.
    const freed = (row.tokensBefore ?? 0) - (row.tokensAfter ?? 0);
    expect(freed).toBeGreaterThan(namedTokens / 2);
    expect(freed).toBeLessThan(namedTokens);
    expect(await sessionRow('pvlib')).toEqual({
      message_count: messages.length,
      token_count: after.reduce((sum, r) => sum + r.token_count, 0),
    });
    const report = await audit(db(), tenantId, 'pvlib');
    expect(violations(report)).toEqual([]);
    expect(report).toMatchObject({
      liveOriginals: messages.length,
      archivedOriginals: 0,
      archivedRewrites: cleared,
    });
    await expect(accepted('pvlib')).resolves.toMatchObject({ type: 'message' });

    // Nothing left to clear: the next run is skipped, with its reason.
    const again = await compact('pvlib', parseStrategy('clearToolResults:3'));
    expect(again.status).toBe('skipped');
    expect(again.reason).toMatch(/^nothing to clear: .*cleared already/);

    const restored = await restoreCompaction(db(), { tenantId, sessionId: 'pvlib', compactionId: row.id });
    expect(restored.status).toBe('restored');
    expect(await liveRows('pvlib')).toEqual(before);
    expect(await sessionRow('pvlib')).toEqual(sessionBefore);
    const clean = await audit(db(), tenantId, 'pvlib');
    expect(violations(clean)).toEqual([]);
    expect(clean).toMatchObject({ archivedOriginals: 0, archivedRewrites: 0 });
  });

  it('skips, with the reason, a clearing that frees fewer tokens than clearAtLeast', async () => {
    const messages = await loadCorpusSession('sweagent__humanevalfix-0');
    await createSession(db(), { tenantId, sessionId: 'small', messages });
    const before = await liveRows('small');
    const row = await compact('small', {
      type: 'clearToolResults',
      keep: 1,
      clearAtLeast: 1_000_000,
      clearToolInputs: false,
      excludeTools: [],
    });
    expect(row.status).toBe('skipped');
    expect(row.reason).toMatch(
      /^clearing [\d,]+ tool uses? would free [\d,]+ tokens, less than clearAtLeast \(1,000,000\): not worth breaking the prompt cache$/,
    );
    expect(await liveRows('small')).toEqual(before);
  });

  it('on a Claude Code session: excluded tools and the newest uses stay, inputs are cleared, the API accepts it', async () => {
    const imported = await importTranscript(db(), CLAUDE_CODE, {
      tenantId,
      sessionId: 'cc',
      format: 'claude-code',
    });
    const before = await liveRows('cc');
    const history = await rows('cc');
    const strategy: Strategy = {
      type: 'clearToolResults',
      keep: 5,
      clearAtLeast: 1_000,
      clearToolInputs: true,
      excludeTools: ['Bash'],
    };
    const row = await compact('cc', strategy);
    expect(row.status, row.reason ?? '').toBe('applied');
    const after = await rows('cc');

    const allCalls = calls(history);
    const newest = new Set(allCalls.slice(-5).map((c) => c.id));
    const nameOf = new Map(allCalls.map((c) => [c.id, c.name]));
    const was = new Map(results(history).map((r) => [r.id, r.block]));
    const callsAfter = new Map(calls(after).map((c) => [c.id, c]));
    let cleared = 0;
    for (const { id, block } of results(after)) {
      const name = nameOf.get(id) ?? '';
      if (newest.has(id) || name === 'Bash') {
        expect(block, `${name} result ${id} stays`).toEqual(was.get(id));
        expect(callsAfter.get(id)?.input).toEqual(allCalls.find((c) => c.id === id)?.input);
        continue;
      }
      expect(String(block.content)).toMatch(PLACEHOLDER);
      expect(String(block.content)).toContain(`cleared: ${name},`);
      if (was.get(id)?.is_error === true) expect(block.is_error).toBe(true);
      expect(callsAfter.get(id)?.input).toEqual({});
      cleared++;
    }
    expect(cleared).toBeGreaterThan(0);
    expect(row.blocksCleared).toBe(cleared);
    expect(violations(await audit(db(), tenantId, 'cc'))).toEqual([]);
    await expect(accepted('cc')).resolves.toMatchObject({ type: 'message' });

    await restoreCompaction(db(), { tenantId, sessionId: 'cc', compactionId: row.id });
    expect(await liveRows('cc')).toEqual(before);
    expect((await sessionRow('cc'))?.message_count).toBe(imported.messageCount);
    expect(violations(await audit(db(), tenantId, 'cc'))).toEqual([]);
  });

  it('keeps a rewritten message restorable through a later sliding window that archives it', async () => {
    const messages = await loadCorpusSession('minisweagent__pvlib-1854');
    await createSession(db(), { tenantId, sessionId: 'stacked', messages });
    const before = await liveRows('stacked');
    const cleared = await compact('stacked', parseStrategy('clearToolResults:3'));
    const window = await compact('stacked', { type: 'slidingWindow', maxMessages: 20 });
    expect([cleared.status, window.status]).toEqual(['applied', 'applied']);
    const report = await audit(db(), tenantId, 'stacked');
    expect(violations(report)).toEqual([]);
    expect(report.liveOriginals + report.archivedOriginals).toBe(messages.length);

    await restoreCompaction(db(), { tenantId, sessionId: 'stacked', compactionId: window.id });
    await restoreCompaction(db(), { tenantId, sessionId: 'stacked', compactionId: cleared.id });
    expect(await liveRows('stacked')).toEqual(before);
    expect(violations(await audit(db(), tenantId, 'stacked'))).toEqual([]);
  });
});
