/**
 * Summary instructions end to end: an event's strategy carries them through BullMQ to a real worker,
 * whose `anthropic` summarizer sends them to the (fake) Messages API in the user turn while the
 * system prompt, the cached prefix, stays exactly what a request without them sends; the ledger
 * row records them. `compactor compact --instructions` records them too (the CLI without an API
 * key summarizes offline, and the extractive summarizer ignores them), `history --json` shows
 * them, and the CLI refuses blank ones, naming the option.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../producer/index.ts';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import { INSTRUCTIONS_PREFACE, SYSTEM_PROMPT } from '../../shared/summary/prompt.ts';
import { runCli } from '../support/cli.ts';
import type { RecordedRequest } from '../support/fake-anthropic.ts';
import { loadCorpusSession, waitFor } from '../support/fixtures.ts';
import { useIntegration } from '../support/integration.ts';

const ctx = useIntegration({ anthropic: true, config: { model: 'claude-haiku-4-5' } });
const tenantId = 'instructed';
const INSTRUCTIONS = 'Keep every file path and every error message verbatim; drop the pleasantries.';

beforeAll(() => {
  ctx.startWorker();
});

async function seed(sessionId: string) {
  const messages = await loadCorpusSession('sweagent__ctf-web-i_got_id');
  await createSession(ctx.tdb.database.db, { tenantId, sessionId, messages });
}

/** Sends a run-completed event with `strategy`; waits until its job completed; the requests it made. */
async function compactThroughEvent(sessionId: string, strategy: Strategy) {
  const before = ctx.fake.requests.length;
  const eventId = randomUUID();
  await ctx.producer.queue.add(RUN_COMPLETED, { eventId, tenantId, sessionId, strategy }, { jobId: eventId });
  const state = await waitFor(async () => {
    const s = await ctx.producer.queue.getJobState(eventId);
    return s === 'completed' || s === 'failed' ? s : undefined;
  }, 25_000);
  expect(state).toBe('completed');
  return ctx.fake.requests.slice(before).filter((r) => r.path.startsWith('/v1/messages'));
}

interface SentBody {
  system: Array<{ type: string; text: string; cache_control?: unknown }>;
  tools: unknown[];
  messages: Array<{ role: string; content: Array<{ type: string; text: string }> }>;
}

const bodyOf = (request: RecordedRequest | undefined) => request?.body as SentBody;
/** The text of a request's user turn. */
const turnText = (body: SentBody) => (body.messages[0]?.content ?? []).map((b) => b.text).join('\n');

describe('summary instructions', () => {
  it('reach the Messages API in the user turn; the cached system prompt is the same as without them', async () => {
    await seed('plain');
    await seed('instructed');
    const plain = await compactThroughEvent('plain', {
      type: 'summarize',
      keepRecent: 8,
      maxSummaryTokens: 2_000,
    });
    const instructed = await compactThroughEvent('instructed', {
      type: 'summarize',
      keepRecent: 8,
      maxSummaryTokens: 2_000,
      instructions: `  ${INSTRUCTIONS}\n`,
    });
    expect(plain).toHaveLength(1);
    expect(instructed).toHaveLength(1);
    const without = bodyOf(plain[0]);
    const withThem = bodyOf(instructed[0]);

    // The shared prefix (tools, then the system block) is byte-identical; under Haiku 4.5's minimum
    // cacheable length (4,096 tokens) it carries no breakpoint of its own.
    expect(JSON.stringify(withThem.system)).toBe(JSON.stringify(without.system));
    expect(JSON.stringify(withThem.tools)).toBe(JSON.stringify(without.tools));
    expect(withThem.system).toEqual([{ type: 'text', text: SYSTEM_PROMPT }]);

    // The instructions close the one user turn, trimmed, in their block after the preface.
    expect(withThem.messages).toHaveLength(1);
    const [turn] = withThem.messages;
    expect(turn?.role).toBe('user');
    expect(
      turnText(withThem).endsWith(
        `${INSTRUCTIONS_PREFACE}\n<instructions>\n${INSTRUCTIONS}\n</instructions>`,
      ),
    ).toBe(true);
    expect(turnText(without)).not.toContain('<instructions>');

    const [plainRow] = await ctx.reads.history(tenantId, 'plain');
    const [instructedRow] = await ctx.reads.history(tenantId, 'instructed');
    expect(plainRow).toMatchObject({ status: 'applied', summarizer: 'anthropic', instructions: null });
    expect(instructedRow).toMatchObject({
      status: 'applied',
      summarizer: 'anthropic',
      instructions: INSTRUCTIONS,
    });
  });

  it('given to compactor compact are recorded in the ledger, even by the extractive summarizer, and history shows them', async () => {
    await seed('by-hand');
    const run = await runCli(
      [
        'compact',
        '--tenant',
        tenantId,
        '--session',
        'by-hand',
        '--strategy',
        'summarize:8',
        '--instructions',
        INSTRUCTIONS,
      ],
      ctx.cliEnv,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const row = JSON.parse(run.stdout);
    expect(row).toMatchObject({ status: 'applied', summarizer: 'extractive', instructions: INSTRUCTIONS });

    const history = await runCli(
      ['history', '--tenant', tenantId, '--session', 'by-hand', '--json'],
      ctx.cliEnv,
    );
    expect(history.code).toBe(0);
    const rows = history.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toEqual([expect.objectContaining({ id: row.id, instructions: INSTRUCTIONS })]);
  });

  it('are refused by compactor compact when blank, naming the option, and nothing is written', async () => {
    await seed('blank');
    const run = await runCli(
      ['compact', '--tenant', tenantId, '--session', 'blank', '--instructions', '  \n '],
      ctx.cliEnv,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--instructions: must not be blank');
    expect(await ctx.reads.history(tenantId, 'blank')).toEqual([]);
  });

  it('are refused by compactor compact for a strategy that writes no summary', async () => {
    await seed('windowed');
    const run = await runCli(
      [
        'compact',
        '--tenant',
        tenantId,
        '--session',
        'windowed',
        '--strategy',
        'slidingWindow:5',
        '--instructions',
        'Keep SQL.',
      ],
      ctx.cliEnv,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /instructions: the strategy in force \(slidingWindow:5, from the override\) writes no summary/,
    );
    expect(await ctx.reads.history(tenantId, 'windowed')).toEqual([]);
  });
});
