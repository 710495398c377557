/**
 * The compaction pipeline, with its side effects injected (database, lease, summarizer, logger,
 * clock) so the callers stay thin and the tests can swap any of them:
 * idempotency check and admission (policy, triggers, storm guard; one read, no lock, no LLM) →
 * lease → snapshot → plan (pure) → summarize (no transaction open) → apply (one short fenced
 * transaction) → release. A strategy with no LLM call (`none`, `slidingWindow`) has nothing to pay
 * for twice, so it takes no lease: snapshot, plan and apply run in one short transaction under the
 * session's row lock. Used by the BullMQ processor and the `compact` CLI.
 */
import type { Logger } from 'pino';
import { FenceError, LeaseBusyError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import { estimateMessageTokens } from '../../shared/contract/tokens.ts';
import { type CompactPlan, type Plan, planCompaction } from '../../shared/planning/plan.ts';
import { admit, type EffectivePolicy, overTrigger, resolvePolicy } from '../../shared/policy/policy.ts';
import type { Strategy, SummarizeStrategy } from '../../shared/strategies/index.ts';
import { renderCheckpoint } from '../../shared/summary/checkpoint.ts';
import type { SummarizeInput, Summarizer } from '../../shared/summary/summarizer.ts';
import type { QueuedSummary } from '../queue/batches.ts';
import type { ApplyResult, FencedWrites, Gate, Leases, SessionReads, SummaryToWrite } from './ports.ts';

/** Side effects the pipeline needs. */
export interface PipelineDeps {
  /** Session reads and fenced writes (the Postgres adapter). */
  store: SessionReads & FencedWrites;
  leases: Leases;
  /** The summarizer for `summarize` plans. */
  summarizer: Summarizer;
  /** Monotonic-enough clock in ms (injected so tests can control it). */
  now: () => number;
  /** Wall clock, ms since the epoch, for the minimum interval. Default `Date.now`. */
  wallClock?: () => number;
  /** Receives how long each stage took, ms (benchmarks and metrics: "where time goes"). */
  onStage?: (stage: Stage, ms: number) => void;
  /** Message Batches for sweep-found summaries whose policy says `batch` (absent: always online). */
  batching?: {
    fits(input: SummarizeInput): boolean;
    queue(item: QueuedSummary): Promise<boolean>;
  };
  logger: Logger;
}

/** The timed stages of one run. */
export type Stage = 'admission' | 'lease' | 'snapshot' | 'plan' | 'summarize' | 'apply';

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

/** One request to compact a session. */
export interface CompactionRequest {
  tenantId: string;
  sessionId: string;
  /** The event's strategy override; absent: the agent's or tenant's policy, else the built-in default. */
  strategy?: Strategy | undefined;
  trigger: 'event' | 'sweep' | 'manual';
  /** A sweep's job: the compaction version the sweep saw (a compaction since then makes it moot). */
  expectedVersion?: number | undefined;
  /** Exactly-once effect: a key changes the session at most once, however often the job is retried. */
  idempotencyKey: string;
  eventId: string | null;
  /** Aborts the LLM call (worker shutdown). */
  signal?: AbortSignal | undefined;
  /** Recorded as the ledger row's reason when the compaction applies (e.g. why a fallback ran). */
  note?: string | undefined;
}

/**
 * What happened: a new ledger row (`applied`, `skipped`), the row an earlier run left
 * (`duplicate`), or a summary queued for the next message batch (`batched`; its ledger row is
 * written when the batch ends).
 */
export type CompactionOutcome =
  | (ApplyResult & { plan: Plan | null })
  | { status: 'batched'; row: null; plan: CompactPlan; queued: boolean };

/** Fence conflicts tolerated in one run before giving the job back to BullMQ. */
const MAX_FENCE_RETRIES = 3;

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
  const gate = await timed(deps, 'admission', () => gateOf(deps.store, request));
  if (gate === null || gate.keyUsed) {
    const earlier = await deps.store.findByKey(request.idempotencyKey);
    if (earlier) return { status: 'duplicate', row: earlier, plan: null };
    if (gate === null) throw new SessionNotFoundError(request.tenantId, request.sessionId);
  }
  const policy = resolvePolicy(request.strategy, gate.agentPolicy, gate.tenantPolicy);
  const admission = admit(request, policy, gate.state, (deps.wallClock ?? Date.now)());
  if (!admission.fire) {
    const result = await deps.store.record({
      ...ledgerContext(request, policy),
      status: 'skipped',
      reason: admission.reason,
      durationMs: deps.now() - started,
      counts: gate.state,
    });
    return { ...result, plan: null };
  }

  const retryFenced = async (once: () => Promise<CompactionOutcome>) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await once();
      } catch (error) {
        if (!(error instanceof FenceError) || attempt >= MAX_FENCE_RETRIES) throw error;
        deps.logger.info(
          { tenantId: request.tenantId, sessionId: request.sessionId, attempt, reason: error.message },
          'fence rejected a stale plan; re-planning',
        );
      }
    }
  };
  const { contextWindow } = gate.state;
  // No LLM call, nothing to pay for twice: no lease; read, plan and apply under the row lock.
  if (policy.strategy.type !== 'summarize') {
    const strategy = policy.strategy;
    const seenVersion = gate.state.compactionVersion;
    return retryFenced(() =>
      compactUnderLock(deps, { request, policy, contextWindow, started }, strategy, seenVersion),
    );
  }

  const lease = await timed(deps, 'lease', () => deps.leases.acquire(request.tenantId, request.sessionId));
  if (!lease) throw new LeaseBusyError(`session "${request.sessionId}" is being compacted by another worker`);
  try {
    const signal = request.signal ? AbortSignal.any([request.signal, lease.signal]) : lease.signal;
    return await retryFenced(() => compactOnce(deps, { request, policy, contextWindow, started, signal }));
  } finally {
    await lease.release();
  }
}

/** A compaction that needs no LLM call: one transaction under the row lock (store.compactUnderLock). */
async function compactUnderLock(
  deps: PipelineDeps,
  run: Omit<Run, 'signal'>,
  strategy: Strategy,
  seenVersion: number,
): Promise<CompactionOutcome> {
  const { request, policy } = run;
  return deps.store.compactUnderLock({
    ...ledgerContext(request, policy),
    planStrategy: strategy,
    seenVersion,
    mode: policy.mode,
    note: request.note,
    stillOverTrigger: (messages, tokens) => overTrigger(policy.triggers, run.contextWindow, messages, tokens),
    now: deps.now,
    durationMs: () => deps.now() - run.started,
    onStage: deps.onStage,
  });
}

/**
 * The admission gate with the request's idempotency key checked in the same round trip; null for
 * an unknown session (an earlier run's ledger row may still answer the request).
 */
async function gateOf(store: SessionReads, request: CompactionRequest): Promise<Gate | null> {
  try {
    return await store.loadGate(request.tenantId, request.sessionId, request.idempotencyKey);
  } catch (error) {
    if (error instanceof SessionNotFoundError) return null;
    throw error;
  }
}

/**
 * The policy in force for a request (the event's override, the agent's, the tenant's, the default).
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function effectivePolicy(
  store: SessionReads,
  request: Pick<CompactionRequest, 'tenantId' | 'sessionId' | 'strategy'>,
): Promise<EffectivePolicy> {
  const gate = await store.loadGate(request.tenantId, request.sessionId);
  return resolvePolicy(request.strategy, gate.agentPolicy, gate.tenantPolicy);
}

/** One admitted compaction: the request and the policy in force. */
interface Run {
  request: CompactionRequest;
  policy: EffectivePolicy;
  contextWindow: number | null;
  started: number;
  /** Aborts the summary call (lease lost, worker stopping). */
  signal: AbortSignal;
}

function ledgerContext(request: CompactionRequest, policy: EffectivePolicy) {
  return {
    tenantId: request.tenantId,
    sessionId: request.sessionId,
    idempotencyKey: request.idempotencyKey,
    eventId: request.eventId,
    trigger: request.trigger,
    strategy: policy.strategy.type,
  };
}

async function compactOnce(deps: PipelineDeps, run: Run): Promise<CompactionOutcome> {
  const { request, policy, started, signal } = run;
  const strategy = policy.strategy;
  const { snapshot, plan } = await loadAndPlan(deps, request, strategy);
  const context = ledgerContext(request, policy);
  // A compaction that cannot help while a trigger still fires sets the storm guard.
  const stillOver = (messages: number, tokens: number) =>
    overTrigger(policy.triggers, run.contextWindow, messages, tokens);
  const overNow = stillOver(snapshot.messageCount, snapshot.tokenCount);
  if (plan.action === 'skip') {
    const result = await deps.store.record({
      ...context,
      status: 'skipped',
      reason: plan.reason,
      durationMs: deps.now() - started,
      stormGuard: overNow,
      counts: snapshot,
    });
    return { ...result, plan };
  }

  let summary: SummaryToWrite | null = null;
  if (strategy.type === 'summarize') {
    // A batch request is one request and needs its messages whole; an online summary reads them
    // in pages and folds its chunks as they arrive.
    const batchable = request.trigger === 'sweep' && policy.batch && deps.batching !== undefined;
    const leaving = batchable
      ? await deps.store.loadMessages(request.tenantId, request.sessionId, plan.coverSeqs)
      : deps.store.pagedMessages(request.tenantId, request.sessionId, plan.coverSeqs);
    const input = summarizeInput(request, strategy, snapshot.checkpoint, leaving, signal);
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
    summary = await timed(deps, 'summarize', () => summarize(deps, input, plan));
    if (summary.tokenCount >= plan.leavingTokens) {
      const reason =
        `a summary of ${summary.tokenCount} tokens would not make the session smaller ` +
        `(${plan.leavingTokens} tokens would leave)`;
      const result = await deps.store.record({
        ...context,
        status: 'skipped',
        reason,
        durationMs: deps.now() - started,
        usage: summary.usage,
        summarizer: summary.summarizer,
        stormGuard: overNow,
      });
      return { ...result, plan };
    }
  }
  signal.throwIfAborted();
  const result = await timed(deps, 'apply', () =>
    deps.store.apply({
      ...context,
      plan,
      expectedVersion: snapshot.compactionVersion,
      summary,
      note: request.note,
      mode: policy.mode,
      stillOverTrigger: stillOver,
      durationMs: deps.now() - started,
    }),
  );
  return { ...result, plan };
}

/**
 * The snapshot and its plan. The snapshot comes back without its message metadata, which only
 * planning needs: for a long session it is most of the memory a run holds while it summarizes.
 */
async function loadAndPlan(deps: PipelineDeps, request: CompactionRequest, strategy: Strategy) {
  const { messages, ...snapshot } = await timed(deps, 'snapshot', () =>
    deps.store.loadSnapshot(request.tenantId, request.sessionId),
  );
  const plan = await timed(deps, 'plan', () => planCompaction(snapshot, messages, strategy));
  return { snapshot, plan };
}

function summarizeInput(
  request: CompactionRequest,
  strategy: SummarizeStrategy,
  previous: SummarizeInput['previous'],
  leaving: SummarizeInput['leaving'],
  signal: AbortSignal,
): SummarizeInput {
  return {
    tenantId: request.tenantId,
    sessionId: request.sessionId,
    previous,
    leaving,
    maxSummaryTokens: strategy.maxSummaryTokens,
    model: strategy.model,
    signal,
  };
}

async function summarize(
  deps: PipelineDeps,
  input: SummarizeInput,
  plan: CompactPlan,
): Promise<SummaryToWrite> {
  const result = await deps.summarizer.summarize(input);
  const text = renderCheckpoint(result.checkpoint, plan.cutoffSeq);
  return {
    checkpoint: result.checkpoint,
    text,
    tokenCount: estimateMessageTokens(text),
    summarizer: deps.summarizer.name,
    usage: result.usage,
  };
}
