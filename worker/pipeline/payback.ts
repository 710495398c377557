/**
 * The payback step of a run: the prediction of a compact plan (recorded on its ledger row whether
 * or not the policy asks for a check) and, under a policy's `payback`, the skip of a compaction
 * that would not pay for itself. The arithmetic is shared/policy/payback.ts.
 */
import type { MessageMeta } from '../../shared/contract/message.ts';
import type { CompactPlan } from '../../shared/planning/types.ts';
import {
  DEFAULT_AGENT_MODEL,
  expectedRequests,
  type PaybackPrediction,
  paybackSkipReason,
  predictPayback,
} from '../../shared/policy/payback.ts';
import type { EffectivePolicy } from '../../shared/policy/policy.ts';
import type { SummaryEstimate } from '../../shared/summary/summarizer.ts';
import { skipOf } from './change.ts';
import type { CompactionRequest, PipelineDeps } from './deps.ts';
import type { LedgerEntry, NoChange } from './ports.ts';

/** What this step reads of a run (./run.ts `Run`, which imports this module). */
interface PaybackRun {
  request: Pick<CompactionRequest, 'tenantId' | 'sessionId' | 'trigger'>;
  policy: Pick<EffectivePolicy, 'payback'>;
  entry: LedgerEntry;
  contextWindow: number | null;
  /** When the run started, on the clock's `now`, ms. */
  started: number;
}

/** The summary a plan will write, as sized before the call; null for a plan that writes none. */
export interface PlannedSummary {
  estimate: SummaryEstimate | null;
  /** The summary's most tokens in the session afterwards (the strategy's `maxSummaryTokens`). */
  maxSummaryTokens: number;
}

/** The assistant messages of a live history: the requests the session has made that it still shows. */
export function assistantsIn(messages: readonly Pick<MessageMeta, 'role'>[]): number {
  return messages.reduce((n, m) => (m.role === 'assistant' ? n + 1 : n), 0);
}

/**
 * The payback prediction of `plan` on a session of `tokenCount` tokens whose live history holds
 * `assistants` assistant messages. Tokens after = before − leaving − cleared + the summary at its
 * maximum length.
 */
export function predictionOf(
  run: PaybackRun,
  tokenCount: number,
  assistants: number,
  plan: CompactPlan,
  summary: PlannedSummary | null,
): PaybackPrediction {
  const { payback } = run.policy;
  const horizon = expectedRequests(payback?.horizonRequests, assistants);
  const tokensAfter = Math.max(
    0,
    tokenCount - plan.leavingTokens - (plan.clearing?.tokensFreed ?? 0) + (summary?.maxSummaryTokens ?? 0),
  );
  return predictPayback({
    tokensBefore: tokenCount,
    tokensAfter,
    requests: horizon.requests,
    horizon: horizon.source,
    agentModel: payback?.model ?? DEFAULT_AGENT_MODEL,
    promptCaching: payback?.promptCaching ?? true,
    summary: summary?.estimate ?? null,
  });
}

/**
 * The skipped row of a run whose policy's `payback` says the compaction does not pay, with the
 * prediction's numbers in its reason and on the row; null to go ahead.
 */
export function paybackSkipOf(
  deps: PipelineDeps,
  run: PaybackRun,
  prediction: PaybackPrediction,
  counts: { messageCount: number; tokenCount: number },
): NoChange | null {
  const reason = paybackSkipReason(prediction, run.policy.payback, {
    trigger: run.request.trigger,
    tokenCount: counts.tokenCount,
    contextWindow: run.contextWindow,
  });
  if (reason === null) return null;
  deps.logger.info(
    { tenantId: run.request.tenantId, sessionId: run.request.sessionId, ratio: prediction.ratio },
    'payback: skipping a compaction that would not pay for itself',
  );
  return skipOf({ ...run.entry, payback: prediction }, reason, {
    counts,
    durationMs: Math.round(deps.clock.now() - run.started),
  });
}
