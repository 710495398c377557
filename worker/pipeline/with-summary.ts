/**
 * A strategy that summarizes, under the session's lease: snapshot, plan, summary with no
 * transaction open, fenced apply; the budgets checked and reserved before a paid summary, and its
 * fidelity checked before it is committed.
 */
import { LowFidelityError, NothingToSummarizeError } from '../../shared/contract/errors.ts';
import { planFactsOf } from '../../shared/fidelity/score.ts';
import { planCompaction } from '../../shared/planning/plan.ts';
import { decideBudget, estimatedCostUsd } from '../../shared/policy/budget.ts';
import {
  clearToolResultsStrategySchema,
  type Strategy,
  strategyUnit,
} from '../../shared/strategies/index.ts';
import { keptThinkingVerdict } from '../../shared/summary/compaction-block.ts';
import {
  addUsage,
  type SummarizeInput,
  type Summarizer,
  withSummaryBudget,
} from '../../shared/summary/summarizer.ts';
import { entryOf, failureOf, skipOf } from './change.ts';
import { conversationOf, keptFactsOf } from './conversation.ts';
import type { CompactionOutcome, PipelineDeps } from './deps.ts';
import { chooseSummarizer } from './fallback.ts';
import {
  belowMinimum,
  completeFacts,
  fallbackLowReason,
  lowFidelityReason,
  observeLeaving,
  scoreSummary,
} from './fidelity.ts';
import { changeFor, decide, elapsed, observe, type Run, stillOver, timed, writeDecision } from './run.ts';
import { notSmaller, type SummaryToWrite, summarize, summarizeInput } from './summary.ts';
import { compactUnderLock } from './under-lock.ts';

/** A strategy that summarizes: snapshot, plan, summary with no transaction open, fenced apply. */
export async function compactWithSummary(
  deps: PipelineDeps,
  run: Run,
  signal: AbortSignal,
): Promise<CompactionOutcome> {
  const { request, policy } = run;
  const { strategy } = policy;
  const options = strategyUnit(strategy).summaryOptions(strategy);
  if (options === null) throw new Error(`strategy ${strategy.type} does not summarize`);
  const named = chooseSummarizer(deps.summarizers, options.summarizer);
  const { messages, ...snapshot } = await timed(deps, 'snapshot', () =>
    deps.reads.loadSnapshot(request.tenantId, request.sessionId),
  );
  const plan = await timed(deps, 'plan', () => planCompaction(snapshot, messages, strategy));
  // A summarizer that sends the conversation itself reads it as the agent's context renders it.
  const conversation =
    plan.action === 'compact' && named.summarizer.reads === 'request'
      ? conversationOf(
          await deps.reads.loadConversation(request.tenantId, request.sessionId, plan.leavingSeqs),
        )
      : undefined;
  const keptFacts =
    conversation && plan.action === 'compact' ? keptFactsOf(conversation, plan, messages) : null;
  // The message metadata is dropped here: for a long session it is most of what a run holds while
  // it summarizes.
  const seen = { ...snapshot, messages: [] };
  if (plan.action === 'skip') {
    const decision = decide(deps, run, seen, plan);
    return { ...(await writeDecision(deps, decision)), plan };
  }
  // A batch request is one request and needs its messages whole; an online summary reads them in
  // pages and folds its chunks as they arrive.
  const batchable =
    request.trigger === 'sweep' &&
    policy.batch &&
    deps.batching !== undefined &&
    named.summarizer === deps.summarizers.primary &&
    named.summarizer.reads === undefined;
  const leaving = batchable
    ? await deps.reads.loadMessages(request.tenantId, request.sessionId, plan.coverSeqs)
    : deps.reads.pagedMessages(request.tenantId, request.sessionId, plan.coverSeqs);
  const input = {
    ...summarizeInput(request, options, snapshot.checkpoint, leaving, signal, conversation),
    leavingTokens: plan.leavingTokens,
  };
  if (batchable && deps.batching?.fits(input)) {
    const queued = await deps.batching.queue({
      tenantId: request.tenantId,
      sessionId: request.sessionId,
      idempotencyKey: request.idempotencyKey,
      eventId: request.eventId,
      expectedVersion: snapshot.compactionVersion,
      strategy,
      plan,
    });
    return { status: 'batched', row: null, plan, queued };
  }
  const budget = await checkBudget(deps, named.summarizer, run, input, plan.leavingTokens);
  if (budget.kind === 'strategy') {
    // No summary: the free strategy runs as any strategy without one, under the row lock and the
    // version fence, its ledger row naming it with the budget's reason.
    const { strategy: free } = budget;
    const fallback: Run = {
      ...run,
      policy: { ...policy, strategy: free },
      entry: entryOf(request, free, policy.mode),
      request: { ...request, note: budget.reason },
    };
    return compactUnderLock(deps, fallback, snapshot.compactionVersion);
  }
  if (budget.kind === 'skip') {
    const skipped = skipOf(run.entry, budget.reason, {
      counts: seen,
      durationMs: elapsed(deps, run.started),
    });
    return { ...(await deps.writes.record(skipped)), plan };
  }
  const { reservationId } = budget;
  // A stand-in for a paid summary gets the summary budget the paid one would have had.
  const summarizer = budget.kind === 'offline' ? withSummaryBudget(budget.summarizer) : named.summarizer;
  const note = budget.kind === 'offline' ? budget.reason : named.note;
  const noted = note
    ? { ...run, request: { ...request, note: [request.note, note].filter(Boolean).join('; ') } }
    : run;
  // The check's facts are gathered as the summarizer reads the pages (see ./fidelity.ts).
  const planFacts = planFactsOf(messages, plan);
  const observed = observeLeaving(input.leaving);
  const reread = () => deps.reads.pagedMessages(request.tenantId, request.sessionId, plan.coverSeqs);
  // The write that records the summary deletes its reservation in its transaction; any other end
  // (an error, a duplicate, a fence rejection) releases it here.
  let replaced = false;
  /** Records a decision that commits nothing, the reservation with it. */
  const recordNoChange = async (noChange: ReturnType<typeof skipOf>) => {
    const result = await deps.writes.record({ ...noChange, reservationId });
    replaced = result.status === noChange.status;
    return { ...result, plan };
  };
  try {
    let summary: SummaryToWrite;
    try {
      summary = await timed(deps, 'summarize', () =>
        summarize(summarizer, { ...input, leaving: observed.leaving }, plan),
      );
    } catch (error) {
      if (!(error instanceof NothingToSummarizeError)) throw error;
      return await recordNoChange(
        skipOf(run.entry, error.message, { counts: seen, durationMs: elapsed(deps, run.started) }),
      );
    }
    const facts = await completeFacts(observed, reread);
    let check = scoreSummary(facts, summary, planFacts);
    observe(deps, { type: 'fidelity', summarizer: summary.summarizer, score: check.score });
    let fidelityNote: string | undefined;
    if (belowMinimum(check, options.minFidelity)) {
      const minimum = options.minFidelity as number;
      const low = lowFidelityReason(summary.summarizer, check, minimum);
      const action = options.onLowFidelity ?? 'skip';
      const { offline } = deps.summarizers;
      const scored = { usage: summary.usage, summarizer: summary.summarizer, fidelity: check };
      if (action === 'retry') {
        deps.logger.info(
          { tenantId: request.tenantId, sessionId: request.sessionId, reason: low },
          'low fidelity: retrying',
        );
        await recordNoChange(
          failureOf(
            { ...run.entry, ...scored, durationMs: elapsed(deps, run.started) },
            low,
            'summary below minFidelity: not committed; the job retries',
          ),
        );
        throw new LowFidelityError(low);
      }
      if (action === 'skip' || !offline || offline.name === summary.summarizer) {
        const why =
          action === 'skip'
            ? `${low}: skipped`
            : `${low}: skipped (no other summarizer to fall back to${offline ? `; ${summary.summarizer} is the offline one` : ''})`;
        return await recordNoChange(
          skipOf(run.entry, why, { ...scored, counts: seen, durationMs: elapsed(deps, run.started) }),
        );
      }
      // fallback: the offline summarizer over the same messages, held to the same bar; the first
      // summary's cost stays on the row.
      const first = summary;
      const again = await timed(deps, 'summarize', () =>
        summarize(withSummaryBudget(offline), { ...input, leaving: reread() }, plan),
      );
      summary = { ...again, usage: addUsage(first.usage, again.usage) };
      check = scoreSummary(facts, again, planFacts);
      observe(deps, { type: 'fidelity', summarizer: again.summarizer, score: check.score });
      if (belowMinimum(check, minimum)) {
        const why = fallbackLowReason(low, again.summarizer, check);
        return await recordNoChange(
          skipOf(run.entry, why, {
            usage: summary.usage,
            summarizer: again.summarizer,
            fidelity: check,
            counts: seen,
            durationMs: elapsed(deps, run.started),
          }),
        );
      }
      fidelityNote = `${low}: summarized by ${again.summarizer} instead (fidelity ${check.score})`;
    }
    const useless = notSmaller(summary, plan);
    if (useless !== null) {
      return await recordNoChange(
        skipOf(run.entry, useless, {
          stormGuard: stillOver(run, seen),
          usage: summary.usage,
          summarizer: summary.summarizer,
          fidelity: check,
          durationMs: elapsed(deps, run.started),
        }),
      );
    }
    signal.throwIfAborted();
    const thinking =
      summary.blocks && keptFacts
        ? keptThinkingVerdict({ ...keptFacts, model: summary.usage.model ?? options.model ?? '' })
        : undefined;
    const notes = [noted.request.note, fidelityNote].filter(Boolean).join('; ');
    const scoredRun: Run = {
      ...noted,
      request: { ...noted.request, note: notes === '' ? undefined : notes.slice(0, 2_000) },
      entry: { ...noted.entry, fidelity: check },
    };
    const change = {
      ...changeFor(deps, scoredRun, plan, snapshot.compactionVersion, summary, thinking),
      reservationId,
    };
    const result = await timed(deps, 'apply', () => deps.writes.apply(change));
    replaced = result.status === 'applied';
    return { ...result, plan };
  } finally {
    if (reservationId !== null && !replaced) {
      await deps.budgets
        ?.release(request.tenantId, reservationId)
        .catch((error: unknown) =>
          deps.logger.warn(
            { tenantId: request.tenantId, err: error instanceof Error ? error.message : String(error) },
            'could not release a budget reservation (it expires on its own)',
          ),
        );
    }
  }
}

/** What the budgets let a summary do: the paid summarizer (with its reservation), the free one, or nothing. */
type BudgetOutcome =
  | { kind: 'paid'; reservationId: string | null }
  | { kind: 'strategy'; strategy: Strategy; reason: string }
  | { kind: 'offline'; summarizer: Summarizer; reason: string; reservationId: null }
  | { kind: 'skip'; reason: string };

/**
 * Checks the summary about to be made against the session's budgets and reserves its estimated
 * cost when it fits (see worker/postgres/budgets.ts for why concurrent workers cannot both fit).
 * A summarizer that estimates nothing (the extractive one) or a model without a price costs
 * nothing and is never checked.
 */
async function checkBudget(
  deps: PipelineDeps,
  summarizer: Summarizer,
  run: Run,
  input: SummarizeInput,
  leavingTokens: number,
): Promise<BudgetOutcome> {
  const { budgets } = deps;
  if (!budgets || run.limits.length === 0 || !summarizer.estimate)
    return { kind: 'paid', reservationId: null };
  const { leaving: _leaving, signal: _signal, ...sized } = input;
  const estimateUsd = estimatedCostUsd(summarizer.estimate({ ...sized, leavingTokens }));
  if (estimateUsd <= 0) return { kind: 'paid', reservationId: null };
  const { limits } = run;
  const check = await budgets.reserve(
    {
      tenantId: run.request.tenantId,
      sessionId: run.request.sessionId,
      agentId: run.agentId,
      limits,
      estimateUsd,
      now: deps.clock.wall(),
    },
    (spend) => decideBudget(limits, spend, estimateUsd),
  );
  const { decision } = check;
  if (decision.allowed) return { kind: 'paid', reservationId: check.reservationId };
  if (decision.action === 'clearToolResults') {
    observe(deps, { type: 'budgetExceeded', action: 'clearToolResults', limit: decision.limit });
    deps.logger.info(
      { tenantId: run.request.tenantId, sessionId: run.request.sessionId, reason: decision.reason },
      'budget exceeded: clearing old tool results instead',
    );
    const strategy = clearToolResultsStrategySchema.parse({ type: 'clearToolResults' });
    return { kind: 'strategy', strategy, reason: `${decision.reason}: cleared old tool results instead` };
  }
  const offline = decision.action === 'extractive' ? deps.summarizers.offline : undefined;
  observe(deps, { type: 'budgetExceeded', action: offline ? 'extractive' : 'skip', limit: decision.limit });
  deps.logger.info(
    { tenantId: run.request.tenantId, sessionId: run.request.sessionId, reason: decision.reason },
    offline ? 'budget exceeded: summarizing offline' : 'budget exceeded: skipping the compaction',
  );
  if (offline) {
    const reason = `${decision.reason}: summarized by ${offline.name} instead`;
    return { kind: 'offline', summarizer: offline, reason, reservationId: null };
  }
  const why = decision.action === 'skip' ? 'skipped' : 'skipped (no offline summarizer in this process)';
  return { kind: 'skip', reason: `${decision.reason}: ${why}` };
}
