/**
 * The compaction pipeline, one path for every strategy: idempotency check and admission (policy,
 * triggers, storm guard; one read, no lock, no LLM) → snapshot → plan (pure, the strategy's own
 * rule) → summarize (strategies that summarize: under the session's lease, no transaction open) →
 * a {@link Change} written by the fenced writes. A strategy that writes no summary has nothing to
 * pay for twice, so it takes no lease: the snapshot is read under the session's row lock and the
 * same decision is written in that transaction. A strategy made of stages (`auto`) runs each as its
 * own compaction under the lease (see `compactInStages`).
 *
 * Every side effect comes through the ports (`ports.ts`); nothing here talks to Postgres, Redis
 * or an LLM. Used by the BullMQ processor, the batch poller's sweeps and the `compact` command.
 */
import type { Logger } from 'pino';
import {
  FenceError,
  LeaseBusyError,
  LowFidelityError,
  NothingToSummarizeError,
  SessionNotFoundError,
} from '../../shared/contract/errors.ts';
import type { MessageMeta } from '../../shared/contract/message.ts';
import { planFactsOf } from '../../shared/fidelity/score.ts';
import type { CompactPlan, Plan } from '../../shared/planning/types.ts';
import {
  type BudgetAction,
  type BudgetLimit,
  budgetLimits,
  decideBudget,
  estimatedCostUsd,
} from '../../shared/policy/budget.ts';
import {
  admit,
  type EffectivePolicy,
  nextStageFires,
  overTrigger,
  resolvePolicy,
  withInstructions,
} from '../../shared/policy/policy.ts';
import {
  clearToolResultsStrategySchema,
  type Strategy,
  type SummarizerName,
  strategySchema,
  strategyUnit,
} from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { type KeptThinkingVerdict, keptThinkingVerdict } from '../../shared/summary/compaction-block.ts';
import {
  addUsage,
  type SummarizeInput,
  type Summarizer,
  withSummaryBudget,
} from '../../shared/summary/summarizer.ts';
import { changeOf, entryOf, failureOf, guardOf, skipOf } from './change.ts';
import { conversationOf, keptFactsOf } from './conversation.ts';
import {
  belowMinimum,
  completeFacts,
  fallbackLowReason,
  lowFidelityReason,
  observeLeaving,
  scoreSummary,
} from './fidelity.ts';
import type {
  Budgets,
  Clock,
  Decision,
  FencedWrites,
  Gate,
  Leases,
  LedgerEntry,
  SessionReads,
  Snapshot,
  StormGuardRule,
  WriteResult,
} from './ports.ts';
import { notSmaller, type SummaryToWrite, summarize, summarizeInput } from './summary.ts';

/** A summary queued for the next message batch instead of an online call (see worker/queue/batches/batches.ts). */
export interface QueuedSummary {
  tenantId: string;
  sessionId: string;
  idempotencyKey: string;
  eventId: string | null;
  expectedVersion: number;
  /** The strategy as the policy gave it (re-parsed when the batch ends). */
  strategy: Strategy;
  plan: CompactPlan;
}

/** Side effects the pipeline needs: its ports. */
export interface PipelineDeps {
  reads: SessionReads;
  writes: FencedWrites;
  leases: Leases;
  /** The summarizer for strategies that summarize (and name none, or one this process cannot run). */
  summarizer: Summarizer;
  /**
   * The summarizers a strategy may name (`summarizer`) that this process can run. Absent: the
   * strategy's choice is not looked at and `summarizer` writes every summary (as when a fallback runs).
   */
  summarizers?: Partial<Record<SummarizerName, Summarizer>>;
  /** Monotonic-enough clock in ms (injected so tests can control it). */
  now: Clock['now'];
  /** Wall clock, ms since the epoch, for the minimum interval. Default `Date.now`. */
  wallClock?: Clock['wall'];
  /** Receives how long each stage took, ms (benchmarks and metrics: "where time goes"). */
  onStage?: (stage: Stage, ms: number) => void;
  /** Called for each plan the fence rejected (the pipeline then re-plans), whatever the strategy. */
  onFenceRejected?: () => void;
  /**
   * The spend budgets of the policies (shared/policy/budget.ts), checked and reserved before each
   * paid summary. Absent: no budget is enforced (a summarizer without `estimate` is never checked).
   */
  budgets?: Budgets;
  /**
   * The free summarizer a budget's `onExceeded: 'extractive'` falls back to (the extractive one).
   * Absent: such a compaction is skipped instead, and its reason says so.
   */
  offlineSummarizer?: Summarizer;
  /** Called with the fidelity score of each summary made (shared/fidelity/score.ts), committed or not. */
  onFidelity?: (summarizer: string, score: number) => void;
  /** Called for each summary a budget refused, with what was done instead and the limit. */
  onBudgetExceeded?: (action: BudgetAction, limit: BudgetLimit) => void;
  /** Message Batches for sweep-found summaries whose policy says `batch` (absent: always online). */
  batching?: {
    fits(input: SummarizeInput): boolean;
    queue(item: QueuedSummary): Promise<boolean>;
  };
  logger: Logger;
}

/** The timed stages of one run. */
export type Stage = 'admission' | 'lease' | 'snapshot' | 'plan' | 'summarize' | 'apply';

/** One request to compact a session. */
export interface CompactionRequest {
  tenantId: string;
  sessionId: string;
  /** The event's strategy override; absent: the agent's or tenant's policy, else the built-in default. */
  strategy?: Strategy | undefined;
  /**
   * Summary instructions for this request, over those of the strategy in force (`compact
   * --instructions`), validated by the caller. Refused when that strategy writes no summary.
   */
  instructions?: string | undefined;
  trigger: 'event' | 'sweep' | 'manual';
  /** A sweep's job: the compaction version the sweep saw (a compaction since then makes it moot). */
  expectedVersion?: number | undefined;
  /** One effect per key: a second request with the same key changes nothing. */
  idempotencyKey: string;
  eventId: string | null;
  /** Aborts the LLM call (worker shutdown). */
  signal?: AbortSignal | undefined;
  /** Recorded as the ledger row's reason when the compaction applies (e.g. why a fallback ran). */
  note?: string | undefined;
  /** The context size the agent reported with the event, tokens; token triggers then use it. */
  inputTokens?: number | undefined;
}

/**
 * What happened: the ledger row the request left (`applied`, `skipped`; `duplicate` for the row
 * an earlier run left), or a summary queued for the next message batch (`batched`; its ledger row
 * is written when the batch ends).
 */
export type CompactionOutcome =
  | (WriteResult & { plan: Plan | null })
  | { status: 'batched'; row: null; plan: CompactPlan; queued: boolean };

/** Fence conflicts tolerated in one run before giving the job back to BullMQ. */
const MAX_FENCE_RETRIES = 3;

/** One admitted request: the policy in force and what its ledger rows say. */
interface Run {
  request: CompactionRequest;
  policy: EffectivePolicy;
  entry: LedgerEntry;
  /** Null: this run may not set the storm guard (see `setsStormGuard`). */
  guard: StormGuardRule | null;
  /** The spend limits in force for the session (its agent's, its tenant's); empty: none. */
  limits: BudgetLimit[];
  /** The session's agent, for agent budgets. */
  agentId: string | null;
  started: number;
}

/**
 * Runs the pipeline once for `request`.
 * @throws {LeaseBusyError} when another worker holds the session (try again later, no attempt used).
 * @throws {SessionNotFoundError} for an unknown session or a foreign tenant (permanent).
 * @throws {FenceError} when the session kept changing under us (transient).
 * @throws summarizer errors (see shared/summary/summarizer.ts), after nothing was written.
 */
export async function runCompaction(
  deps: PipelineDeps,
  request: CompactionRequest,
): Promise<CompactionOutcome> {
  const started = deps.now();
  if (request.inputTokens !== undefined) {
    await deps.writes.reportContextTokens(request.tenantId, request.sessionId, request.inputTokens);
  }
  const gate = await timed(deps, 'admission', () => gateOf(deps.reads, request));
  if (gate === null || gate.keyUsed) {
    const earlier = await deps.reads.findByKey(request.tenantId, request.idempotencyKey);
    if (earlier) return { status: 'duplicate', row: earlier, plan: null };
    if (gate === null) throw new SessionNotFoundError(request.tenantId, request.sessionId);
  }
  const policy = withInstructions(
    resolvePolicy(request.strategy, gate.agentPolicy, gate.tenantPolicy),
    request.instructions,
  );
  const entry = entryOf(request, policy.strategy, policy.mode);
  const stages = stagesOf(policy.strategy);
  // A staged job whose first stage left its row was admitted before: a retry resumes it, whatever
  // the session looks like now (the first stage compacted it, and may have set the storm guard).
  const resumed = stages !== null && (await stageDone(deps.reads, request, stages[0]));
  const admission = resumed
    ? { fire: true, reason: 'resumed' }
    : admit(request, policy, gate.state, (deps.wallClock ?? Date.now)());
  if (!admission.fire) {
    const skipped = skipOf(entry, admission.reason, {
      counts: gate.state,
      durationMs: elapsed(deps, started),
    });
    return { ...(await deps.writes.record(skipped)), plan: null };
  }
  const run: Run = {
    request,
    policy,
    entry,
    guard: guardOf(request, policy, gate.state.contextWindow),
    limits: budgetLimits(gate.agentPolicy?.budget, gate.tenantPolicy?.budget, gate.state.agentId ?? null),
    agentId: gate.state.agentId ?? null,
    started,
  };

  if (!strategyUnit(policy.strategy).summarizes) {
    return fenced(deps, run, () => compactUnderLock(deps, run, gate.state.compactionVersion));
  }
  const lease = await timed(deps, 'lease', () => deps.leases.acquire(request.tenantId, request.sessionId));
  if (!lease) throw new LeaseBusyError(`session "${request.sessionId}" is being compacted by another worker`);
  try {
    const signal = request.signal ? AbortSignal.any([request.signal, lease.signal]) : lease.signal;
    if (stages !== null) return await compactInStages(deps, run, stages, signal);
    return await fenced(deps, run, () => compactWithSummary(deps, run, signal));
  } finally {
    await lease.release();
  }
}

/**
 * The policy in force for a request (the event's override, the agent's, the tenant's, the default),
 * with the request's summary instructions.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 * @throws {InvalidInputError} for instructions when the strategy in force writes no summary.
 */
export async function effectivePolicy(
  reads: SessionReads,
  request: Pick<CompactionRequest, 'tenantId' | 'sessionId' | 'strategy' | 'instructions'>,
): Promise<EffectivePolicy> {
  const gate = await reads.loadGate(request.tenantId, request.sessionId);
  return withInstructions(
    resolvePolicy(request.strategy, gate.agentPolicy, gate.tenantPolicy),
    request.instructions,
  );
}

/** What a request would do if it ran now: the policy in force, the session as read, and its plan. */
export interface Preview {
  policy: EffectivePolicy;
  snapshot: Snapshot;
  plan: Plan;
}

/**
 * Plans `request` exactly as {@link runCompaction} would, and writes nothing: for `compact
 * --dry-run` and the dashboard. Admission (triggers, storm guard) is not applied, as for a manual
 * request.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function previewCompaction(
  reads: SessionReads,
  request: Pick<CompactionRequest, 'tenantId' | 'sessionId' | 'strategy' | 'instructions'>,
): Promise<Preview> {
  const policy = await effectivePolicy(reads, request);
  const snapshot = await reads.loadSnapshot(request.tenantId, request.sessionId);
  const seqs = contentSeqsOf(policy.strategy)?.(snapshot.messages);
  const contents =
    seqs === undefined ? undefined : await reads.loadContents(request.tenantId, request.sessionId, seqs);
  return {
    policy,
    snapshot,
    plan: planCompaction({ ...snapshot, contents }, snapshot.messages, policy.strategy),
  };
}

/** The content a strategy's plan reads (its unit's `reads`), bound to the strategy; undefined: none. */
function contentSeqsOf(strategy: Strategy): ((messages: MessageMeta[]) => number[]) | undefined {
  const unit = strategyUnit(strategy);
  return unit.reads ? (messages) => unit.reads?.(messages, strategy) ?? [] : undefined;
}

/** The stages of a strategy that runs others in turn (its unit's `stages`), validated; null: one compaction. */
function stagesOf(strategy: Strategy): Strategy[] | null {
  const stages = strategyUnit(strategy).stages?.(strategy);
  return stages === undefined ? null : stages.map((stage) => strategySchema.parse(stage));
}

/** The idempotency key of one stage of a staged request: the request's, suffixed with the stage's strategy. */
export function stageKey(idempotencyKey: string, stage: Pick<Strategy, 'type'>): string {
  return `${idempotencyKey}:${stage.type}`;
}

/** Whether a stage of `request` left its ledger row already. */
async function stageDone(
  reads: SessionReads,
  request: CompactionRequest,
  stage: Strategy | undefined,
): Promise<boolean> {
  if (stage === undefined) return false;
  return (await reads.findByKey(request.tenantId, stageKey(request.idempotencyKey, stage))) !== undefined;
}

/**
 * A staged strategy (`auto`), under the session's lease: each stage is a run of its own strategy
 * under its own idempotency key ({@link stageKey}), so each leaves its own ledger row and version
 * bump and a retried job finds the stages done as duplicates, applying each at most once. A stage
 * after the first re-reads the session and runs only when {@link nextStageFires}; otherwise, or
 * when a stage's summary was queued for a batch, the job's outcome is the last stage that ran.
 */
async function compactInStages(
  deps: PipelineDeps,
  run: Run,
  stages: Strategy[],
  signal: AbortSignal,
): Promise<CompactionOutcome> {
  const { request } = run;
  let outcome: CompactionOutcome | null = null;
  for (const strategy of stages) {
    const idempotencyKey = stageKey(request.idempotencyKey, strategy);
    const gate = await deps.reads.loadGate(request.tenantId, request.sessionId, idempotencyKey);
    if (gate.keyUsed) {
      const earlier = await deps.reads.findByKey(request.tenantId, idempotencyKey);
      if (earlier) {
        outcome = { status: 'duplicate', row: earlier, plan: null };
        continue;
      }
    }
    let note: string | undefined;
    if (outcome !== null) {
      if (outcome.status === 'batched') return outcome;
      const still = nextStageFires(run.policy.triggers, gate.state);
      if (!still.fire) return outcome;
      note = `${run.policy.strategy.type}: after ${outcome.row.strategy}, ${still.reason}`;
    }
    const summarizes = strategyUnit(strategy).summarizes;
    // The request's own note (e.g. an extractive fallback's) is about its summary.
    const notes = [summarizes ? request.note : undefined, note].filter(Boolean).join('; ');
    const stageRequest = {
      ...request,
      idempotencyKey,
      note: notes === '' ? undefined : notes.slice(0, 2_000),
    };
    const stage: Run = {
      ...run,
      request: stageRequest,
      policy: { ...run.policy, strategy },
      entry: entryOf(stageRequest, strategy, run.policy.mode),
    };
    outcome = await fenced(deps, stage, () =>
      summarizes
        ? compactWithSummary(deps, stage, signal)
        : compactUnderLock(deps, stage, gate.state.compactionVersion),
    );
  }
  if (outcome === null) throw new Error(`strategy ${run.policy.strategy.type} has no stages`);
  return outcome;
}

/**
 * What a plan becomes: no change (with the storm guard set when the session stays over its
 * trigger), or the change that carries it out. The one decision both paths make.
 */
function decide(deps: PipelineDeps, run: Run, snapshot: Snapshot, plan: Plan): Decision {
  // A strategy that rewrites in place has no child session to continue in.
  const inPlaceOnly =
    plan.action === 'compact' && plan.clearing !== undefined && run.policy.mode === 'newSession';
  if (plan.action === 'compact' && !inPlaceOnly) {
    return { change: changeFor(deps, run, plan, snapshot.compactionVersion, null) };
  }
  const reason =
    plan.action === 'skip'
      ? plan.reason
      : `${plan.strategy} rewrites messages in place; the policy's mode newSession does not apply to it`;
  return {
    noChange: skipOf(run.entry, reason, {
      stormGuard: stillOver(run, snapshot),
      counts: snapshot,
      durationMs: elapsed(deps, run.started),
    }),
  };
}

/**
 * The change of a compact plan, with the run's note as its reason and its time so far.
 * @param thinking whether a compaction block's kept turns keep their thinking (its verdict).
 */
function changeFor(
  deps: PipelineDeps,
  run: Run,
  plan: CompactPlan,
  expectedVersion: number,
  summary: SummaryToWrite | null,
  thinking?: KeptThinkingVerdict,
) {
  const entry = {
    ...run.entry,
    reason: run.request.note ?? null,
    durationMs: elapsed(deps, run.started),
    ...(thinking ? { thinking } : {}),
  };
  return changeOf(entry, plan, expectedVersion, summary, run.guard);
}

/**
 * The summarizer a strategy names, when this process runs it; else the process's, with a note for
 * the ledger saying why.
 */
export function pickSummarizer(
  deps: Pick<PipelineDeps, 'summarizer' | 'summarizers'>,
  name: SummarizerName | undefined,
): { summarizer: Summarizer; note: string | undefined } {
  if (name === undefined || deps.summarizers === undefined)
    return { summarizer: deps.summarizer, note: undefined };
  const named = deps.summarizers[name];
  if (named) return { summarizer: named, note: undefined };
  return {
    summarizer: deps.summarizer,
    note: `the strategy names the ${name} summarizer, which this worker cannot run (no ANTHROPIC_API_KEY): summarized by ${deps.summarizer.name}`,
  };
}

/** A strategy with no summary: read, plan and write in one transaction under the row lock. */
async function compactUnderLock(
  deps: PipelineDeps,
  run: Run,
  seenVersion: number,
): Promise<CompactionOutcome> {
  const { request } = run;
  let plan = null as Plan | null;
  const start = deps.now();
  let decided = start;
  const result = await deps.writes.applyUnderLock(
    {
      tenantId: request.tenantId,
      sessionId: request.sessionId,
      idempotencyKey: request.idempotencyKey,
      seenVersion,
      contentSeqs: contentSeqsOf(run.policy.strategy),
    },
    (snapshot) => {
      const planning = deps.now();
      deps.onStage?.('snapshot', planning - start);
      plan = planCompaction(snapshot, snapshot.messages, run.policy.strategy);
      const decision = decide(deps, run, snapshot, plan);
      decided = deps.now();
      deps.onStage?.('plan', decided - planning);
      return decision;
    },
  );
  if (plan !== null) deps.onStage?.('apply', deps.now() - decided);
  return { ...result, plan };
}

/** A strategy that summarizes: snapshot, plan, summary with no transaction open, fenced apply. */
async function compactWithSummary(
  deps: PipelineDeps,
  run: Run,
  signal: AbortSignal,
): Promise<CompactionOutcome> {
  const { request, policy } = run;
  const { strategy } = policy;
  const options = strategyUnit(strategy).summaryOptions(strategy);
  if (options === null) throw new Error(`strategy ${strategy.type} does not summarize`);
  const named = pickSummarizer(deps, options.summarizer);
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
    return { ...(await write(deps, decision)), plan };
  }
  // A batch request is one request and needs its messages whole; an online summary reads them in
  // pages and folds its chunks as they arrive.
  const batchable =
    request.trigger === 'sweep' &&
    policy.batch &&
    deps.batching !== undefined &&
    named.summarizer === deps.summarizer &&
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
    deps.onFidelity?.(summary.summarizer, check.score);
    let fidelityNote: string | undefined;
    if (belowMinimum(check, options.minFidelity)) {
      const minimum = options.minFidelity as number;
      const low = lowFidelityReason(summary.summarizer, check, minimum);
      const action = options.onLowFidelity ?? 'skip';
      const offline = deps.offlineSummarizer;
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
      deps.onFidelity?.(again.summarizer, check.score);
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
      now: (deps.wallClock ?? Date.now)(),
    },
    (spend) => decideBudget(limits, spend, estimateUsd),
  );
  const { decision } = check;
  if (decision.allowed) return { kind: 'paid', reservationId: check.reservationId };
  if (decision.action === 'clearToolResults') {
    deps.onBudgetExceeded?.('clearToolResults', decision.limit);
    deps.logger.info(
      { tenantId: run.request.tenantId, sessionId: run.request.sessionId, reason: decision.reason },
      'budget exceeded: clearing old tool results instead',
    );
    const strategy = clearToolResultsStrategySchema.parse({ type: 'clearToolResults' });
    return { kind: 'strategy', strategy, reason: `${decision.reason}: cleared old tool results instead` };
  }
  const offline = decision.action === 'extractive' ? deps.offlineSummarizer : undefined;
  deps.onBudgetExceeded?.(offline ? 'extractive' : 'skip', decision.limit);
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

/** Writes a decision: its change under the fence, or its ledger row that changes nothing. */
function write(deps: PipelineDeps, decision: Decision): Promise<WriteResult> {
  return 'change' in decision ? deps.writes.apply(decision.change) : deps.writes.record(decision.noChange);
}

/**
 * Whether the session, as read, still fires its message or token trigger, for a run that may set
 * the storm guard (false for one that may not).
 */
function stillOver(run: Run, snapshot: Pick<Snapshot, 'messageCount' | 'tokenCount'>): boolean {
  const { guard } = run;
  if (guard === null) return false;
  return overTrigger(guard.triggers, guard.contextWindow, snapshot.messageCount, snapshot.tokenCount);
}

/** Runs `once`, planning again after each fence rejection, up to {@link MAX_FENCE_RETRIES} times. */
async function fenced(
  deps: PipelineDeps,
  run: Run,
  once: () => Promise<CompactionOutcome>,
): Promise<CompactionOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once();
    } catch (error) {
      if (!(error instanceof FenceError)) throw error;
      deps.onFenceRejected?.();
      if (attempt >= MAX_FENCE_RETRIES) throw error;
      deps.logger.info(
        { tenantId: run.request.tenantId, sessionId: run.request.sessionId, attempt, reason: error.message },
        'fence rejected a stale plan; re-planning',
      );
    }
  }
}

/**
 * The admission gate with the request's idempotency key checked in the same round trip; null for
 * an unknown session (an earlier run's ledger row may still answer the request).
 */
async function gateOf(reads: SessionReads, request: CompactionRequest): Promise<Gate | null> {
  try {
    return await reads.loadGate(request.tenantId, request.sessionId, request.idempotencyKey);
  } catch (error) {
    if (error instanceof SessionNotFoundError) return null;
    throw error;
  }
}

/** Runs `work`, reporting its duration as `stage`. */
async function timed<T>(deps: PipelineDeps, stage: Stage, work: () => Promise<T> | T): Promise<T> {
  if (!deps.onStage) return work();
  const start = deps.now();
  try {
    return await work();
  } finally {
    deps.onStage(stage, deps.now() - start);
  }
}

function elapsed(deps: PipelineDeps, since: number): number {
  return Math.round(deps.now() - since);
}
