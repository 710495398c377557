/**
 * The fidelity check end to end, on real Postgres: every summary's score, parts and what it lost
 * are in its ledger row (and shown by the dashboard's pages); a summary under the strategy's
 * `minFidelity` is never committed, whichever `onLowFidelity` says what happens instead.
 */
import { describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { LowFidelityError } from '../../shared/contract/errors.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import type { Lost } from '../../shared/fidelity/score.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { noUsage, pagesOf, type Summarizer } from '../../shared/summary/summarizer.ts';
import { renderDetailsPage } from '../../worker/http/dashboard/details-page.ts';
import { fidelityCell } from '../../worker/http/dashboard/fidelity-view.ts';
import { loadCorpusSession } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration();
const tenantId = 'faithful';
const CORPUS = 'sweagent__pydicom-1458';

/** A summarizer that reads every page and keeps nothing of them. */
const lossy: Summarizer = {
  name: 'lossy',
  async summarize(input) {
    for await (const _page of pagesOf(input.leaving)) {
      // read and forgotten
    }
    return { checkpoint: { ...emptyCheckpoint(), goal: 'something happened' }, usage: noUsage() };
  },
};

/** An offline summarizer that keeps the extractive checkpoint but the user's instructions. */
const forgetful: Summarizer = {
  name: 'extractive',
  async summarize(input) {
    const { checkpoint, usage } = await createExtractiveSummarizer().summarize(input);
    return { checkpoint: { ...checkpoint, goal: '', userInstructions: [] }, usage };
  },
};

async function seed(sessionId: string) {
  const messages = await loadCorpusSession(CORPUS);
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
}

function strategy(extra: Partial<Extract<Strategy, { type: 'summarize' }>> = {}): Strategy {
  return { type: 'summarize', keepRecent: 8, maxSummaryTokens: 2_000, ...extra };
}

async function sessionState(sessionId: string) {
  const [row] = await ctx.tdb.database.sql<
    Array<{ compaction_version: number; message_count: number; checkpoint: unknown }>
  >`select compaction_version, message_count, checkpoint from sessions where tenant_id = ${tenantId} and id = ${sessionId}`;
  return row;
}

describe('fidelity check', () => {
  it('records the score, its parts and what was lost on an applied summary, and the dashboard shows it', async () => {
    await seed('kept');
    const outcome = await ctx.compactInProcess({ tenantId, sessionId: 'kept', strategy: strategy() });
    expect(outcome.status).toBe('applied');
    const [row] = await ctx.reads.history(tenantId, 'kept');
    expect(row?.status).toBe('applied');
    expect(row?.fidelity).toBeGreaterThan(0.8);
    expect(row?.fidelity).toBeLessThanOrEqual(1);
    const parts = row?.fidelityParts as Record<string, { total: number; kept: number }>;
    expect(parts.paths?.total).toBeGreaterThan(0);
    const lost = row?.lost as Lost;
    expect(Array.isArray(lost.paths) && Array.isArray(lost.commands)).toBe(true);
    expect(lost.commands.length).toBeGreaterThan(0); // sweagent's edit commands are not in the checkpoint
    if (!row) throw new Error('no row');
    const page = renderDetailsPage(
      { nonce: 'n', tenantId, admin: false, readOnly: true },
      { id: 'kept' },
      row,
      { items: [], nextCursor: null, totalMessages: 0, totalTokens: 0 },
      { firstPage: true },
    );
    expect(page).toContain('What the summary lost');
    expect(page).toContain(Number(row.fidelity).toFixed(3));
    expect(page).toContain(
      lost.commands[0]?.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;'),
    );
    expect(fidelityCell(row)).toContain('lost');
  });

  it('skip: a summary under minFidelity is not committed; the skipped row says why, with the score', async () => {
    await seed('skip');
    const before = await sessionState('skip');
    const scores: number[] = [];
    const outcome = await ctx.compactInProcess(
      { tenantId, sessionId: 'skip', strategy: strategy({ minFidelity: 0.6, onLowFidelity: 'skip' }) },
      {
        summarizers: { primary: lossy },
        observer: { observe: (event) => event.type === 'fidelity' && scores.push(event.score) },
      },
    );
    expect(outcome.status).toBe('skipped');
    expect(await sessionState('skip')).toEqual(before);
    const [row] = await ctx.reads.history(tenantId, 'skip');
    expect(row?.status).toBe('skipped');
    expect(row?.summarizer).toBe('lossy');
    expect(row?.reason).toMatch(
      /the lossy summary's fidelity 0\.\d+ is below minFidelity 0\.6 \(paths 0\/\d+/,
    );
    expect(row?.fidelity).toBeLessThan(0.6);
    expect(scores).toEqual([row?.fidelity]);
    const lost = row?.lost as Lost;
    expect(lost.paths.length).toBeGreaterThan(0);
    expect(lost.instructions.length).toBeGreaterThan(0);
  });

  it('retry: a failed row with the score, then a retryable error; nothing committed', async () => {
    await seed('retry');
    const before = await sessionState('retry');
    await expect(
      ctx.compactInProcess(
        { tenantId, sessionId: 'retry', strategy: strategy({ minFidelity: 0.6, onLowFidelity: 'retry' }) },
        { summarizers: { primary: lossy } },
      ),
    ).rejects.toBeInstanceOf(LowFidelityError);
    expect(await sessionState('retry')).toEqual(before);
    const [row] = await ctx.reads.history(tenantId, 'retry');
    expect(row?.status).toBe('failed');
    expect(row?.idempotencyKey).toBeNull();
    expect(row?.error).toMatch(/below minFidelity 0\.6/);
    expect(row?.fidelity).toBeLessThan(0.6);
  });

  it('fallback: the extractive summary is committed instead, and the row says so', async () => {
    await seed('fallback');
    const outcome = await ctx.compactInProcess(
      {
        tenantId,
        sessionId: 'fallback',
        strategy: strategy({ minFidelity: 0.6, onLowFidelity: 'fallback' }),
      },
      { summarizers: { primary: lossy, offline: createExtractiveSummarizer() } },
    );
    expect(outcome.status).toBe('applied');
    const [row] = await ctx.reads.history(tenantId, 'fallback');
    expect(row?.summarizer).toBe('extractive');
    expect(row?.reason).toMatch(
      /below minFidelity 0\.6 .*: summarized by extractive instead \(fidelity (?:1|0\.\d+)\)/,
    );
    expect(row?.fidelity).toBeGreaterThanOrEqual(0.6);
  });

  it('fallback held to the same bar: skipped when the extractive summary is under it too', async () => {
    await seed('fallback-low');
    const before = await sessionState('fallback-low');
    const outcome = await ctx.compactInProcess(
      {
        tenantId,
        sessionId: 'fallback-low',
        strategy: strategy({ minFidelity: 1, onLowFidelity: 'fallback' }),
      },
      { summarizers: { primary: lossy, offline: forgetful } },
    );
    // The offline summary keeps the paths and the request but none of the user's rules.
    expect(outcome.status).toBe('skipped');
    expect(await sessionState('fallback-low')).toEqual(before);
    const [row] = await ctx.reads.history(tenantId, 'fallback-low');
    expect(row?.reason).toMatch(/the extractive fallback scored 0\.\d+ .* too: skipped/);
    expect(row?.summarizer).toBe('extractive');
  });
});
