/**
 * One admitted request as the pipeline's steps carry it ({@link Run}), and what every path shares:
 * the decision a plan becomes, its write, the clock and the observer.
 */
import type { MessageMeta } from '../../shared/contract/message.ts';
import type { CompactPlan, Plan } from '../../shared/planning/types.ts';
import type { BudgetLimit } from '../../shared/policy/budget.ts';
import { type EffectivePolicy, overTrigger } from '../../shared/policy/policy.ts';
import { type Strategy, strategyUnit } from '../../shared/strategies/index.ts';
import type { KeptThinkingVerdict } from '../../shared/summary/compaction-block.ts';
import { changeOf, skipOf } from './change.ts';
import type { CompactionRequest, PipelineDeps } from './deps.ts';
import { assistantsIn, paybackSkipOf, predictionOf } from './payback.ts';
import type {
  Change,
  Decision,
  LedgerEntry,
  PipelineEvent,
  Snapshot,
  Stage,
  StormGuardRule,
  WriteResult,
} from './ports.ts';
import type { SummaryToWrite } from './summary.ts';

/** One admitted request: the policy in force and what its ledger rows say. */
export interface Run {
  request: CompactionRequest;
  policy: EffectivePolicy;
  entry: LedgerEntry;
  /** Null: this run may not set the storm guard (see `setsStormGuard`). */
  guard: StormGuardRule | null;
  /** The spend limits in force for the session (its agent's, its tenant's); empty: none. */
  limits: BudgetLimit[];
  /** The session's agent, for agent budgets. */
  agentId: string | null;
  /** The session's context window as the gate read it; null: unknown. */
  contextWindow: number | null;
  /** When the request started, on the clock's `now`, ms. */
  started: number;
}

/**
 * What a plan becomes: no change (with the storm guard set when the session stays over its
 * trigger), or the change that carries it out. The one decision both paths make.
 */
export function decide(deps: PipelineDeps, run: Run, snapshot: Snapshot, plan: Plan): Decision {
  // A strategy that rewrites in place has no child session to continue in.
  const inPlaceOnly =
    plan.action === 'compact' && plan.clearing !== undefined && run.policy.mode === 'newSession';
  if (plan.action === 'compact' && !inPlaceOnly) {
    // No summary to pay for: the prediction's cost is the cache rewrite alone.
    const payback = predictionOf(run, snapshot.tokenCount, assistantsIn(snapshot.messages), plan, null);
    const skipped = paybackSkipOf(deps, run, payback, snapshot);
    if (skipped) return { noChange: skipped };
    const paid = { ...run, entry: { ...run.entry, payback } };
    return { change: changeFor(deps, paid, plan, snapshot.compactionVersion, null) };
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
export function changeFor(
  deps: PipelineDeps,
  run: Run,
  plan: CompactPlan,
  expectedVersion: number,
  summary: SummaryToWrite | null,
  thinking?: KeptThinkingVerdict,
): Change {
  const entry = {
    ...run.entry,
    reason: run.request.note ?? null,
    durationMs: elapsed(deps, run.started),
    ...(thinking ? { thinking } : {}),
  };
  return changeOf(entry, plan, expectedVersion, summary, run.guard);
}

/** Writes a decision: its change under the fence, or its ledger row that changes nothing. */
export function writeDecision(deps: PipelineDeps, decision: Decision): Promise<WriteResult> {
  return 'change' in decision ? deps.writes.apply(decision.change) : deps.writes.record(decision.noChange);
}

/**
 * Whether the session, as read, still fires its message or token trigger, for a run that may set
 * the storm guard (false for one that may not).
 */
export function stillOver(run: Run, snapshot: Pick<Snapshot, 'messageCount' | 'tokenCount'>): boolean {
  const { guard } = run;
  if (guard === null) return false;
  return overTrigger(guard.triggers, guard.contextWindow, snapshot.messageCount, snapshot.tokenCount);
}

/** The content a strategy's plan reads (its unit's `reads`), bound to the strategy; undefined: none. */
export function contentSeqsOf(strategy: Strategy): ((messages: MessageMeta[]) => number[]) | undefined {
  const unit = strategyUnit(strategy);
  return unit.reads ? (messages) => unit.reads?.(messages, strategy) ?? [] : undefined;
}

/** Tells the observer, if any. */
export function observe(deps: PipelineDeps, event: PipelineEvent): void {
  deps.observer?.observe(event);
}

/** Runs `work`, telling the observer its duration as `stage`. */
export async function timed<T>(deps: PipelineDeps, stage: Stage, work: () => Promise<T> | T): Promise<T> {
  if (!deps.observer) return work();
  const start = deps.clock.now();
  try {
    return await work();
  } finally {
    observe(deps, { type: 'stage', stage, ms: deps.clock.now() - start });
  }
}

/** Whole ms on the clock since `since`. */
export function elapsed(deps: PipelineDeps, since: number): number {
  return Math.round(deps.clock.now() - since);
}
