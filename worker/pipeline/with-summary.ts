/**
 * A strategy that summarizes, under the session's lease, as a chain of small steps, each answering
 * with a tagged outcome that either hands the next step what it needs or ends the run:
 *
 *     choose summarizer ─► snapshot and plan ─► batch or online ─► payback ─► budget ─► summarize
 *       ─► fidelity ─► size ─► write
 *
 * The snapshot is read without a lock and the summary made with no transaction open; the write is
 * fenced by the version the snapshot carried. Every route that ends elsewhere than the summary
 * asked for (a summarizer this process cannot run, a budget's refusal, a summary under
 * `minFidelity`) is the fallback policy's answer (./fallback.ts). A budget reservation made for the
 * summary is replaced by the ledger row that records it, or released whatever else ends the run.
 */
import { planFactsOf } from '../../shared/fidelity/score.ts';
import type { SkipPlan } from '../../shared/planning/types.ts';
import { decideBudget, estimatedCostUsd } from '../../shared/policy/budget.ts';
import { type Strategy, type SummaryOptions, strategyUnit } from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import type { SummarizeInput, Summarizer } from '../../shared/summary/summarizer.ts';
import { entryOf, skipOf } from './change.ts';
import { conversationOf, keptFactsOf } from './conversation.ts';
import type { CompactionOutcome, PipelineDeps } from './deps.ts';
import { type BudgetRefusal, chooseSummarizer, type Fallback, fallbackFor } from './fallback.ts';
import { assistantsIn, paybackSkipOf, predictionOf } from './payback.ts';
import type { NoChange, Snapshot } from './ports.ts';
import { decide, elapsed, observe, type Run, timed, writeDecision } from './run.ts';
import { summarizeInput } from './summary.ts';
import { type SummaryWork, summarizeAndCommit } from './summary-steps.ts';
import { compactUnderLock } from './under-lock.ts';

/**
 * Runs a summarizing strategy once: plan, summary, fenced write.
 * @throws {FenceError} when the write found the session moved on (the caller plans again).
 * @throws {LowFidelityError} after recording a `failed` row, when the strategy says `onLowFidelity: 'retry'`.
 * @throws summarizer errors, after nothing was written.
 */
export async function compactWithSummary(
  deps: PipelineDeps,
  run: Run,
  signal: AbortSignal,
): Promise<CompactionOutcome> {
  const options = summaryOptionsOf(run.policy.strategy);
  const chosen = chooseSummarizer(deps.summarizers, options.summarizer);
  const planned = await snapshotAndPlan(deps, run, chosen.summarizer);
  if (planned.kind === 'nothingToDo') {
    const decision = decide(deps, run, planned.seen, planned.plan);
    return { ...(await writeDecision(deps, decision)), plan: planned.plan };
  }
  const routed = await batchOrOnline(deps, run, planned, chosen.summarizer, options, signal);
  if (routed.kind === 'batched') return routed.outcome;
  const priced = paybackOf(deps, run, planned, chosen.summarizer, options, routed.input);
  if (priced.kind === 'skip') return { ...(await deps.writes.record(priced.skipped)), plan: planned.plan };
  return budgetedSummary(deps, priced.run, chosen, planned, { options, input: routed.input, signal });
}

/**
 * The summary of a run whose compaction goes ahead, as the budgets allow: made and committed, or
 * the free strategy or skip a budget's refusal leads to.
 */
async function budgetedSummary(
  deps: PipelineDeps,
  run: Run,
  chosen: { summarizer: Summarizer; note: string | undefined },
  planned: Extract<Planned, { kind: 'compact' }>,
  { options, input, signal }: Pick<SummaryWork, 'options' | 'input' | 'signal'>,
): Promise<CompactionOutcome> {
  const { plan, seen } = planned;
  const budget = await checkBudget(deps, run, chosen, input);
  if (budget.kind === 'strategy') {
    // No summary: the free strategy runs as any strategy without one, under the row lock and the
    // version fence, its ledger row naming it with the budget's reason.
    const free: Run = {
      ...run,
      policy: { ...run.policy, strategy: budget.strategy },
      entry: entryOf(run.request, budget.strategy, run.policy.mode),
      request: { ...run.request, note: budget.note },
    };
    return compactUnderLock(deps, free, seen.compactionVersion);
  }
  if (budget.kind === 'skip') {
    const skipped = { counts: seen, durationMs: elapsed(deps, run.started) };
    return { ...(await deps.writes.record(skipOf(run.entry, budget.reason, skipped))), plan };
  }
  const { planFacts, keptFacts } = planned;
  const work: SummaryWork = {
    plan,
    seen,
    planFacts,
    keptFacts,
    options,
    input,
    summarizer: budget.summarizer,
    signal,
  };
  return summarizeAndCommit(deps, noted(run, budget.note), work, budget.reservationId);
}

/** The session as the plan saw it, its messages' metadata dropped (most of what a long session holds). */
type Seen = Snapshot & { messages: [] };

/** What the plan says: nothing to do (the plan's reason), or a compaction and what its summary needs. */
type Planned =
  | { kind: 'nothingToDo'; plan: SkipPlan; seen: Seen }
  | ({ kind: 'compact' } & Pick<SummaryWork, 'plan' | 'seen' | 'planFacts' | 'keptFacts'> & {
        conversation: SummarizeInput['request'];
        /** The live history's assistant messages (the payback's history), counted before its metadata is dropped. */
        assistants: number;
      });

/** Reads the snapshot (no lock) and plans; for a compaction, what the summary and its checks need. */
async function snapshotAndPlan(deps: PipelineDeps, run: Run, summarizer: Summarizer): Promise<Planned> {
  const { tenantId, sessionId } = run.request;
  const { messages, ...snapshot } = await timed(deps, 'snapshot', () =>
    deps.reads.loadSnapshot(tenantId, sessionId),
  );
  const plan = await timed(deps, 'plan', () => planCompaction(snapshot, messages, run.policy.strategy));
  const seen: Seen = { ...snapshot, messages: [] };
  if (plan.action === 'skip') return { kind: 'nothingToDo', plan, seen };
  // A summarizer that sends the conversation itself reads it as the agent's context renders it.
  const conversation =
    summarizer.reads === 'request'
      ? conversationOf(
          await deps.reads.loadConversation(tenantId, sessionId, plan.leavingSeqs),
          summarizer.name,
        )
      : undefined;
  return {
    kind: 'compact',
    plan,
    seen,
    // The check's facts of what stays, from the metadata, which is dropped after this step.
    planFacts: planFactsOf(messages, plan),
    // Anthropic's kept-thinking rules; a Responses conversation keeps no signed thinking.
    keptFacts: conversation && !conversation.input ? keptFactsOf(conversation, plan, messages) : null,
    conversation,
    assistants: assistantsIn(messages),
  };
}

/** A sweep's summary queued for the next message batch, or the input of an online summary. */
type Routed =
  | { kind: 'batched'; outcome: CompactionOutcome }
  | { kind: 'online'; input: SummaryWork['input'] };

/**
 * Where the summary is made: in the next message batch (a sweep's, when the policy says `batch`,
 * the primary summarizer writes it, and it fits one request), else online now.
 */
async function batchOrOnline(
  deps: PipelineDeps,
  run: Run,
  planned: Extract<Planned, { kind: 'compact' }>,
  summarizer: Summarizer,
  options: SummaryOptions,
  signal: AbortSignal,
): Promise<Routed> {
  const { request } = run;
  const { plan, seen } = planned;
  const batching =
    request.trigger === 'sweep' &&
    run.policy.batch &&
    summarizer === deps.summarizers.primary &&
    summarizer.reads === undefined
      ? deps.batching
      : undefined;
  // A batch request is one request and needs its messages whole; an online summary reads them in
  // pages and folds its chunks as they arrive.
  const leaving = batching
    ? await deps.reads.loadMessages(request.tenantId, request.sessionId, plan.coverSeqs)
    : deps.reads.pagedMessages(request.tenantId, request.sessionId, plan.coverSeqs);
  const input = {
    ...summarizeInput(request, options, seen.checkpoint, leaving, signal, planned.conversation),
    leavingTokens: plan.leavingTokens,
  };
  if (!batching?.fits(input)) return { kind: 'online', input };
  const queued = await batching.queue({
    tenantId: request.tenantId,
    sessionId: request.sessionId,
    idempotencyKey: request.idempotencyKey,
    eventId: request.eventId,
    expectedVersion: seen.compactionVersion,
    strategy: run.policy.strategy,
    plan,
  });
  return { kind: 'batched', outcome: { status: 'batched', row: null, plan, queued } };
}

/**
 * The plan's payback prediction, from the summary's size as its summarizer estimates it (a free
 * summarizer's costs nothing): the run carrying it to its ledger row, or the skip of a compaction
 * the policy's `payback` says would not pay for itself.
 */
function paybackOf(
  deps: PipelineDeps,
  run: Run,
  planned: Extract<Planned, { kind: 'compact' }>,
  summarizer: Summarizer,
  options: SummaryOptions,
  input: SummaryWork['input'],
): { kind: 'go'; run: Run } | { kind: 'skip'; skipped: NoChange } {
  const { leaving: _leaving, signal: _signal, ...sized } = input;
  const estimate = summarizer.estimate ? summarizer.estimate(sized) : null;
  const { plan, seen, assistants } = planned;
  const prediction = predictionOf(run, seen.tokenCount, assistants, plan, {
    estimate,
    maxSummaryTokens: options.maxSummaryTokens,
  });
  const skipped = paybackSkipOf(deps, run, prediction, seen);
  if (skipped) return { kind: 'skip', skipped };
  return { kind: 'go', run: { ...run, entry: { ...run.entry, payback: prediction } } };
}

/**
 * What the budgets let the summary do: be made (by the chosen summarizer with its reservation, or
 * by the offline one the fallback policy named, noted), give way to a free strategy, or be skipped.
 */
type Budgeted =
  | { kind: 'summarize'; summarizer: Summarizer; note: string | undefined; reservationId: string | null }
  | Extract<Fallback, { kind: 'strategy' | 'skip' }>;

/**
 * Checks the summary about to be made against the session's budgets and reserves its estimated
 * cost when it fits (see worker/postgres/budgets.ts for why concurrent workers cannot both fit).
 * A summarizer that estimates nothing (the extractive one) or a model without a price costs
 * nothing and is never checked.
 */
async function checkBudget(
  deps: PipelineDeps,
  run: Run,
  chosen: { summarizer: Summarizer; note: string | undefined },
  input: SummaryWork['input'],
): Promise<Budgeted> {
  const paid = { kind: 'summarize', ...chosen } as const;
  const { budgets } = deps;
  const { limits } = run;
  if (!budgets || limits.length === 0 || !chosen.summarizer.estimate) return { ...paid, reservationId: null };
  const { leaving: _leaving, signal: _signal, ...sized } = input;
  const estimateUsd = estimatedCostUsd(chosen.summarizer.estimate(sized));
  if (estimateUsd <= 0) return { ...paid, reservationId: null };
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
  if (decision.allowed) return { ...paid, reservationId: check.reservationId };
  const fallback = fallbackFor({ route: 'budget', refusal: decision }, deps.summarizers);
  tellRefusal(deps, run, decision, fallback);
  if (fallback.kind === 'summarizer')
    return { kind: 'summarize', summarizer: fallback.summarizer, note: fallback.note, reservationId: null };
  if (fallback.kind === 'strategy' || fallback.kind === 'skip') return fallback;
  throw new Error(`a budget's refusal has no ${fallback.kind} fallback`);
}

/** What a budget's refusal led to, for the observer (`budgetExceeded`) and the log. */
function tellRefusal(deps: PipelineDeps, run: Run, refusal: BudgetRefusal, fallback: Fallback): void {
  const [action, message] =
    fallback.kind === 'strategy'
      ? (['clearToolResults', 'budget exceeded: clearing old tool results instead'] as const)
      : fallback.kind === 'summarizer'
        ? (['extractive', 'budget exceeded: summarizing offline'] as const)
        : (['skip', 'budget exceeded: skipping the compaction'] as const);
  observe(deps, { type: 'budgetExceeded', action, limit: refusal.limit });
  const { tenantId, sessionId } = run.request;
  deps.logger.info({ tenantId, sessionId, reason: refusal.reason }, message);
}

/** The run with `note` joined to its request's (the ledger row's reason when it applies). */
function noted(run: Run, note: string | undefined): Run {
  if (!note) return run;
  return { ...run, request: { ...run.request, note: [run.request.note, note].filter(Boolean).join('; ') } };
}

/** A strategy's summary options. @throws {Error} for a strategy that writes no summary (a caller bug). */
function summaryOptionsOf(strategy: Strategy): SummaryOptions {
  const options = strategyUnit(strategy).summaryOptions(strategy);
  if (options === null) throw new Error(`strategy ${strategy.type} does not summarize`);
  return options;
}
