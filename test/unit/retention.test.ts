/**
 * Retention's pure parts: the policy field, the cutoff, the words of the ledger and of a refused
 * restore, and how `history` and the dashboard chart show an `expired` row.
 */
import { describe, expect, it } from 'vitest';
import type { CompactionRow, SessionRow } from '../../producer/postgres/schema.ts';
import { policySchema } from '../../shared/policy/policy.ts';
import {
  DAY_MS,
  expiredRestoreMessage,
  expiryReason,
  retentionCutoff,
  retentionLabel,
} from '../../shared/policy/retention.ts';
import { historyTable } from '../../worker/cli/commands/history.ts';
import { renderChart } from '../../worker/http/dashboard/chart.ts';
import { renderDetailsPage } from '../../worker/http/dashboard/details-page.ts';
import { renderSessionPage } from '../../worker/http/dashboard/page.ts';

const NOW = Date.UTC(2026, 4, 31, 12, 0, 0);

describe('retentionDays in a policy', () => {
  it('is optional (none: archived originals are kept forever) and a whole number of days', () => {
    const base = { strategy: { type: 'slidingWindow', maxMessages: 10 } };
    expect(policySchema.parse(base).retentionDays).toBeUndefined();
    expect(policySchema.parse({ ...base, retentionDays: 30 }).retentionDays).toBe(30);
    for (const bad of [0, -1, 1.5, '30', 100_000]) {
      expect(policySchema.safeParse({ ...base, retentionDays: bad }).success).toBe(false);
    }
  });
});

describe('retentionCutoff', () => {
  it('is now minus whole days of 24 h', () => {
    expect(retentionCutoff(30, NOW).getTime()).toBe(NOW - 30 * DAY_MS);
    expect(retentionCutoff(1, NOW).toISOString()).toBe('2026-05-30T12:00:00.000Z');
  });

  it('refuses a retention that is not a positive whole number of days', () => {
    expect(() => retentionCutoff(0, NOW)).toThrow(RangeError);
    expect(() => retentionCutoff(2.5, NOW)).toThrow('positive whole number of days, got 2.5');
  });
});

describe('the words', () => {
  it('labels and explains an expired row, and says when and why a restore is refused', () => {
    const before = retentionCutoff(30, NOW);
    expect(retentionLabel(30)).toBe('retention:30d');
    expect(expiryReason(30, before)).toBe(
      'retention of 30 days: archived originals from before 2026-05-01T12:00:00.000Z dropped',
    );
    expect(expiryReason(1, before)).toMatch(/^retention of 1 day:/);
    expect(
      expiredRestoreMessage('c-1', { id: 'e-1', createdAt: new Date(NOW), reason: expiryReason(30, before) }),
    ).toBe(
      'compaction c-1 cannot be restored: its archived originals were dropped 2026-05-31T12:00:00.000Z by ' +
        "the sweep's retention pass (retention of 30 days: archived originals from before " +
        '2026-05-01T12:00:00.000Z dropped; ledger row e-1); nothing was changed',
    );
  });
});

function expiredRow(): CompactionRow {
  return {
    id: '9a8b7c6d-0000-4000-8000-000000000009',
    sessionId: 's',
    tenantId: 't',
    idempotencyKey: null,
    eventId: null,
    trigger: 'sweep',
    strategy: 'retention:30d',
    summarizer: null,
    instructions: null,
    status: 'expired',
    reason: expiryReason(30, retentionCutoff(30, NOW)),
    cutoffSeq: null,
    lastSeq: null,
    summarySeq: null,
    compactionVersion: null,
    messagesBefore: null,
    messagesAfter: null,
    tokensBefore: null,
    tokensAfter: null,
    messagesArchived: null,
    blocksCleared: null,
    thinkingPreserved: false,
    thinkingNote: null,
    fidelity: null,
    fidelityParts: null,
    lost: null,
    summary: null,
    checkpointBefore: null,
    childSessionId: null,
    mode: null,
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
    durationMs: null,
    error: null,
    restoredAt: null,
    expiredMessages: 1_234,
    expiredTokens: 56_789,
    expiredCompactionIds: ['3f2a1b9c-0000-4000-8000-000000000001', '7c1d2e3f-0000-4000-8000-000000000002'],
    expiredBefore: retentionCutoff(30, NOW),
    createdAt: new Date(NOW),
  };
}

describe('an expired row', () => {
  it('shows in history what it dropped and from which compactions', () => {
    const [, , line] = historyTable([expiredRow()], 400);
    expect(line).toMatch(
      /^2026-05-31 12:00 {2}9a8b7c6d {2}expired {2}sweep {4}retention:30d {2}1,234 dropped {2}56,789 dropped {5}- {2}retention of 30 days: .* dropped \(of 3f2a1b9c, 7c1d2e3f\)$/,
    );
  });

  it('is marked on the chart without adding a point to the size line', () => {
    const row = expiredRow();
    const svg = renderChart({
      rows: [{ ...row, createdAt: new Date(NOW - 60_000) }],
      current: { at: new Date(NOW), tokens: 5_000, messages: 50 },
    });
    expect(svg.match(/class="marker marker-expired"/g)).toHaveLength(2);
    expect(svg).toContain('1,234 archived messages dropped (the live session is untouched)');
    const tokens = /<path class="series series-tokens" d="([^"]+)"/.exec(svg)?.[1] ?? '';
    expect(tokens.split(' ')).toHaveLength(1);
  });
});

const APPLIED_ID = '3f2a1b9c-0000-4000-8000-000000000001';

function appliedRow(): CompactionRow {
  return {
    ...expiredRow(),
    id: APPLIED_ID,
    idempotencyKey: 'manual:x',
    trigger: 'manual',
    strategy: 'slidingWindow',
    status: 'applied',
    reason: 'manual request',
    compactionVersion: 1,
    messagesBefore: 40,
    messagesAfter: 10,
    tokensBefore: 4_000,
    tokensAfter: 1_000,
    messagesArchived: 30,
    blocksCleared: null,
    thinkingPreserved: false,
    thinkingNote: null,
    fidelity: null,
    fidelityParts: null,
    lost: null,
    mode: 'inPlace',
    expiredMessages: null,
    expiredTokens: null,
    expiredCompactionIds: null,
    expiredBefore: null,
    createdAt: new Date(NOW - 40 * DAY_MS),
  };
}

const session: SessionRow = {
  id: 's',
  tenantId: 't',
  agentId: null,
  format: 'anthropic',
  lastSeq: 39,
  messageCount: 10,
  tokenCount: 1_000,
  contextWindow: null,
  compactionVersion: 1,
  compactionCount: 1,
  lastCompactedAt: new Date(NOW - 40 * DAY_MS),
  checkpoint: null,
  parentSessionId: null,
  childSessionId: null,
  stormGuardSeq: null,
  reportedInputTokens: null,
  reportedTokenCount: null,
  tools: null,
  createdAt: new Date(NOW - 50 * DAY_MS),
  updatedAt: new Date(NOW - 40 * DAY_MS),
};

const page = { nonce: 'n', tenantId: 't', admin: false, readOnly: false };

describe('the dashboard', () => {
  it('offers no restore for a compaction whose archive a retention pass dropped, and says so', () => {
    const html = renderSessionPage(page, session, [expiredRow(), appliedRow()], false, {
      messages: [],
      totalMessages: 10,
      totalTokens: 1_000,
    });
    expect(html).not.toContain(`${APPLIED_ID}/restore`);
    expect(html).toContain('archive dropped by retention: cannot be restored');
    expect(html).toContain('1,234 archived dropped');
    // Without the expired row (no retention pass), the compaction can be restored.
    const before = renderSessionPage(page, session, [appliedRow()], false, {
      messages: [],
      totalMessages: 10,
      totalTokens: 1_000,
    });
    expect(before).toContain(`${APPLIED_ID}/restore`);
  });

  it('shows on a compaction page how much of its archive is gone, and on an expired row what it dropped', () => {
    const archived = { items: [], nextCursor: null, totalMessages: 1, totalTokens: 5 };
    const details = renderDetailsPage(page, session, appliedRow(), archived, { firstPage: true });
    expect(details).toContain('29 of the 30 messages it archived were dropped by a retention pass');
    const expired = renderDetailsPage(
      page,
      session,
      expiredRow(),
      { ...archived, totalMessages: 0, totalTokens: 0 },
      { firstPage: true },
    );
    expect(expired).toContain('<th scope="row">archived messages dropped</th><td>1,234</td>');
    expect(expired).toContain(`/sessions/s/compactions/${APPLIED_ID}`);
    expect(expired).toContain('none (a retention pass archives nothing)');
  });
});
