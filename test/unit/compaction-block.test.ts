/**
 * Anthropic's on-demand compaction, the pure parts: which models keep earlier thinking, the
 * documented conditions under which kept turns keep theirs, how a context carries the block, and
 * how a long conversation is cut into compaction requests.
 */
import { describe, expect, it } from 'vitest';
import { type ContextRow, LEAD_IN, renderContext } from '../../shared/context/render.ts';
import type { Block, StoredContent } from '../../shared/contract/blocks.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import {
  COMPACTION_BETA,
  type KeptThinkingFacts,
  keptThinkingVerdict,
  modelPreservesThinking,
} from '../../shared/summary/compaction-block.ts';
import { chunksOf } from '../../worker/summarizers/anthropic-compaction.ts';

const block: Block = { type: 'compaction', content: 'Summary: we fixed src/a.ts.', signature: 'sig-1' };
const thought = (n: number): Block => ({ type: 'thinking', thinking: `thought ${n}`, signature: `s${n}` });
const row = (
  seq: number,
  role: ContextRow['role'],
  content: StoredContent,
  extra: Partial<ContextRow> = {},
): ContextRow => ({ seq, role, kind: 'message', content, pinned: false, ...extra });
const summaryRow = (seq: number): ContextRow => ({
  seq,
  role: 'user',
  kind: 'summary',
  content: [block],
  pinned: false,
});

describe('modelPreservesThinking', () => {
  it('follows the documented model list and says no to what it cannot read', () => {
    for (const yes of [
      'claude-opus-4-5',
      'claude-opus-4-8-20260101',
      'claude-opus-5',
      'claude-sonnet-4-6',
      'claude-sonnet-5-5',
      'claude-fable-5-1',
      'claude-mythos-5',
    ]) {
      expect(modelPreservesThinking(yes), yes).toBe(true);
    }
    for (const no of [
      'claude-opus-4-1',
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5',
      'claude-3-7-sonnet-latest',
      'claude-test',
      '',
    ]) {
      expect(modelPreservesThinking(no), no).toBe(false);
    }
  });
});

describe('keptThinkingVerdict', () => {
  const facts: KeptThinkingFacts = {
    model: 'claude-sonnet-4-6',
    toolsDeclared: true,
    systemSummarized: false,
    lastSummarizedRole: 'assistant',
    kept: [
      { role: 'user', belowCut: false },
      { role: 'assistant', belowCut: false },
    ],
  };

  it('keeps thinking when every documented condition holds', () => {
    expect(keptThinkingVerdict(facts).preserved).toBe(true);
  });

  it.each([
    [{ model: 'claude-haiku-4-5' }, /does not keep earlier turns' thinking/],
    [{ toolsDeclared: false }, /tools are not declared/],
    [{ systemSummarized: true }, /system message was summarized/],
    [{ lastSummarizedRole: 'user' as const }, /role of the last summarized one \(user\)/],
    [{ kept: [{ role: 'tool' as const, belowCut: false }], lastSummarizedRole: 'user' as const }, /merges/],
    [{ kept: [{ role: 'system' as const, belowCut: false }] }, /first kept message is a system message/],
    [
      {
        kept: [
          { role: 'user' as const, belowCut: true },
          { role: 'assistant' as const, belowCut: false },
        ],
      },
      /kept from before the cut/,
    ],
  ])('drops it when a condition fails: %o', (change, reason) => {
    const verdict = keptThinkingVerdict({ ...facts, ...change });
    expect(verdict.preserved).toBe(false);
    expect(verdict.note).toMatch(reason);
  });
});

describe('a context with a compaction block', () => {
  const rows = [
    row(0, 'system', 'You are careful.'),
    summaryRow(10),
    row(11, 'assistant', [thought(11), { type: 'text', text: 'done' }]),
    row(12, 'user', 'next please'),
  ];

  it('sends the block first, alone and unchanged, with the beta and a notice, and no lead-in', () => {
    const ctx = renderContext({
      rows,
      checkpoint: emptyCheckpoint(),
      compactedThroughSeq: null,
      version: 1,
      thinkingSinceVersion: 0,
      compactionThinking: { preserved: true, note: 'ok' },
    });
    expect(ctx.messages[0]).toEqual({ role: 'assistant', content: [block] });
    expect((ctx.messages[0]?.content as unknown as Block[] | undefined)?.[0]).toBe(block);
    // Two assistant messages in a row: fine, the block still comes first.
    expect(ctx.messages[1]?.role).toBe('assistant');
    expect(JSON.stringify(ctx.messages)).not.toContain(LEAD_IN);
    expect(ctx.betas).toEqual([COMPACTION_BETA]);
    expect(ctx.notices).toEqual([
      expect.objectContaining({
        type: 'compaction_block',
        seq: 10,
        message: expect.stringContaining(COMPACTION_BETA),
      }),
    ]);
    expect(ctx.system).toEqual([{ type: 'text', text: 'You are careful.' }]);
  });

  it('keeps the kept turns’ thinking only while no compaction since invalidated it', () => {
    const kept = renderContext({
      rows: rows.map((r) => (r.seq === 11 ? { ...r, contextVersion: 0 } : r)),
      checkpoint: null,
      compactedThroughSeq: null,
      version: 1,
      thinkingSinceVersion: 0,
    });
    expect(JSON.stringify(kept.messages)).toContain('thought 11');
    const dropped = renderContext({
      rows: rows.map((r) => (r.seq === 11 ? { ...r, contextVersion: 0 } : r)),
      checkpoint: null,
      compactedThroughSeq: null,
      version: 1,
      thinkingSinceVersion: 1,
    });
    expect(JSON.stringify(dropped.messages)).not.toContain('thought 11');
    // Rows without a version: the seq rule, over the compactions that invalidate thinking.
    const bySeq = renderContext({ rows, checkpoint: null, compactedThroughSeq: 11 });
    expect(JSON.stringify(bySeq.messages)).not.toContain('thought 11');
  });

  it('sends the readable checkpoint instead on request, and then no thinking made before it', () => {
    const ctx = renderContext({
      rows,
      checkpoint: { ...emptyCheckpoint(), goal: 'fix src/a.ts' },
      compactedThroughSeq: null,
      compactionBlock: 'text',
    });
    expect(JSON.stringify(ctx.messages)).not.toContain('"compaction"');
    expect(JSON.stringify(ctx.messages)).toContain('fix src/a.ts');
    expect(JSON.stringify(ctx.messages)).not.toContain('thought 11');
    expect(ctx.betas).toEqual([]);
  });
});

describe('chunksOf', () => {
  const turn = (role: 'user' | 'assistant', content: string | Block[]) => ({ role, content });
  const long = 'x'.repeat(4_000);

  it('cuts only between a reply without tool calls and the next user turn', () => {
    const messages = [
      turn('user', long),
      turn('assistant', [{ type: 'tool_use', id: 't1', name: 'bash', input: {} }]),
      turn('user', [{ type: 'tool_result', tool_use_id: 't1', content: long }]),
      turn('assistant', 'done'),
      turn('user', long),
      turn('assistant', 'ok'),
    ];
    const chunks = chunksOf(messages, 1_200);
    expect(chunks.flat()).toEqual(messages);
    expect(chunks.map((c) => c.length)).toEqual([4, 2]);
  });

  it('keeps a conversation that fits in one request', () => {
    const messages = [turn('user', 'hi'), turn('assistant', 'hello')];
    expect(chunksOf(messages, 100_000)).toEqual([messages]);
  });
});
