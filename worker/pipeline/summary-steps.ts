/**
 * The last steps of a summarizing run, once the budget allowed its summary: summarize ─► fidelity
 * ─► size ─► write. Each answers with a tagged outcome; together they come to one {@link Verdict}
 * (apply the change, record a row that changes nothing, or record a failure and let the job retry),
 * which {@link summarizeAndCommit} writes with the summary's budget reservation: the row that
 * records the summary replaces the reservation in its transaction, and whatever else ends the run
 * (an error, a duplicate, a fence rejection) releases it.
 */
import { LowFidelityError, NothingToSummarizeError } from '../../shared/contract/errors.ts';
import type { FidelityCheck, LeavingFacts, PlanFacts } from '../../shared/fidelity/score.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import type { SummaryOptions } from '../../shared/strategies/index.ts';
import { type KeptThinkingFacts, keptThinkingVerdict } from '../../shared/summary/compaction-block.ts';
import { addUsage, type SummarizeInput, type Summarizer } from '../../shared/summary/summarizer.ts';
import { failureOf, skipOf } from './change.ts';
import type { CompactionOutcome, PipelineDeps } from './deps.ts';
import { type Fallback, fallbackFor, judgeStandIn } from './fallback.ts';
import { belowMinimum, completeFacts, lowFidelityReason, observeLeaving, scoreSummary } from './fidelity.ts';
import type { Change, LedgerEntry, NoChange, Snapshot, WriteResult } from './ports.ts';
import { changeFor, elapsed, observe, type Run, stillOver, timed } from './run.ts';
import { notSmaller, type SummaryToWrite, summarize } from './summary.ts';

/** What the summary steps read: the plan, the session as it saw it, the summary's input and maker. */
export interface SummaryWork {
  plan: CompactPlan;
  /** The session as planned, without its messages' metadata. */
  seen: Snapshot;
  /** The fidelity check's facts of what stays. */
  planFacts: PlanFacts;
  /** For a compaction block: the kept-thinking facts but the model; else null. */
  keptFacts: Omit<KeptThinkingFacts, 'model'> | null;
  options: SummaryOptions;
  input: SummarizeInput & { leavingTokens: number };
  /** The summarizer the budget allowed (the chosen one, or the offline one standing in). */
  summarizer: Summarizer;
  /** Aborted: the worker stops or the lease was lost; nothing is written then. */
  signal: AbortSignal;
}

/** What the summary steps decided: the write to make. */
export type Verdict =
  | { kind: 'apply'; change: Change }
  | { kind: 'record'; noChange: NoChange }
  | { kind: 'retry'; noChange: NoChange; error: LowFidelityError };

/**
 * Makes, judges and writes the summary of `work`, its reservation replaced by the row that records
 * it or released.
 * @throws {LowFidelityError} after recording a `failed` row (`onLowFidelity: 'retry'`).
 * @throws summarizer and write errors (the reservation released).
 */
export async function summarizeAndCommit(
  deps: PipelineDeps,
  run: Run,
  work: SummaryWork,
  reservationId: string | null,
): Promise<CompactionOutcome> {
  const committed = await judge(deps, run, work)
    .then((verdict) => commit(deps, verdict, reservationId))
    .catch(async (error: unknown) => {
      await release(deps, run, reservationId);
      throw error;
    });
  if (!committed.replaced) await release(deps, run, reservationId);
  if (committed.verdict.kind === 'retry') throw committed.verdict.error;
  return { ...committed.written, plan: work.plan };
}

/** The steps in turn: summarize, fidelity, size, then the change to write. */
async function judge(deps: PipelineDeps, run: Run, work: SummaryWork): Promise<Verdict> {
  const skip = (reason: string, more: Parameters<typeof skipOf>[2]): Verdict => ({
    kind: 'record',
    noChange: skipOf(run.entry, reason, { ...more, durationMs: elapsed(deps, run.started) }),
  });
  const made = await summarizeStep(deps, run, work);
  if (made.kind === 'nothing') return skip(made.reason, { counts: work.seen });
  const judged = await fidelityStep(deps, run, work, made.summary, made.facts);
  if (judged.kind === 'skip') return skip(judged.reason, { ...judged.scored, counts: work.seen });
  if (judged.kind === 'retry') {
    const { tenantId, sessionId } = run.request;
    deps.logger.info({ tenantId, sessionId, reason: judged.error }, 'low fidelity: retrying');
    const entry = { ...run.entry, ...judged.scored, durationMs: elapsed(deps, run.started) };
    const noChange = failureOf(entry, judged.error, judged.reason);
    return { kind: 'retry', noChange, error: new LowFidelityError(judged.error) };
  }
  const sized = sizeStep(judged.summary, work.plan);
  if (sized.kind === 'tooLarge') {
    const scored = scoredOf(judged.summary, judged.check);
    return skip(sized.reason, { ...scored, stormGuard: stillOver(run, work.seen) });
  }
  work.signal.throwIfAborted();
  return { kind: 'apply', change: changeStep(deps, run, work, judged) };
}

/** The summary, with the facts of the leaving messages gathered as it read them; or nothing to summarize. */
type Made =
  | { kind: 'summary'; summary: SummaryToWrite; facts: LeavingFacts }
  | { kind: 'nothing'; reason: string };

/** Runs the summarizer over the leaving messages (read in pages, observed for the fidelity check). */
async function summarizeStep(deps: PipelineDeps, run: Run, work: SummaryWork): Promise<Made> {
  const observed = observeLeaving(work.input.leaving);
  let summary: SummaryToWrite;
  try {
    summary = await timed(deps, 'summarize', () =>
      summarize(work.summarizer, { ...work.input, leaving: observed.leaving }, work.plan),
    );
  } catch (error) {
    if (error instanceof NothingToSummarizeError) return { kind: 'nothing', reason: error.message };
    throw error;
  }
  return { kind: 'summary', summary, facts: await completeFacts(observed, () => reread(deps, run, work)) };
}

/** A summary's usage, summarizer and fidelity, as a row that does not commit it records them. */
type Scored = Pick<LedgerEntry, 'usage' | 'summarizer' | 'fidelity'>;

/** A summary that may be committed (with the fallback's note), or what the fallback policy says instead. */
type Judged =
  | { kind: 'pass'; summary: SummaryToWrite; check: FidelityCheck; note: string | undefined }
  | { kind: 'skip'; reason: string; scored: Scored }
  | { kind: 'retry'; error: string; reason: string; scored: Scored };

/**
 * Scores the summary against the leaving messages; under the strategy's `minFidelity`, the fallback
 * policy's `lowFidelity` answer: retry, skip, or the offline summary held to the same bar.
 */
async function fidelityStep(
  deps: PipelineDeps,
  run: Run,
  work: SummaryWork,
  summary: SummaryToWrite,
  facts: LeavingFacts,
): Promise<Judged> {
  const check = scored(deps, facts, summary, work.planFacts);
  const { minFidelity: minimum, onLowFidelity: action } = work.options;
  if (minimum === undefined || !belowMinimum(check, minimum))
    return { kind: 'pass', summary, check, note: undefined };
  const low = lowFidelityReason(summary.summarizer, check, minimum);
  const route = { route: 'lowFidelity', action, low, summarizer: summary.summarizer, minimum } as const;
  const fallback = fallbackFor(route, deps.summarizers);
  switch (fallback.kind) {
    case 'retry':
      return {
        kind: 'retry',
        error: fallback.error,
        reason: fallback.reason,
        scored: scoredOf(summary, check),
      };
    case 'skip':
      return { kind: 'skip', reason: fallback.reason, scored: scoredOf(summary, check) };
    case 'summarizer':
      return standIn(deps, run, work, summary, facts, fallback);
    default:
      throw new Error(`a summary under minFidelity has no ${fallback.kind} fallback`);
  }
}

/**
 * The fallback's summary over the same messages (read again), held to the same bar; the first
 * summary's cost stays on the row.
 */
async function standIn(
  deps: PipelineDeps,
  run: Run,
  work: SummaryWork,
  first: SummaryToWrite,
  facts: LeavingFacts,
  fallback: Extract<Fallback, { kind: 'summarizer' }>,
): Promise<Judged> {
  const again = await timed(deps, 'summarize', () =>
    summarize(fallback.summarizer, { ...work.input, leaving: reread(deps, run, work) }, work.plan),
  );
  const summary = { ...again, usage: addUsage(first.usage, again.usage) };
  const check = scored(deps, facts, again, work.planFacts);
  if (!fallback.bar) return { kind: 'pass', summary, check, note: fallback.note };
  const judged = judgeStandIn(fallback.bar, again.summarizer, check);
  if (judged.kind === 'skip')
    return { kind: 'skip', reason: judged.reason, scored: scoredOf(summary, check) };
  return { kind: 'pass', summary, check, note: judged.note };
}

/** Whether the summary makes the session smaller: it fits, or it is too large to be worth writing. */
function sizeStep(
  summary: SummaryToWrite,
  plan: CompactPlan,
): { kind: 'fits' } | { kind: 'tooLarge'; reason: string } {
  const reason = notSmaller(summary, plan);
  return reason === null ? { kind: 'fits' } : { kind: 'tooLarge', reason };
}

/** The change that writes the summary: the run's notes and the fallback's, its score, the kept thinking. */
function changeStep(
  deps: PipelineDeps,
  run: Run,
  work: SummaryWork,
  judged: Extract<Judged, { kind: 'pass' }>,
): Change {
  const { summary } = judged;
  const thinking =
    summary.blocks && work.keptFacts
      ? keptThinkingVerdict({ ...work.keptFacts, model: summary.usage.model ?? work.options.model ?? '' })
      : undefined;
  const notes = [run.request.note, judged.note].filter(Boolean).join('; ');
  const scoredRun: Run = {
    ...run,
    request: { ...run.request, note: notes === '' ? undefined : notes.slice(0, 2_000) },
    entry: { ...run.entry, fidelity: judged.check },
  };
  return changeFor(deps, scoredRun, work.plan, work.seen.compactionVersion, summary, thinking);
}

/**
 * Writes the verdict with the reservation (an apply is timed as the `apply` stage).
 * @returns the row, and whether it replaced the reservation (a row of the verdict's own status).
 */
async function commit(
  deps: PipelineDeps,
  verdict: Verdict,
  reservationId: string | null,
): Promise<{ verdict: Verdict; written: WriteResult; replaced: boolean }> {
  if (verdict.kind === 'apply') {
    const written = await timed(deps, 'apply', () => deps.writes.apply({ ...verdict.change, reservationId }));
    return { verdict, written, replaced: written.status === 'applied' };
  }
  const written = await deps.writes.record({ ...verdict.noChange, reservationId });
  return { verdict, written, replaced: written.status === verdict.noChange.status };
}

/** Releases the reservation, if any; a failure is logged (the reservation expires on its own). */
async function release(deps: PipelineDeps, run: Run, reservationId: string | null): Promise<void> {
  if (reservationId === null) return;
  const { tenantId } = run.request;
  await deps.budgets
    ?.release(tenantId, reservationId)
    .catch((error: unknown) =>
      deps.logger.warn(
        { tenantId, err: error },
        'could not release a budget reservation (it expires on its own)',
      ),
    );
}

/** The summary scored, the observer told. */
function scored(
  deps: PipelineDeps,
  facts: LeavingFacts,
  summary: SummaryToWrite,
  planFacts: PlanFacts,
): FidelityCheck {
  const check = scoreSummary(facts, summary, planFacts);
  observe(deps, { type: 'fidelity', summarizer: summary.summarizer, score: check.score });
  return check;
}

function scoredOf(summary: SummaryToWrite, check: FidelityCheck): Scored {
  return { usage: summary.usage, summarizer: summary.summarizer, fidelity: check };
}

/** The leaving messages again, in pages. */
function reread(deps: PipelineDeps, run: Run, work: SummaryWork): SummarizeInput['leaving'] {
  const { tenantId, sessionId } = run.request;
  return deps.reads.pagedMessages(tenantId, sessionId, work.plan.coverSeqs);
}
