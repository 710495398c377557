/**
 * The command line's pure formatting: seq ranges, tables fitted to a terminal, the "did you mean"
 * suggestion, and the two tables and the dry-run preview built on them.
 */
import { describe, expect, it } from 'vitest';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import { type CompactionPreview, previewLines } from '../../worker/cli/commands/compact.ts';
import { historyTable } from '../../worker/cli/commands/history.ts';
import { sessionsTable } from '../../worker/cli/commands/sessions.ts';
import {
  closest,
  editDistance,
  formatChange,
  formatUsd,
  formatUtc,
  renderTable,
  seqRanges,
  truncate,
} from '../../worker/cli/format.ts';

describe('seqRanges', () => {
  it('joins consecutive seqs into ranges and lists the gaps apart', () => {
    expect(seqRanges([1, 2, 3, 4, 6, 7, 8, 10])).toBe('1-4, 6-8, 10');
    const leaving = [
      ...Array.from({ length: 34 }, (_, i) => i + 1),
      ...Array.from({ length: 34 }, (_, i) => i + 36),
    ];
    expect(seqRanges(leaving)).toBe('1-34, 36-69');
  });

  it('writes a lone seq as itself, and nothing for no seqs', () => {
    expect(seqRanges([5])).toBe('5');
    expect(seqRanges([0, 2, 4])).toBe('0, 2, 4');
    expect(seqRanges([])).toBe('');
  });

  it('does not depend on order or duplicates', () => {
    expect(seqRanges([9, 3, 2, 3, 1, 8])).toBe('1-3, 8-9');
  });
});

describe('closest (did you mean)', () => {
  const commands = [
    'demo',
    'migrate',
    'import',
    'enqueue',
    'worker',
    'compact',
    'history',
    'restore',
    'sessions',
  ];

  it('suggests the command one typo away, swapped letters included', () => {
    expect(closest('histroy', commands)).toBe('history');
    expect(closest('compat', commands)).toBe('compact');
    expect(closest('wroker', commands)).toBe('worker');
    expect(closest('restor', commands)).toBe('restore');
  });

  it('suggests the command a prefix starts, whatever the case', () => {
    expect(closest('sess', commands)).toBe('sessions');
    expect(closest('HIST', commands)).toBe('history');
  });

  it('suggests nothing for a word far from every command', () => {
    expect(closest('xyz', commands)).toBeUndefined();
    expect(closest('deploy', commands)).toBeUndefined();
  });

  it('counts edits as insertions, deletions, substitutions and swaps', () => {
    expect(editDistance('history', 'history')).toBe(0);
    expect(editDistance('histroy', 'history')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('renderTable', () => {
  const columns = [
    { header: 'id' },
    { header: 'tokens', align: 'right' as const },
    { header: 'reason', flex: true },
  ];
  const rows = [
    ['a', '1,200', 'short'],
    ['bb', '7', 'a much longer reason that will not fit'],
  ];

  it('pads columns to their widest cell, numbers right-aligned, under a rule', () => {
    expect(renderTable(columns, rows, Number.POSITIVE_INFINITY)).toEqual([
      'id  tokens  reason',
      '──  ──────  ──────────────────────────────────────',
      'a    1,200  short',
      'bb       7  a much longer reason that will not fit',
    ]);
  });

  it('cuts only the flex column, with …, so every line fits the width', () => {
    const lines = renderTable(columns, rows, 30);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(30);
    expect(lines[3]).toBe('bb       7  a much longer rea…');
    expect([...(lines[3] as string)].length).toBe(30);
    expect(lines[2]).toBe('a    1,200  short');
  });

  it('keeps the flex column at its minimum width on a very narrow terminal', () => {
    const lines = renderTable(columns, rows, 10);
    expect(lines[3]).toBe('bb       7  a muc…'); // the header's width
  });

  it('keeps one row on one line whatever the cell holds', () => {
    const [, , row] = renderTable([{ header: 'reason' }], [['line one\nline two\x1b[2J\tend']], 80);
    expect(row).toBe('line one line two [2J end');
  });
});

describe('cell formats', () => {
  it('writes counts with separators, costs in dollars, times in UTC, and - for unknown', () => {
    expect(formatChange(12_345, 3_210)).toBe('12,345→3,210');
    expect(formatChange(null, null)).toBe('-');
    expect(formatUsd(0.012345)).toBe('$0.0123');
    expect(formatUsd(null)).toBe('-');
    expect(formatUtc(new Date('2025-03-04T05:06:07Z'))).toBe('2025-03-04 05:06');
    expect(formatUtc(null)).toBe('-');
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
  });
});

function ledgerRow(overrides: Partial<CompactionRow>): CompactionRow {
  return {
    id: '3f2a1b9c-0000-4000-8000-000000000001',
    sessionId: 's',
    tenantId: 't',
    idempotencyKey: 'manual:x',
    eventId: null,
    trigger: 'manual',
    strategy: 'slidingWindow',
    summarizer: null,
    instructions: null,
    status: 'applied',
    reason: null,
    cutoffSeq: 26,
    lastSeq: null,
    summarySeq: null,
    compactionVersion: 1,
    messagesBefore: 37,
    messagesAfter: 11,
    tokensBefore: 6_535,
    tokensAfter: 1_984,
    messagesArchived: 26,
    blocksCleared: null,
    thinkingPreserved: false,
    thinkingNote: null,
    fidelity: null,
    fidelityParts: null,
    lost: null,
    summary: null,
    checkpointBefore: null,
    childSessionId: null,
    mode: 'inPlace',
    model: null,
    inputTokens: null,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    costUsd: null,
    llmMs: null,
    paybackSavingsUsd: null,
    paybackCostUsd: null,
    paybackRatio: null,
    paybackInputs: null,
    measuredRequests: null,
    measuredTokensSent: null,
    measuredTokensWithout: null,
    measuredSavingsUsd: null,
    measuredRatio: null,
    measuredEventIds: null,
    durationMs: 12,
    error: null,
    restoredAt: null,
    expiredMessages: null,
    expiredTokens: null,
    expiredCompactionIds: null,
    expiredBefore: null,
    createdAt: new Date('2025-03-04T05:06:07Z'),
    ...overrides,
  };
}

describe('history table', () => {
  it('shows each compaction on one line: short id, counts before→after, cost, reason cut to fit', () => {
    const rows = [
      ledgerRow({}),
      ledgerRow({
        id: '7c1d2e3f-0000-4000-8000-000000000002',
        status: 'skipped',
        strategy: 'summarize',
        messagesAfter: 37,
        tokensAfter: 6_535,
        costUsd: 0.0042,
        reason: 'a summary of 873 tokens would not make the session smaller (708 tokens would leave)',
      }),
    ];
    const lines = historyTable(rows, 120);
    expect(lines[0]).toMatch(
      /^created \(UTC\)\s+id\s+status\s+trigger\s+strategy\s+messages\s+tokens\s+cost\s+reason$/,
    );
    expect(lines[2]).toMatch(
      /^2025-03-04 05:06 {2}3f2a1b9c {2}applied {2}manual {3}slidingWindow\s+37→11\s+6,535→1,984\s+-$/,
    );
    expect(lines[3]).toContain('$0.0042');
    expect(lines[3]).toContain('a summary of 873');
    expect(lines[3]?.endsWith('…')).toBe(true);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(120);
  });

  it('shows a failed compaction its error as the reason', () => {
    const [, , row] = historyTable(
      [ledgerRow({ status: 'failed', error: 'Anthropic API unreachable' })],
      200,
    );
    expect(row).toContain('Anthropic API unreachable');
  });
});

describe('sessions table', () => {
  it('shows ids whole, counts with separators, and the child a session continued in', () => {
    const lines = sessionsTable([
      {
        id: 'run-42',
        agentId: 'triage',
        messageCount: 1_204,
        tokenCount: 250_000,
        contextWindow: null,
        compactionCount: 3,
        lastCompactedAt: new Date('2025-03-04T05:06:07Z'),
        parentSessionId: null,
        childSessionId: 'run-42~1',
        createdAt: new Date(0),
        updatedAt: new Date(0),
        lastCompaction: null,
      },
    ]);
    expect(lines[0]).toMatch(
      /^session\s+agent\s+messages\s+tokens\s+compactions\s+last compacted \(UTC\)\s+continued in$/,
    );
    expect(lines[2]).toMatch(/^run-42\s+triage\s+1,204\s+250,000\s+3\s+2025-03-04 05:06\s+run-42~1$/);
  });
});

describe('compact --dry-run preview', () => {
  const preview: CompactionPreview = {
    dryRun: true,
    tenantId: 'cli',
    sessionId: 'rock',
    strategy: { type: 'summarize', keepRecent: 10, maxSummaryTokens: 2_000 },
    policy: { source: 'tenant', mode: 'inPlace', triggers: { contextFraction: 0.85, minIntervalMs: 0 } },
    snapshotSeq: 80,
    plan: {
      action: 'compact',
      strategy: 'summarize',
      cutoffSeq: 69,
      leavingSeqs: [
        ...Array.from({ length: 34 }, (_, i) => i + 1),
        ...Array.from({ length: 34 }, (_, i) => i + 36),
      ],
      coverSeqs: [
        ...Array.from({ length: 34 }, (_, i) => i + 1),
        ...Array.from({ length: 33 }, (_, i) => i + 37),
      ],
      summarySeq: 69,
      leavingTokens: 12_345,
      keptCount: 13,
      notes: [
        'window: newest 10 messages stay, cutoff at seq 70',
        'cutoff moved to 69: a tool call waits for its result',
      ],
    },
    stays: [
      { seq: 0, reason: 'pinned' },
      { seq: 35, reason: 'pinned' },
    ],
  };

  it('lists the seqs that leave and stay as ranges, one line each, and says why', () => {
    const lines = previewLines(preview);
    expect(lines).toContain('leaving  1-34, 36-69');
    expect(lines).toContain('summary  covers 1-34, 37-69; written at seq 69');
    expect(lines).toContain('stays    0, 35 (pinned); above 69 (the kept window)');
    expect(lines).toContain('plan     68 messages leave (12,345 tokens), 13 stay');
    expect(lines).toContain('why      window: newest 10 messages stay, cutoff at seq 70');
    expect(lines).toContain('         cutoff moved to 69: a tool call waits for its result');
    expect(lines[0]).toContain('nothing written');
    expect(lines.length).toBeLessThan(12); // not a line per seq
  });

  it('gives a skip its reason', () => {
    const lines = previewLines({
      ...preview,
      plan: { action: 'skip', strategy: 'summarize', reason: '6 messages, not more than the 10 kept' },
      stays: [],
    });
    expect(lines.at(-1)).toBe('plan     skip: 6 messages, not more than the 10 kept');
  });
});
