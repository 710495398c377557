/**
 * Pure builders of what the pipeline hands its fenced writes: the ledger entry of a request, and
 * the {@link Change} a compact plan becomes. Every path that writes a compaction — an event, a
 * sweep, a manual run, a batch summary collected later — builds it here, so a ledger row is
 * described in one place.
 */
import { effectsOf } from '../../shared/planning/effects.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import { type EffectivePolicy, type Mode, setsStormGuard } from '../../shared/policy/policy.ts';
import { instructionsOf, type Strategy } from '../../shared/strategies/index.ts';
import type { Change, LedgerEntry, NoChange, StormGuardRule } from './ports.ts';
import type { SummaryToWrite } from './summary.ts';

/** Who asked: the part of a request that the ledger records. */
export interface Requester {
  tenantId: string;
  sessionId: string;
  idempotencyKey: string | null;
  eventId: string | null;
  trigger: 'event' | 'sweep' | 'manual';
}

/**
 * A ledger entry with nothing recorded yet but who asked, the strategy and the mode.
 * @param strategy the strategy in force, whose name and summary instructions the row records; or
 *   only a name (`policy` when no strategy was resolved).
 */
export function entryOf(
  requester: Requester,
  strategy: Strategy | string,
  mode: Mode = 'inPlace',
): LedgerEntry {
  const named = typeof strategy === 'string';
  return {
    tenantId: requester.tenantId,
    sessionId: requester.sessionId,
    idempotencyKey: requester.idempotencyKey,
    eventId: requester.eventId,
    trigger: requester.trigger,
    strategy: named ? strategy : strategy.type,
    instructions: named ? null : instructionsOf(strategy),
    mode,
    reason: null,
    error: null,
    summarizer: null,
    usage: null,
    durationMs: 0,
  };
}

/**
 * The storm-guard rule of a run: the policy's triggers, measured against the session's window; null
 * when the run may not set the guard ({@link setsStormGuard}: a manual run with its own strategy).
 */
export function guardOf(
  request: Pick<Requester, 'trigger'>,
  policy: EffectivePolicy,
  contextWindow: number | null,
): StormGuardRule | null {
  return setsStormGuard(request, policy) ? { triggers: policy.triggers, contextWindow } : null;
}

/**
 * The change that carries out `plan`: its effects, under the fence of `expectedVersion`.
 * @param summary the summary to write; null for a plan that writes none.
 */
export function changeOf(
  entry: LedgerEntry,
  plan: CompactPlan,
  expectedVersion: number,
  summary: SummaryToWrite | null,
  guard: StormGuardRule | null,
): Change {
  const abandoned = plan.abandonedCalls ?? [];
  const why =
    abandoned.length === 0
      ? entry.reason
      : [
          entry.reason,
          `${abandoned.length} tool call(s) left without a result, the session having moved on: ` +
            abandoned.map((c) => `${c.toolCallId} (seq ${c.seq})`).join(', '),
        ]
          .filter(Boolean)
          .join('; ')
          .slice(0, 2_000);
  // Dropping thinking from the oldest turns leaves the rest of the chain valid ("Preserved thinking":
  // blocks may be removed from the start of the history).
  const thinking =
    plan.strategy === 'clearThinking'
      ? {
          preserved: true,
          note: 'thinking left out of the oldest turns only: the rest of the chain stays valid',
        }
      : entry.thinking;
  return {
    entry: summary
      ? { ...entry, reason: why, summarizer: summary.summarizer, usage: summary.usage, thinking }
      : { ...entry, reason: why, thinking },
    expectedVersion,
    cutoffSeq: plan.cutoffSeq,
    summarySeq: summary ? plan.summarySeq : null,
    effects: effectsOf(entry.sessionId, plan, summary, entry.mode, expectedVersion + 1),
    guard,
  };
}

/** A skipped decision: nothing changes, the reason is recorded. */
export function skipOf(
  entry: LedgerEntry,
  reason: string,
  options: Partial<Pick<NoChange, 'stormGuard' | 'counts'>> &
    Partial<Pick<LedgerEntry, 'usage' | 'summarizer' | 'durationMs' | 'fidelity'>> = {},
): NoChange {
  const { stormGuard = false, counts, ...more } = options;
  return { entry: { ...entry, ...more, reason }, status: 'skipped', stormGuard, counts };
}

/** A failed attempt: recorded without its key (so a later attempt may still apply), never committed. */
export function failureOf(entry: LedgerEntry, error: string, reason = 'the job failed'): NoChange {
  return {
    entry: { ...entry, idempotencyKey: null, reason, error: error.slice(0, 2_000) },
    status: 'failed',
    stormGuard: false,
  };
}
