/**
 * The compaction pipeline, one path for every strategy: idempotency check and admission (policy,
 * triggers, storm guard; one read, no lock, no LLM) → snapshot → plan (pure, the strategy's own
 * rule) → summarize (strategies that summarize: under the session's lease, no transaction open;
 * ./with-summary.ts) → a {@link Change} written by the fenced writes. A strategy that writes no
 * summary has nothing to pay for twice, so it takes no lease: the snapshot is read under the
 * session's row lock and the same decision is written in that transaction (./under-lock.ts). A
 * strategy made of stages (`auto`) runs each as its own compaction under the lease (see
 * `compactInStages`).
 *
 * Every side effect comes through the ports (`ports.ts`); nothing here talks to Postgres, Redis
 * or an LLM. Used by the BullMQ processor, the batch poller's sweeps and the `compact` command.
 */
import { FenceError, LeaseBusyError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { Plan } from '../../shared/planning/types.ts';
import { budgetLimits } from '../../shared/policy/budget.ts';
import {
  admit,
  type EffectivePolicy,
  nextStageFires,
  resolvePolicy,
  withInstructions,
} from '../../shared/policy/policy.ts';
import { type Strategy, strategySchema, strategyUnit } from '../../shared/strategies/index.ts';
import { planCompaction } from '../../shared/strategies/plan.ts';
import { entryOf, guardOf, skipOf } from './change.ts';
import type { CompactionOutcome, CompactionRequest, PipelineDeps } from './deps.ts';
import type { Gate, SessionReads, Snapshot } from './ports.ts';
import { contentSeqsOf, elapsed, observe, type Run, timed } from './run.ts';
import { compactUnderLock } from './under-lock.ts';
import { compactWithSummary } from './with-summary.ts';

export type { Batching, CompactionOutcome, CompactionRequest, PipelineDeps, QueuedSummary } from './deps.ts';
export type { Stage } from './ports.ts';

/** Fence conflicts tolerated in one run before giving the job back to BullMQ. */
const MAX_FENCE_RETRIES = 3;

/**
 * Runs the pipeline once for `request`.
 * @throws {LeaseBusyError} when another worker holds the session (try again later, no attempt used).
 * @throws {SessionNotFoundError} for an unknown session or a foreign tenant (permanent).
 * @throws {FenceError} when the session kept changing under us (transient).
 * @throws {LowFidelityError} after recording a `failed` row, for a summary under `minFidelity` with
 *   `onLowFidelity: 'retry'`.
 * @throws summarizer errors (see shared/summary/summarizer.ts), after nothing was written.
 */
export async function runCompaction(
  deps: PipelineDeps,
  request: CompactionRequest,
): Promise<CompactionOutcome> {
  const admitted = await admission(deps, request);
  if (admitted.kind !== 'admitted') return admitted.outcome;
  const { run, seenVersion, stages } = admitted;
  if (!strategyUnit(run.policy.strategy).summarizes) {
    return fenced(deps, run, () => compactUnderLock(deps, run, seenVersion));
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
 * What admission decided: the request was answered before (its earlier row), is not worth running
 * now (a `skipped` row with the reason), or runs, with the version the gate read and its stages.
 */
type Admission =
  | { kind: 'duplicate' | 'skipped'; outcome: CompactionOutcome }
  | { kind: 'admitted'; run: Run; seenVersion: number; stages: Strategy[] | null };

/**
 * The idempotency key, the policy in force and its triggers, from one read without a lock.
 * @throws {SessionNotFoundError} for an unknown session no earlier row answers.
 * @throws {InvalidInputError} for instructions when the strategy in force writes no summary.
 */
async function admission(deps: PipelineDeps, request: CompactionRequest): Promise<Admission> {
  const started = deps.clock.now();
  if (request.inputTokens !== undefined) {
    await deps.writes.reportContextTokens({
      tenantId: request.tenantId,
      sessionId: request.sessionId,
      eventId: request.trigger === 'event' ? request.eventId : null,
      inputTokens: request.inputTokens,
      cacheReadTokens: request.cacheReadTokens,
    });
  }
  const gate = await timed(deps, 'admission', () => gateOf(deps.reads, request));
  if (gate === null || gate.keyUsed) {
    const earlier = await deps.reads.findByKey(request.tenantId, request.idempotencyKey);
    if (earlier) return { kind: 'duplicate', outcome: { status: 'duplicate', row: earlier, plan: null } };
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
  const decision = resumed
    ? { fire: true, reason: 'resumed' }
    : admit(request, policy, gate.state, deps.clock.wall());
  if (!decision.fire) {
    const skipped = skipOf(entry, decision.reason, {
      counts: gate.state,
      durationMs: elapsed(deps, started),
    });
    return { kind: 'skipped', outcome: { ...(await deps.writes.record(skipped)), plan: null } };
  }
  const { state } = gate;
  const run: Run = {
    request,
    policy,
    entry,
    guard: guardOf(request, policy, state.contextWindow),
    limits: budgetLimits(gate.agentPolicy?.budget, gate.tenantPolicy?.budget, state.agentId ?? null),
    agentId: state.agentId ?? null,
    contextWindow: state.contextWindow,
    started,
  };
  return { kind: 'admitted', run, seenVersion: state.compactionVersion, stages };
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
      observe(deps, { type: 'fenceRejected' });
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
