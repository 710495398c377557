import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { beforeAll, describe, expect, it } from 'vitest';
import { importTranscript } from '../../producer/import.ts';
import { type LoadedContext, loadContext } from '../../producer/index.ts';
import type { Block } from '../../shared/contract/blocks.ts';
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import { audit, violations } from '../../worker/postgres/audit.ts';
import { restoreCompaction } from '../../worker/postgres/restore.ts';
import { useIntegration } from '../support/integration.ts';
import { SONNET } from '../support/models.ts';

const ctx = useIntegration({ anthropic: true });
const tenantId = 'think';
// The Claude Code file of the corpus with the most signed thinking blocks.
const CLAUDE_CODE = fileURLToPath(
  new URL('../../corpus/claude-code/general-tool-calls.jsonl', import.meta.url),
);
const THINKING = new Set(['thinking', 'redacted_thinking']);
let client: Anthropic;

beforeAll(() => {
  ctx.fake.strict = true;
  client = new Anthropic({ apiKey: 'test', baseURL: ctx.llm.url, maxRetries: 0 });
});

const db = () => ctx.tdb.database.db;

interface Row {
  seq: number;
  role: string;
  blocks: string;
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
    select seq::int, role, content_blocks::text as blocks
    from messages where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq`;
}

const blocksOf = (row: Row): Block[] => {
  const parsed = JSON.parse(row.blocks) as Block[] | string;
  return typeof parsed === 'string' ? [] : parsed;
};
const thinkingCount = (row: Row) => blocksOf(row).filter((b) => THINKING.has(b.type)).length;

async function compact(sessionId: string, strategy: Strategy) {
  const outcome = await ctx.compactInProcess({
    tenantId,
    sessionId,
    strategy,
  });
  if (outcome.row === null) throw new Error('a manual compaction is never batched');
  return outcome.row;
}

/**
 * The next request the agent sends with its loaded context, to the strict fake API. The fake
 * verifies only the signatures it made: a real session's thinking is sent with `thinking: 'strip'`.
 */
async function accepted(sessionId: string, thinking: 'keep' | 'strip' = 'keep') {
  const context: LoadedContext = await loadContext(db(), { tenantId, sessionId, thinking });
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

/** The seqs of the newest assistant turn (a run of adjacent assistant rows) that holds thinking. */
function newestThinkingTurn(history: Row[]): number[] {
  const turns: Row[][] = [];
  let run: Row[] | null = null;
  for (const row of history) {
    if (row.role !== 'assistant') {
      run = null;
      continue;
    }
    if (run === null) {
      run = [];
      turns.push(run);
    }
    run.push(row);
  }
  const turn = turns.findLast((t) => t.some((r) => thinkingCount(r) > 0)) ?? [];
  return turn.map((r) => r.seq);
}

describe('clearThinking', () => {
  it('drops the older turns’ thinking of a Claude Code session, and a restore puts it back byte-exact', async () => {
    await importTranscript(db(), CLAUDE_CODE, { tenantId, sessionId: 'cc', format: 'claude-code' });
    const before = await liveRows('cc');
    const history = await rows('cc');
    const signed = history.flatMap(blocksOf).filter((b) => b.type === 'thinking');
    expect(signed.length).toBeGreaterThan(1);
    expect(signed.every((b) => typeof b.signature === 'string' && b.signature.length > 40)).toBe(true);
    const kept = new Set(newestThinkingTurn(history));

    const row = await compact('cc', parseStrategy('clearThinking'));
    expect(row.status, row.reason ?? '').toBe('applied');
    expect(row.strategy).toBe('clearThinking');
    const after = await rows('cc');
    expect(after.map((r) => [r.seq, r.role])).toEqual(history.map((r) => [r.seq, r.role]));

    let dropped = 0;
    let changed = 0;
    after.forEach((r, i) => {
      const was = history[i] as Row;
      const old = blocksOf(was);
      if (kept.has(r.seq)) {
        expect(r.blocks, `the newest turn with thinking (seq ${r.seq}) stays`).toBe(was.blocks);
        return;
      }
      const rest = old.filter((b) => !THINKING.has(b.type));
      if (r.blocks === was.blocks) {
        // Untouched: no thinking, or nothing but thinking (it would be left empty).
        expect(thinkingCount(was) === 0 || rest.length === 0, `seq ${r.seq}`).toBe(true);
        return;
      }
      expect(r.role).toBe('assistant');
      // Only the thinking went: every other block stays, as it was and in order.
      expect(blocksOf(r)).toEqual(rest);
      dropped += old.length - rest.length;
      changed++;
    });
    expect(dropped).toBeGreaterThan(0);
    expect(row).toMatchObject({
      messagesBefore: history.length,
      messagesAfter: history.length,
      messagesArchived: changed,
      blocksCleared: dropped,
    });
    expect(row.tokensAfter).toBeLessThan(row.tokensBefore ?? 0);
    const report = await audit(db(), tenantId, 'cc');
    expect(violations(report)).toEqual([]);
    expect(report).toMatchObject({ archivedOriginals: 0, archivedRewrites: changed });
    // Thinking left out of the oldest turns leaves the rest of the chain valid: the kept turn's
    // thinking is sent, exactly as stored.
    const context = await loadContext(db(), { tenantId, sessionId: 'cc' });
    const sent = context.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
    const keptThinking = after
      .filter((r) => kept.has(r.seq))
      .flatMap(blocksOf)
      .filter((b) => THINKING.has(b.type));
    expect(keptThinking.length).toBeGreaterThan(0);
    expect(sent.filter((b) => THINKING.has(b.type))).toEqual(keptThinking);
    await expect(accepted('cc', 'strip')).resolves.toMatchObject({ type: 'message' });

    // Nothing left to drop: the next run is skipped, with its reason.
    const again = await compact('cc', parseStrategy('clearThinking:1'));
    expect(again.status).toBe('skipped');
    expect(again.reason).toMatch(/^nothing to clear: /);

    const restored = await restoreCompaction(db(), { tenantId, sessionId: 'cc', compactionId: row.id });
    expect(restored.status).toBe('restored');
    expect(await liveRows('cc')).toEqual(before);
    const clean = await audit(db(), tenantId, 'cc');
    expect(violations(clean)).toEqual([]);
    expect(clean).toMatchObject({ archivedOriginals: 0, archivedRewrites: 0 });
  });
});
