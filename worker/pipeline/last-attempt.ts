/**
 * What a compaction's last failed attempt leaves behind, the same for a BullMQ job (the processor)
 * and for `compactor compact` (its in-process retries): a strategy that opted into a fallback
 * summarizer (`fallback: 'extractive'`, or `'anthropic'` for an `anthropic-compaction` strategy)
 * runs again with it, as the fallback policy's `lastAttempt` route answers (./fallback.ts);
 * anything else leaves a `failed` row in the ledger, so every compaction asked for is recorded,
 * applied or not.
 */
import type { Logger } from 'pino';
import { isPermanent, LowFidelityError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import { type Strategy, strategyUnit } from '../../shared/strategies/index.ts';
import type { Summarizer } from '../../shared/summary/summarizer.ts';
import { entryOf, failureOf } from './change.ts';
import type { CompactionOutcome, CompactionRequest, PipelineDeps } from './deps.ts';
import { fallbackFor } from './fallback.ts';
import { effectivePolicy, runCompaction } from './pipeline.ts';

/**
 * After the last attempt of `request` failed with `error` (or it failed for good, `isPermanent`: no
 * fallback then): the outcome of the request run again with the fallback summarizer its strategy
 * (the request's, else the policy's, read again) names, when this process has it; otherwise null,
 * once a `failed` ledger row holds the error (unless the pipeline wrote one itself: an unknown
 * session, a summary under `minFidelity` with its score). The caller throws `error` on null.
 * A failure to write the row is logged, never thrown over `error`.
 */
export async function afterLastAttempt(
  deps: PipelineDeps,
  request: CompactionRequest,
  error: Error,
  log: Logger,
): Promise<CompactionOutcome | null> {
  const permanent = isPermanent(error);
  const strategy = permanent ? request.strategy : await strategyInForce(deps, request);
  const options = strategy ? strategyUnit(strategy).summaryOptions(strategy) : null;
  const fallback = fallbackFor({ route: 'lastAttempt', error, permanent, options }, deps.summarizers);
  if (fallback.kind === 'summarizer') {
    return runFallback(deps, fallback.summarizer, { ...request, note: fallback.note }, error, log);
  }
  const recorded = error instanceof SessionNotFoundError || error instanceof LowFidelityError;
  if (!recorded) {
    await deps.writes
      .record(failureOf(entryOf(request, strategy ?? 'policy'), error.message))
      .catch((e: unknown) => log.warn({ err: e }, 'could not record the failure in the ledger'));
  }
  return null;
}

/**
 * The strategy the request ran with, for the fallback and the failure row: the request's own, else
 * the policy's, read again (the request's when that read fails).
 */
async function strategyInForce(
  deps: PipelineDeps,
  request: CompactionRequest,
): Promise<Strategy | undefined> {
  return effectivePolicy(deps.reads, request).then(
    (policy) => policy.strategy,
    () => request.strategy,
  );
}

/**
 * Runs the request again with the fallback summarizer writing every summary, whatever the strategy
 * names (the offline one stays for the routes it stands in on); the ledger row's reason says why.
 */
function runFallback(
  deps: PipelineDeps,
  fallback: Summarizer,
  request: CompactionRequest,
  error: Error,
  log: Logger,
): Promise<CompactionOutcome> {
  log.warn(
    { err: error.message, fallback: fallback.name },
    `summary failed on the last attempt: falling back to the ${fallback.name} summarizer`,
  );
  const summarizers = { primary: fallback, offline: deps.summarizers.offline };
  return runCompaction({ ...deps, summarizers }, request);
}
