/**
 * Every outcome of the compaction pipeline, on in-memory ports (test/support/memory-ports.ts), no
 * database: what the session holds afterwards, what the ledger records, what the caller gets back
 * and what the observer is told. Admission (unknown session, replay, triggers, lineage, storm
 * guard), the strategies without a summary, the summary path step by step (summarizer choice,
 * budget, summary, fidelity, size, write), the lease and the fence, a batch, every fallback route,
 * a staged strategy, and a job's last attempt.
 */
import { describe, expect, it } from 'vitest';
import type { Block } from '../../shared/contract/blocks.ts';
import {
  FenceError,
  LeaseBusyError,
  LowFidelityError,
  NothingToSummarizeError,
  SessionNotFoundError,
  SummarizerConfigError,
  TransientError,
} from '../../shared/contract/errors.ts';
import { createExtractiveSummarizer } from '../../shared/extractive/index.ts';
import { strategySchema } from '../../shared/strategies/index.ts';
import { emptyCheckpoint } from '../../shared/summary/checkpoint.ts';
import { noUsage, pagesOf, type Summarizer } from '../../shared/summary/summarizer.ts';
import type { CompactionOutcome, CompactionRequest } from '../../worker/pipeline/deps.ts';
import { afterLastAttempt } from '../../worker/pipeline/last-attempt.ts';
import { runCompaction } from '../../worker/pipeline/pipeline.ts';
import type { Summarizers } from '../../worker/pipeline/ports.ts';
import { silentLogger } from '../support/fixtures.ts';
import {
  MemoryBatching,
  type MemoryPipeline,
  memoryPipeline,
  type SeedMessage,
} from '../support/memory-ports.ts';

const T = 'acme';
const FILLER =
  'The change keeps the public interface as it is, adds a regression test beside the existing ones, ' +
  'and documents the edge case in the module comment so that the next reader sees why it exists. ';

/** A coding session: a pinned system prompt, then `turns` user requests each answered by the agent. */
function work(turns: number): SeedMessage[] {
  const messages: SeedMessage[] = [
    { role: 'system', content: 'You are a careful coding agent.', pinned: true },
  ];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'user',
      content: `Please make src/parser/case${i}.ts handle input ${i} without throwing. ${FILLER}`,
    });
    messages.push({
      role: 'assistant',
      content: `Edited src/parser/case${i}.ts and ran \`npm test -- case${i}\`: ${i + 3} tests pass. ${FILLER}`,
    });
  }
  return messages;
}

/** A session of tool uses with large results: a user turn, then per use a call and its result. */
function toolWork(uses: number): SeedMessage[] {
  const messages: SeedMessage[] = [{ role: 'user', content: 'Find why the build is slow.' }];
  for (let i = 0; i < uses; i++) {
    const call: Block[] = [{ type: 'tool_use', id: `t${i}`, name: 'bash', input: { command: `step ${i}` } }];
    const result: Block[] = [
      { type: 'tool_result', tool_use_id: `t${i}`, content: `${'log line '.repeat(500)}${i}` },
    ];
    messages.push({ role: 'assistant', content: call }, { role: 'user', content: result });
  }
  return messages;
}

let keys = 0;
/** A manual request (no triggers) with a fresh idempotency key; `strategy` in its JSON form. */
function request(
  sessionId: string,
  strategy?: Record<string, unknown>,
  more: Partial<CompactionRequest> = {},
): CompactionRequest {
  return {
    tenantId: T,
    sessionId,
    strategy: strategy === undefined ? undefined : strategySchema.parse(strategy),
    trigger: 'manual',
    idempotencyKey: `key-${++keys}`,
    eventId: null,
    ...more,
  };
}

const SUMMARIZE = { type: 'summarize', keepRecent: 4, maxSummaryTokens: 2_000 };
const extractive = createExtractiveSummarizer();
/** A sonnet request of 1,000 input and 1,000 output tokens at most: ≈0.019 USD. */
const ESTIMATE = { model: 'claude-sonnet-4-5', inputTokens: 1_000, maxOutputTokens: 1_000 };

/** A paid LLM summarizer: the extractive summary, billed as a sonnet call of 0.0072 USD. */
function paid(name = 'anthropic', calls: string[] = []): Summarizer {
  return {
    name,
    estimate: () => ESTIMATE,
    async summarize(input) {
      calls.push(name);
      const { checkpoint } = await extractive.summarize(input);
      return {
        checkpoint,
        usage: {
          ...noUsage(120),
          model: 'claude-sonnet-4-5',
          inputTokens: 900,
          outputTokens: 300,
          costUsd: 0.0072,
        },
      };
    },
  };
}

/** Reads every page and keeps nothing of them: its summaries score low. */
const lossy: Summarizer = {
  name: 'lossy',
  async summarize(input) {
    for await (const _page of pagesOf(input.leaving)) {
      // read and forgotten
    }
    return { checkpoint: { ...emptyCheckpoint(), goal: 'something happened' }, usage: noUsage() };
  },
};

/** Fails every call with `error`, counting them. */
function failing(error: Error, calls: string[] = []): Summarizer {
  return {
    name: 'anthropic',
    async summarize() {
      calls.push('anthropic');
      throw error;
    },
  };
}

/** Runs `work` before delegating to the extractive summarizer: something that happens meanwhile. */
function meanwhile(work: () => unknown, name = 'extractive'): Summarizer {
  return {
    name,
    async summarize(input) {
      await work();
      return extractive.summarize(input);
    },
  };
}

/** A pipeline on memory ports, holding session `s` of `messages` and the tenant's `policy`, if any. */
function setup(
  summarizers: Summarizers,
  messages: SeedMessage[],
  options: { policy?: Record<string, unknown>; batching?: MemoryBatching; contextWindow?: number } = {},
): MemoryPipeline {
  const pipeline = memoryPipeline(summarizers, { batching: options.batching });
  pipeline.store.addSession(T, 's', messages, { contextWindow: options.contextWindow });
  if (options.policy) pipeline.store.setPolicy(T, options.policy);
  return pipeline;
}

function rowOf(outcome: CompactionOutcome) {
  if (outcome.row === null) throw new Error(`no ledger row: ${outcome.status}`);
  return outcome.row;
}

describe('admission', () => {
  it('an unknown session: SessionNotFoundError, and nothing is recorded', async () => {
    const { deps, store } = setup({ primary: extractive }, work(2));
    await expect(runCompaction(deps, request('nope', SUMMARIZE))).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );
    expect(store.ledger).toEqual([]);
  });

  it('a replayed request (same idempotency key): the earlier row, no second summary, compacted once', async () => {
    const calls: string[] = [];
    const { deps, store } = setup({ primary: paid('anthropic', calls) }, work(8));
    const first = request('s', SUMMARIZE);
    const applied = await runCompaction(deps, first);
    // Redelivered after the agent went on: the session could be compacted again, but not by this event.
    store.append(T, 's', work(3).slice(1));
    const replayed = await runCompaction(deps, first);
    expect(applied.status).toBe('applied');
    expect(replayed).toMatchObject({ status: 'duplicate', row: { id: rowOf(applied).id } });
    expect(calls).toEqual(['anthropic']);
    expect(store.ledger).toHaveLength(1);
    expect(store.view(T, 's')).toMatchObject({ version: 1, messageCount: 12 });
  });

  it('an event below every trigger: skipped with the reason, the session as it was', async () => {
    const policy = { strategy: SUMMARIZE, triggers: { maxMessages: 100 } };
    const { deps, store } = setup({ primary: extractive }, work(3), { policy });
    const before = store.view(T, 's');
    const outcome = await runCompaction(deps, request('s', undefined, { trigger: 'event' }));
    expect(outcome).toMatchObject({ status: 'skipped', plan: null });
    expect(rowOf(outcome).reason).toBe('below every trigger: 7 of 100 messages');
    expect(store.view(T, 's')).toEqual(before);
  });

  it('the agent-reported context size fires a token trigger the estimate does not', async () => {
    const policy = { strategy: { type: 'slidingWindow', maxMessages: 4 }, triggers: { maxTokens: 50_000 } };
    const { deps, store } = setup({ primary: extractive }, work(3), { policy });
    const outcome = await runCompaction(
      deps,
      request('s', undefined, { trigger: 'event', inputTokens: 60_000 }),
    );
    expect(outcome.status).toBe('applied');
    expect(store.view(T, 's').messageCount).toBe(5);
  });

  it('a session that continued in a child session: skipped, naming the child', async () => {
    const { deps, store } = setup({ primary: extractive }, work(6), {
      policy: { strategy: { type: 'slidingWindow', maxMessages: 4 }, mode: 'newSession' },
    });
    await runCompaction(deps, request('s'));
    const again = await runCompaction(deps, request('s'));
    expect(again.status).toBe('skipped');
    expect(rowOf(again).reason).toBe('the session continued in session "s.v1"');
    expect(store.rows(T, 's').map((r) => r.status)).toEqual(['applied', 'skipped']);
  });

  it('the storm guard: a compaction that left the session over its trigger holds back the next event', async () => {
    const policy = { strategy: { type: 'slidingWindow', maxMessages: 6 }, triggers: { maxMessages: 4 } };
    const { deps, store } = setup({ primary: extractive }, work(6), { policy });
    const first = await runCompaction(deps, request('s', undefined, { trigger: 'event' }));
    expect(first.status).toBe('applied');
    expect(store.view(T, 's').stormGuardSeq).toBe(12);
    store.append(T, 's', [{ role: 'user', content: 'And one more thing.' }]);
    const held = await runCompaction(deps, request('s', undefined, { trigger: 'event' }));
    expect(held.status).toBe('skipped');
    expect(rowOf(held).reason).toMatch(/^storm guard: .* waiting for 5 more message\(s\)/);
    expect(store.view(T, 's').version).toBe(1);
  });
});

describe('strategies without a summary (under the row lock, no lease)', () => {
  it('slidingWindow: the oldest messages move to the archive, the newest stay', async () => {
    const { deps, store, leases } = setup({ primary: extractive }, work(5));
    const outcome = await runCompaction(deps, request('s', { type: 'slidingWindow', maxMessages: 4 }));
    const row = rowOf(outcome);
    expect(row).toMatchObject({
      status: 'applied',
      strategy: 'slidingWindow',
      messagesBefore: 11,
      messagesAfter: 5,
    });
    expect(store.view(T, 's').messages.map((m) => m.seq)).toEqual([0, 7, 8, 9, 10]);
    expect(store.archive.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(store.archive.every((m) => m.compactionId === row.id)).toBe(true);
    expect(leases.isHeld(T, 's')).toBe(false);
  });

  it('nothing to do: the plan skips with its reason and the session is untouched', async () => {
    const { deps, store } = setup({ primary: extractive }, work(2));
    const before = store.view(T, 's');
    const outcome = await runCompaction(deps, request('s', { type: 'slidingWindow', maxMessages: 10 }));
    expect(outcome.status).toBe('skipped');
    expect(rowOf(outcome).reason).toBe('5 messages, not more than the 10 kept');
    expect(store.view(T, 's')).toEqual(before);
  });

  it('nothing to do while over the trigger: skipped, and the storm guard holds back the next events', async () => {
    const policy = { strategy: { type: 'slidingWindow', maxMessages: 10 }, triggers: { maxMessages: 3 } };
    const { deps, store } = setup({ primary: extractive }, work(2), { policy });
    const outcome = await runCompaction(deps, request('s', undefined, { trigger: 'event' }));
    expect(rowOf(outcome)).toMatchObject({
      status: 'skipped',
      reason: '5 messages, not more than the 10 kept',
    });
    expect(store.view(T, 's')).toMatchObject({ version: 0, stormGuardSeq: 4 });
  });

  it('clearToolResults: old results rewritten in place, their originals archived as rewritten', async () => {
    const { deps, store } = setup({ primary: extractive }, toolWork(5));
    const outcome = await runCompaction(deps, request('s', { type: 'clearToolResults', keep: 2 }));
    const row = rowOf(outcome);
    expect(row).toMatchObject({ status: 'applied', strategy: 'clearToolResults', blocksCleared: 3 });
    const view = store.view(T, 's');
    expect(view.messageCount).toBe(11);
    expect(view.messages.find((m) => m.seq === 2)?.text).not.toContain('log line');
    expect(view.messages.find((m) => m.seq === 10)?.text).toContain('log line');
    expect(store.archive.map((m) => [m.seq, m.rewritten])).toEqual([
      [2, true],
      [4, true],
      [6, true],
    ]);
  });

  it('mode newSession: the history continues in a child session, the parent stays whole', async () => {
    const { deps, store } = setup({ primary: extractive }, work(5), {
      policy: { strategy: { type: 'slidingWindow', maxMessages: 4 }, mode: 'newSession' },
    });
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome)).toMatchObject({ status: 'applied', childSessionId: 's.v1', messagesAfter: 5 });
    expect(store.view(T, 's')).toMatchObject({ messageCount: 11, childSessionId: 's.v1' });
    expect(store.view(T, 's.v1').messages.map((m) => m.seq)).toEqual([0, 7, 8, 9, 10]);
  });

  it('a clearing under mode newSession: skipped, since it rewrites in place', async () => {
    const { deps, store } = setup({ primary: extractive }, toolWork(5), {
      policy: { strategy: { type: 'clearToolResults', keep: 2 }, mode: 'newSession' },
    });
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome).reason).toBe(
      "clearToolResults rewrites messages in place; the policy's mode newSession does not apply to it",
    );
    expect(store.archive).toEqual([]);
  });
});

describe('payback', () => {
  it('a summary predicted not to pay back: skipped before any call, the prediction on its row', async () => {
    const calls: string[] = [];
    const policy = { strategy: SUMMARIZE, payback: { minRatio: 1, horizonRequests: 1 } };
    const { deps, store, events } = setup({ primary: paid('anthropic', calls) }, work(5), { policy });
    const before = store.view(T, 's');
    const outcome = await runCompaction(deps, request('s', undefined, { trigger: 'event' }));
    const row = rowOf(outcome);
    expect(row.status).toBe('skipped');
    expect(row.reason).toMatch(
      /^payback: predicted ratio [0-9.]+ < minRatio 1: saves \d+ tokens × 1 requests \(policy\)/,
    );
    expect(row.paybackInputs).toMatchObject({ summaryModel: 'claude-sonnet-4-5', requests: 1 });
    expect(calls).toEqual([]);
    expect(events.some((e) => e.type === 'stage' && e.stage === 'summarize')).toBe(false);
    expect(store.view(T, 's')).toEqual(before);
  });

  it('measured from the runs reported after the compaction, a redelivered event counted once', async () => {
    const { deps, store } = setup({ primary: extractive }, work(5));
    const applied = rowOf(await runCompaction(deps, request('s', { type: 'slidingWindow', maxMessages: 4 })));
    const saved = (applied.tokensBefore ?? 0) - (applied.tokensAfter ?? 0);
    const quiet = { type: 'none' };
    const next = request('s', quiet, { trigger: 'event', eventId: 'e-2', inputTokens: 900 });
    await runCompaction(deps, next);
    await runCompaction(deps, next);
    const row = store.ledger.find((r) => r.id === applied.id);
    expect(row).toMatchObject({
      measuredRequests: 1,
      measuredTokensSent: 900,
      measuredTokensWithout: 900 + saved,
    });
    expect(row?.measuredEventIds).toEqual(['e-2']);
  });

  it('the same summary asked for by hand: made, whatever it is predicted to earn', async () => {
    const calls: string[] = [];
    const policy = { strategy: SUMMARIZE, payback: { minRatio: 1, horizonRequests: 1 } };
    const { deps } = setup({ primary: paid('anthropic', calls) }, work(5), { policy });
    const row = rowOf(await runCompaction(deps, request('s')));
    expect(row.status).toBe('applied');
    expect(row.paybackRatio).toBeLessThan(1);
    expect(calls).toEqual(['anthropic']);
  });
});

describe('a summary', () => {
  it('is written at the cutoff, the leaving messages archived and the checkpoint set', async () => {
    const { deps, store, events } = setup({ primary: extractive }, work(5));
    const outcome = await runCompaction(deps, request('s', SUMMARIZE));
    const row = rowOf(outcome);
    expect(row).toMatchObject({ status: 'applied', summarizer: 'extractive', summarySeq: 6, reason: null });
    expect(row.fidelity).toBeGreaterThan(0.5);
    const view = store.view(T, 's');
    expect(view.messages.map((m) => [m.seq, m.kind])).toEqual([
      [0, 'message'],
      [6, 'summary'],
      [7, 'message'],
      [8, 'message'],
      [9, 'message'],
      [10, 'message'],
    ]);
    expect(view.checkpoint?.lastUserRequest).toContain('case2');
    expect(events.filter((e) => e.type === 'stage').map((e) => e.type === 'stage' && e.stage)).toEqual([
      'admission',
      'lease',
      'snapshot',
      'plan',
      'summarize',
      'apply',
    ]);
    expect(events).toContainEqual({ type: 'fidelity', summarizer: 'extractive', score: row.fidelity });
  });

  it('by the summarizer the strategy names, when this process runs it', async () => {
    const calls: string[] = [];
    const named = { 'anthropic-compaction': paid('anthropic-compaction', calls) };
    const { deps } = setup({ primary: extractive, named }, work(5));
    const outcome = await runCompaction(
      deps,
      request('s', { ...SUMMARIZE, summarizer: 'anthropic-compaction' }),
    );
    expect(rowOf(outcome)).toMatchObject({ status: 'applied', summarizer: 'anthropic-compaction' });
    expect(calls).toEqual(['anthropic-compaction']);
  });

  it('by the primary summarizer when the named one cannot run here, and the row says so', async () => {
    const { deps } = setup({ primary: extractive, named: { extractive } }, work(5));
    const outcome = await runCompaction(deps, request('s', { ...SUMMARIZE, summarizer: 'anthropic' }));
    expect(rowOf(outcome)).toMatchObject({
      status: 'applied',
      summarizer: 'extractive',
      reason:
        'the strategy names the anthropic summarizer, which this worker cannot run (no ANTHROPIC_API_KEY): summarized by extractive',
    });
  });

  it('nothing to do: the plan skips before any summary is made', async () => {
    const calls: string[] = [];
    const { deps, store } = setup({ primary: paid('anthropic', calls) }, work(1));
    const outcome = await runCompaction(deps, request('s', SUMMARIZE));
    expect(outcome.status).toBe('skipped');
    expect(calls).toEqual([]);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('nothing to summarize (the summarizer says so): skipped with its reason', async () => {
    const nothing = failing(
      new NothingToSummarizeError('no user or assistant content among the leaving messages'),
    );
    const { deps, store } = setup({ primary: nothing }, work(5));
    const outcome = await runCompaction(deps, request('s', SUMMARIZE));
    expect(rowOf(outcome)).toMatchObject({
      status: 'skipped',
      reason: 'no user or assistant content among the leaving messages',
    });
    expect(store.view(T, 's').version).toBe(0);
  });

  it('too large to make the session smaller: skipped, and the storm guard set while over the trigger', async () => {
    const wordy: Summarizer = {
      name: 'wordy',
      async summarize() {
        return { checkpoint: { ...emptyCheckpoint(), goal: 'word '.repeat(790) }, usage: noUsage() };
      },
    };
    const policy = { strategy: { ...SUMMARIZE, keepRecent: 2 }, triggers: { maxMessages: 3 } };
    const short: SeedMessage[] = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 === 0 ? ('user' as const) : ('assistant' as const),
      content: `ok ${i}`,
    }));
    const { deps, store } = setup({ primary: wordy }, short, { policy });
    const outcome = await runCompaction(deps, request('s', undefined, { trigger: 'event' }));
    expect(rowOf(outcome)).toMatchObject({ status: 'skipped', summarizer: 'wordy' });
    expect(rowOf(outcome).reason).toMatch(
      /^a summary of \d+ tokens \(as the context sends it\).* would grow the context by \d+ tokens/,
    );
    expect(store.view(T, 's')).toMatchObject({ version: 0, messageCount: 8, stormGuardSeq: 7 });
  });

  it('a summarizer error: thrown for the job to retry, nothing written', async () => {
    const { deps, store } = setup(
      { primary: failing(new TransientError('overloaded', { status: 529, requestId: null })) },
      work(5),
    );
    const before = store.view(T, 's');
    await expect(runCompaction(deps, request('s', SUMMARIZE))).rejects.toThrow('overloaded');
    expect(store.ledger).toEqual([]);
    expect(store.view(T, 's')).toEqual(before);
  });

  it('a sweep whose policy batches: queued for the next message batch, nothing written yet', async () => {
    const batching = new MemoryBatching();
    const { deps, store } = setup({ primary: extractive }, work(5), {
      policy: { strategy: SUMMARIZE, batch: true },
      batching,
    });
    const outcome = await runCompaction(
      deps,
      request('s', undefined, { trigger: 'sweep', expectedVersion: 0 }),
    );
    expect(outcome).toMatchObject({ status: 'batched', row: null, queued: true });
    expect(batching.queued).toMatchObject([{ sessionId: 's', expectedVersion: 0, plan: { summarySeq: 6 } }]);
    expect(store.ledger).toEqual([]);
  });
});

describe('the lease and the fence', () => {
  it('a lease held by another worker: LeaseBusyError, no summary made, nothing written', async () => {
    const calls: string[] = [];
    const { deps, store, leases } = setup({ primary: paid('anthropic', calls) }, work(5));
    leases.holdElsewhere(T, 's');
    await expect(runCompaction(deps, request('s', SUMMARIZE))).rejects.toBeInstanceOf(LeaseBusyError);
    expect(calls).toEqual([]);
    expect(store.ledger).toEqual([]);
  });

  it('a lease lost during the summary: the run stops, nothing written', async () => {
    const pipeline = setup({ primary: extractive }, work(5));
    const { deps, store, leases } = pipeline;
    deps.summarizers = { primary: meanwhile(() => leases.lose(T, 's')) };
    await expect(runCompaction(deps, request('s', SUMMARIZE))).rejects.toThrow('lease lost');
    expect(store.ledger).toEqual([]);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('a write lost to a newer version: planned again on it and applied once', async () => {
    const pipeline = setup({ primary: extractive }, work(5));
    const { deps, store, events } = pipeline;
    let summaries = 0;
    deps.summarizers = {
      primary: meanwhile(() => {
        if (summaries++ === 0) store.beforeNextWrite(() => store.bumpVersion(T, 's'));
      }),
    };
    const outcome = await runCompaction(deps, request('s', SUMMARIZE));
    expect(rowOf(outcome)).toMatchObject({ status: 'applied', compactionVersion: 2 });
    expect(summaries).toBe(2);
    expect(events.filter((e) => e.type === 'fenceRejected')).toHaveLength(1);
    expect(store.ledger).toHaveLength(1);
  });

  it('a session that keeps changing: FenceError after three plans, nothing of ours written', async () => {
    const pipeline = setup({ primary: extractive }, work(5));
    const { deps, store, events } = pipeline;
    deps.summarizers = { primary: meanwhile(() => store.beforeNextWrite(() => store.bumpVersion(T, 's'))) };
    await expect(runCompaction(deps, request('s', SUMMARIZE))).rejects.toBeInstanceOf(FenceError);
    expect(events.filter((e) => e.type === 'fenceRejected')).toHaveLength(3);
    expect(store.ledger).toEqual([]);
    expect(store.archive).toEqual([]);
  });

  it('another run with the same key committed during the summary: its row, our reservation released', async () => {
    const pipeline = setup({ primary: extractive }, work(5), {
      policy: { strategy: SUMMARIZE, budget: { dailyUsd: 5 } },
    });
    const { deps, store, budgets } = pipeline;
    const req = request('s');
    // The same request, run by another worker as a sliding window (no lease), commits first.
    const other = { ...req, strategy: strategySchema.parse({ type: 'slidingWindow', maxMessages: 4 }) };
    const racing = meanwhile(async () => {
      expect(budgets.reservations).toHaveLength(1);
      await runCompaction(deps, other);
    }, 'anthropic');
    deps.summarizers = { primary: { ...racing, estimate: () => ESTIMATE } };
    const outcome = await runCompaction(deps, req);
    expect(outcome.status).toBe('duplicate');
    expect(rowOf(outcome)).toMatchObject({ status: 'applied', strategy: 'slidingWindow' });
    expect(store.ledger).toHaveLength(1);
    expect(budgets.reservations).toEqual([]);
  });
});

describe('spend budgets', () => {
  const policy = (budget: Record<string, unknown>) => ({ strategy: SUMMARIZE, budget });

  it('within budget: the paid summary is made, its cost recorded, its reservation replaced', async () => {
    const { deps, store, budgets } = setup({ primary: paid(), offline: extractive }, work(5), {
      policy: policy({ dailyUsd: 1 }),
    });
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome)).toMatchObject({ status: 'applied', summarizer: 'anthropic', costUsd: 0.0072 });
    expect(store.view(T, 's').checkpoint).not.toBeNull();
    expect(budgets.reservations).toEqual([]);
  });

  it('exceeded, onExceeded extractive: the offline summary stands in, and the row says why', async () => {
    const calls: string[] = [];
    const { deps, budgets, events } = setup(
      { primary: paid('anthropic', calls), offline: extractive },
      work(5),
      {
        policy: policy({ dailyUsd: 0.01 }),
      },
    );
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome)).toMatchObject({ status: 'applied', summarizer: 'extractive', costUsd: 0 });
    expect(rowOf(outcome).reason).toMatch(
      /^budget: daily 0\.01 USD of the tenant, spent 0\.00, this summary ≈0\.02: summarized by extractive instead$/,
    );
    expect(calls).toEqual([]);
    expect(budgets.reservations).toEqual([]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'budgetExceeded', action: 'extractive' }));
  });

  it('exceeded, onExceeded clearToolResults: old tool results are cleared instead', async () => {
    const { deps, store } = setup({ primary: paid(), offline: extractive }, toolWork(6), {
      policy: policy({ dailyUsd: 0.01, onExceeded: 'clearToolResults' }),
    });
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome)).toMatchObject({
      status: 'applied',
      strategy: 'clearToolResults',
      summarizer: null,
    });
    expect(rowOf(outcome).reason).toMatch(/: cleared old tool results instead$/);
    expect(store.view(T, 's').messageCount).toBe(13);
    expect(store.archive.every((m) => m.rewritten)).toBe(true);
  });

  it('exceeded, onExceeded skip: skipped with the budget in the reason', async () => {
    const { deps, store } = setup({ primary: paid(), offline: extractive }, work(5), {
      policy: policy({ dailyUsd: 0.01, onExceeded: 'skip' }),
    });
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome)).toMatchObject({ status: 'skipped' });
    expect(rowOf(outcome).reason).toMatch(/^budget: daily 0\.01 USD .*: skipped$/);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('exceeded, extractive asked but this process has no offline summarizer: skipped, saying so', async () => {
    const { deps } = setup({ primary: paid() }, work(5), { policy: policy({ dailyUsd: 0.01 }) });
    const outcome = await runCompaction(deps, request('s'));
    expect(rowOf(outcome).reason).toMatch(/: skipped \(no offline summarizer in this process\)$/);
  });

  it('spend counts: after one paid summary the next one no longer fits', async () => {
    const { deps, store } = setup({ primary: paid(), offline: extractive }, work(9), {
      policy: policy({ dailyUsd: 0.025 }),
    });
    await runCompaction(deps, request('s'));
    store.append(T, 's', work(4).slice(1));
    const second = await runCompaction(deps, request('s'));
    expect(store.rows(T, 's').map((r) => r.summarizer)).toEqual(['anthropic', 'extractive']);
    expect(rowOf(second).reason).toMatch(
      /spent 0\.0072, this summary ≈0\.02: summarized by extractive instead$/,
    );
  });

  it('a summary that fails after its reservation: the reservation is released', async () => {
    const failed = {
      ...failing(new TransientError('timed out', { status: null, requestId: null })),
      estimate: () => ESTIMATE,
    };
    const { deps, store, budgets } = setup({ primary: failed, offline: extractive }, work(5), {
      policy: policy({ dailyUsd: 1 }),
    });
    await expect(runCompaction(deps, request('s'))).rejects.toThrow('timed out');
    expect(budgets.reservations).toEqual([]);
    expect(store.ledger).toEqual([]);
  });
});

describe('a summary under minFidelity', () => {
  const low = (onLowFidelity: string) => ({ ...SUMMARIZE, minFidelity: 0.6, onLowFidelity });

  it('skip: not committed; the row holds the score and the reason', async () => {
    const { deps, store, events } = setup({ primary: lossy, offline: extractive }, work(5));
    const before = store.view(T, 's');
    const outcome = await runCompaction(deps, request('s', low('skip')));
    const row = rowOf(outcome);
    expect(row).toMatchObject({ status: 'skipped', summarizer: 'lossy' });
    expect(row.reason).toMatch(
      /^the lossy summary's fidelity 0\.\d+ is below minFidelity 0\.6 \(paths 0\/\d+.*\): skipped$/,
    );
    expect(row.fidelity).toBeLessThan(0.6);
    expect(events).toContainEqual({ type: 'fidelity', summarizer: 'lossy', score: row.fidelity });
    expect(store.view(T, 's')).toEqual(before);
  });

  it('retry: a failed row without the key, LowFidelityError for the job, the reservation released', async () => {
    const priced = { ...lossy, estimate: () => ESTIMATE };
    const { deps, store, budgets } = setup({ primary: priced, offline: extractive }, work(5), {
      policy: { strategy: low('retry'), budget: { dailyUsd: 1 } },
    });
    await expect(runCompaction(deps, request('s'))).rejects.toBeInstanceOf(LowFidelityError);
    expect(store.ledger).toMatchObject([
      {
        status: 'failed',
        idempotencyKey: null,
        reason: 'summary below minFidelity: not committed; the job retries',
      },
    ]);
    expect(store.ledger[0]?.error).toMatch(/below minFidelity 0\.6/);
    expect(budgets.reservations).toEqual([]);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('fallback: the offline summary is committed instead, the first cost kept, and the row says so', async () => {
    const billed: Summarizer = {
      name: 'lossy',
      async summarize(input) {
        const { checkpoint } = await lossy.summarize(input);
        return { checkpoint, usage: { ...noUsage(), model: 'claude-sonnet-4-5', costUsd: 0.004 } };
      },
    };
    const { deps, store } = setup({ primary: billed, offline: extractive }, work(5));
    const outcome = await runCompaction(deps, request('s', low('fallback')));
    const row = rowOf(outcome);
    expect(row).toMatchObject({ status: 'applied', summarizer: 'extractive', costUsd: 0.004 });
    expect(row.reason).toMatch(
      /below minFidelity 0\.6 .*: summarized by extractive instead \(fidelity (?:1|0\.\d+)\)$/,
    );
    expect(row.fidelity).toBeGreaterThanOrEqual(0.6);
    expect(store.view(T, 's').checkpoint?.goal).not.toBe('something happened');
  });

  it('fallback under the bar too: skipped with both scores', async () => {
    const { deps, store } = setup({ primary: lossy, offline: { ...lossy, name: 'extractive' } }, work(5));
    const outcome = await runCompaction(deps, request('s', low('fallback')));
    expect(rowOf(outcome)).toMatchObject({ status: 'skipped', summarizer: 'extractive' });
    expect(rowOf(outcome).reason).toMatch(/; the extractive fallback scored 0\.\d+ \(.*\) too: skipped$/);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('fallback when the low summary was the offline one: skipped, saying so', async () => {
    const offline = { ...lossy, name: 'extractive' };
    const { deps } = setup({ primary: offline, offline }, work(5));
    const outcome = await runCompaction(deps, request('s', low('fallback')));
    expect(rowOf(outcome)).toMatchObject({ status: 'skipped', summarizer: 'extractive' });
    expect(rowOf(outcome).reason).toMatch(
      /: skipped \(no other summarizer to fall back to; extractive is the offline one\)$/,
    );
  });

  it('fallback with no other summarizer in this process: skipped, saying so', async () => {
    const { deps } = setup({ primary: lossy }, work(5));
    const outcome = await runCompaction(deps, request('s', low('fallback')));
    expect(rowOf(outcome).reason).toMatch(/: skipped \(no other summarizer to fall back to\)$/);
  });
});

describe('a staged strategy (auto)', () => {
  it('clears tool results, then summarizes while the session is still over its trigger', async () => {
    const policy = { strategy: { type: 'auto', summarize: { keepRecent: 4 } }, triggers: { maxMessages: 6 } };
    const { deps, store } = setup({ primary: extractive }, toolWork(6), { policy });
    const req = request('s', undefined, { trigger: 'event' });
    const outcome = await runCompaction(deps, req);
    expect(store.rows(T, 's').map((r) => [r.strategy, r.status, r.idempotencyKey])).toEqual([
      ['clearToolResults', 'applied', `${req.idempotencyKey}:clearToolResults`],
      ['summarize', 'applied', `${req.idempotencyKey}:summarize`],
    ]);
    expect(rowOf(outcome).reason).toMatch(/^auto: after clearToolResults, 13 messages, over the limit of 6/);
    expect(store.view(T, 's').version).toBe(2);
  });
});

describe("a job's last attempt", () => {
  const log = silentLogger;

  it('a summary that kept failing, with fallback extractive: summarized offline, the row says why', async () => {
    const calls: string[] = [];
    const { deps, store } = setup(
      {
        primary: failing(new TransientError('overloaded', { status: 529, requestId: null }), calls),
        offline: extractive,
      },
      work(5),
    );
    const req = request('s', { ...SUMMARIZE, fallback: 'extractive' });
    const error = await runCompaction(deps, req).catch((e: Error) => e);
    expect(store.ledger).toEqual([]);
    const outcome = await afterLastAttempt(deps, req, error as Error, log);
    expect(outcome && rowOf(outcome)).toMatchObject({
      status: 'applied',
      summarizer: 'extractive',
      reason: 'fell back to extractive: anthropic failed on the last attempt: overloaded',
    });
    expect(calls).toEqual(['anthropic']);
  });

  it('a compaction summary that kept failing, with fallback anthropic: the anthropic summarizer writes it', async () => {
    const compaction = failing(
      new TransientError('compaction unavailable', { status: 503, requestId: null }),
    );
    const named = {
      'anthropic-compaction': { ...compaction, name: 'anthropic-compaction' },
      anthropic: paid(),
    };
    const { deps } = setup({ primary: extractive, named, offline: extractive }, work(5));
    const req = request('s', { ...SUMMARIZE, summarizer: 'anthropic-compaction', fallback: 'anthropic' });
    const error = (await runCompaction(deps, req).catch((e: Error) => e)) as Error;
    const outcome = await afterLastAttempt(deps, req, error, log);
    expect(outcome && rowOf(outcome)).toMatchObject({
      status: 'applied',
      summarizer: 'anthropic',
      reason:
        'fell back to anthropic: anthropic-compaction failed on the last attempt: compaction unavailable',
    });
  });

  it('nothing to fall back to: a failed row records the error, and the caller throws it', async () => {
    const { deps, store } = setup(
      {
        primary: failing(new TransientError('overloaded', { status: 529, requestId: null })),
        offline: extractive,
      },
      work(5),
    );
    const req = request('s', SUMMARIZE);
    const error = (await runCompaction(deps, req).catch((e: Error) => e)) as Error;
    expect(await afterLastAttempt(deps, req, error, log)).toBeNull();
    expect(store.ledger).toMatchObject([
      {
        status: 'failed',
        idempotencyKey: null,
        strategy: 'summarize',
        error: 'overloaded',
        reason: 'the job failed',
      },
    ]);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('an error no retry can fix: no fallback, whatever the strategy says; a failed row', async () => {
    const calls: string[] = [];
    const { deps, store } = setup(
      { primary: failing(new SummarizerConfigError('invalid x-api-key'), calls), offline: extractive },
      work(5),
    );
    const req = request('s', { ...SUMMARIZE, fallback: 'extractive' });
    const error = (await runCompaction(deps, req).catch((e: Error) => e)) as Error;
    expect(await afterLastAttempt(deps, req, error, log)).toBeNull();
    expect(store.ledger).toMatchObject([{ status: 'failed', error: 'invalid x-api-key' }]);
    expect(store.view(T, 's').version).toBe(0);
  });

  it('after a low-fidelity retry: no second failed row (the pipeline wrote its own)', async () => {
    const { deps, store } = setup({ primary: lossy }, work(5));
    const req = request('s', { ...SUMMARIZE, minFidelity: 0.6, onLowFidelity: 'retry' });
    const error = (await runCompaction(deps, req).catch((e: Error) => e)) as Error;
    expect(await afterLastAttempt(deps, req, error, log)).toBeNull();
    expect(store.ledger.map((r) => r.status)).toEqual(['failed']);
  });
});
