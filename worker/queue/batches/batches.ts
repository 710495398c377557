/**
 * Batch summaries for sweeps, at the Message Batches API's lower price for work that can wait: a
 * sweep's `summarize` compaction, when its policy says `batch`, is queued in `summary_batches` with
 * its plan instead of calling the LLM. A scheduled poller submits queued requests as one Message
 * Batch, and when a batch has ended applies each
 * summary with the same fencing and idempotency as an online compaction: the plan was made at
 * `expected_version`, so a session compacted meanwhile is fenced off and recorded as skipped.
 */
import type { Logger } from 'pino';
import type { Db } from '../../../producer/postgres/db.ts';
import type { CompactionRow } from '../../../producer/postgres/schema.ts';
import { FenceError } from '../../../shared/contract/errors.ts';
import type { Message } from '../../../shared/contract/message.ts';
import { createExtractiveSummarizer } from '../../../shared/extractive/index.ts';
import { type FidelityCheck, factsOf, planFactsOf } from '../../../shared/fidelity/score.ts';
import { type SummaryOptions, strategySchema, strategyUnit } from '../../../shared/strategies/index.ts';
import type { CompactPlan } from '../../../shared/strategies/plan.ts';
import { type Checkpoint, checkpointSchema } from '../../../shared/summary/checkpoint.ts';
import { addUsage, type SummarizeInput, type SummaryUsage } from '../../../shared/summary/summarizer.ts';
import { changeOf, entryOf, failureOf, type Requester, skipOf } from '../../pipeline/change.ts';
import { belowMinimum, fallbackLowReason, lowFidelityReason, scoreSummary } from '../../pipeline/fidelity.ts';
import type { QueuedSummary } from '../../pipeline/pipeline.ts';
import type { FencedWrites, LedgerEntry, SessionReads } from '../../pipeline/ports.ts';
import { notSmaller, summarizeInput, summaryToWrite } from '../../pipeline/summary.ts';
import {
  finishRow,
  markSubmitted,
  openBatchIds,
  queuedRows,
  type SummaryBatchRow as Row,
  type SummaryBatchKey,
  sessionVersion,
  submittedRows,
} from '../../postgres/summary-batches.ts';
import type { AnthropicBatches } from '../../summarizers/anthropic.ts';

export { queueBatchedSummary } from '../../postgres/summary-batches.ts';
export type { QueuedSummary };

/** What one poll did. */
export interface PollResult {
  submitted: number;
  applied: number;
  skipped: number;
  failed: number;
  /** Batches still running. */
  running: number;
}

export interface PollDeps {
  db: Db;
  /** Reads of the session and its messages. */
  reads: SessionReads;
  /** The fenced writes that apply a collected summary, or record why not. */
  writes: FencedWrites;
  batches: AnthropicBatches;
  logger: Logger;
  /**
   * Called with the ledger row of each compaction a batch applies, and the checkpoint it wrote (absent
   * when the apply found it applied already), before its batch row is finished.
   */
  onApplied?: (row: CompactionRow, checkpoint?: Checkpoint | null) => Promise<void>;
  /** Most requests per submitted batch. Default 1,000. */
  maxBatchSize?: number;
  /** Called with the fidelity score of each batch summary (and of a fallback), committed or not. */
  onFidelity?: (summarizer: string, score: number) => void;
}

/**
 * One poll: submit what is queued, then collect and apply every ended batch.
 * @throws mapped SDK errors (transient: the scheduler polls again).
 */
export async function pollBatches(deps: PollDeps): Promise<PollResult> {
  const result: PollResult = { submitted: 0, applied: 0, skipped: 0, failed: 0, running: 0 };
  await submitQueued(deps, result);
  for (const batchId of await openBatchIds(deps.db)) await collectBatch(deps, batchId, result);
  return result;
}

async function submitQueued(deps: PollDeps, result: PollResult): Promise<void> {
  const queued = await queuedRows(deps.db, deps.maxBatchSize ?? 1_000);
  const items: Array<{ customId: string; input: SummarizeInput }> = [];
  const keys: SummaryBatchKey[] = [];
  for (const row of queued) {
    const rebuilt = await rebuildInput(deps, row);
    if (typeof rebuilt === 'string') {
      await finish(deps, row, 'skipped', rebuilt);
      result.skipped++;
    } else {
      items.push({ customId: row.id, input: rebuilt.input });
      keys.push({ tenantId: row.tenantId, id: row.id });
    }
  }
  if (items.length === 0) return;
  const batchId = await deps.batches.submit(items);
  await markSubmitted(deps.db, keys, batchId);
  result.submitted += items.length;
  deps.logger.info({ batchId, requests: items.length }, 'summary batch submitted');
}

async function collectBatch(deps: PollDeps, batchId: string, result: PollResult): Promise<void> {
  const answers = await deps.batches.collect(batchId);
  if (answers === null) {
    result.running++;
    return;
  }
  const rows = await submittedRows(deps.db, batchId);
  const byId = new Map(answers.map((a) => [a.customId, a]));
  for (const row of rows) {
    const answer = byId.get(row.id);
    if (!answer?.ok) {
      const why = answer ? answer.error : 'the batch has no result for this request';
      await recordFailed(deps, row, why);
      result.failed++;
      continue;
    }
    const outcome = await applyAnswer(deps, row, answer.message);
    result[outcome]++;
  }
}

/** Validates the batch's summary and applies it fenced, under the sweep job's idempotency key. */
async function applyAnswer(
  deps: PollDeps,
  row: Row,
  message: Parameters<AnthropicBatches['summaryOf']>[0],
): Promise<'applied' | 'skipped' | 'failed'> {
  const rebuilt = await rebuildInput(deps, row);
  if (typeof rebuilt === 'string') {
    await finish(deps, row, 'skipped', rebuilt);
    await recordSkipped(deps, row, rebuilt);
    return 'skipped';
  }
  const { input, options } = rebuilt;
  let summary: ReturnType<AnthropicBatches['summaryOf']>;
  try {
    summary = deps.batches.summaryOf(message, input);
  } catch (error) {
    await recordFailed(deps, row, (error as Error).message);
    return 'failed';
  }
  const plan = row.plan as CompactPlan;
  let written = summaryToWrite(summary.checkpoint, plan, 'anthropic-batch', summary.usage);
  // The same check as an online summary's, before anything is committed.
  const facts = factsOf(rebuilt.leaving);
  const { messages } = await deps.reads.loadSnapshot(row.tenantId, row.sessionId);
  const planFacts = planFactsOf(messages, plan);
  let check = scoreSummary(facts, written, planFacts);
  deps.onFidelity?.(written.summarizer, check.score);
  let fidelityNote: string | null = null;
  const minimum = options.minFidelity;
  if (minimum !== undefined && belowMinimum(check, minimum)) {
    const low = lowFidelityReason(written.summarizer, check, minimum);
    const action = options.onLowFidelity ?? 'skip';
    if (action === 'retry') {
      // Recorded failed with no key: the next sweep plans the session again.
      await recordFailed(
        deps,
        row,
        `${low}: not committed; the next sweep tries again`,
        scoredOf(written, check),
      );
      return 'failed';
    }
    if (action === 'skip') {
      await finish(deps, row, 'skipped', `${low}: skipped`);
      await recordSkipped(deps, row, `${low}: skipped`, scoredOf(written, check));
      return 'skipped';
    }
    // fallback: the offline summarizer over the same messages, held to the same bar.
    const again = await createExtractiveSummarizer().summarize(input);
    written = summaryToWrite(again.checkpoint, plan, 'extractive', addUsage(summary.usage, again.usage));
    check = scoreSummary(facts, written, planFacts);
    deps.onFidelity?.(written.summarizer, check.score);
    if (belowMinimum(check, minimum)) {
      const why = fallbackLowReason(low, written.summarizer, check);
      await finish(deps, row, 'skipped', why);
      await recordSkipped(deps, row, why, scoredOf(written, check));
      return 'skipped';
    }
    fidelityNote = `${low}: summarized by extractive instead (fidelity ${check.score})`;
  }
  const useless = notSmaller(written, plan);
  if (useless !== null) {
    await finish(deps, row, 'skipped', useless);
    await recordSkipped(deps, row, useless, scoredOf(written, check));
    return 'skipped';
  }
  const entry = {
    ...entryOfRow(row),
    reason: [`summarized through message batch ${row.batchId}`, fidelityNote].filter(Boolean).join('; '),
    fidelity: check,
  };
  try {
    const result = await deps.writes.apply(changeOf(entry, plan, row.expectedVersion, written, null));
    // Told before the batch row is finished: a failure leaves it to the next poll, whose apply
    // finds the compaction applied (a duplicate) and tells it again.
    if (result.row.status === 'applied') await deps.onApplied?.(result.row, result.checkpoint);
  } catch (error) {
    if (!(error instanceof FenceError)) throw error;
    const why = `the session changed while the batch ran: ${error.message}`;
    await finish(deps, row, 'skipped', why);
    await recordSkipped(deps, row, why);
    return 'skipped';
  }
  await finish(deps, row, 'applied', null);
  return 'applied';
}

/**
 * The summarize input of a queued row, from the database: the plan's covered messages and the
 * session's checkpoint, valid only while the session is still at the plan's version.
 * @returns the input, or why the request is moot.
 */
async function rebuildInput(deps: PollDeps, row: Row): Promise<Rebuilt | string> {
  const session = await sessionVersion(deps.db, row.tenantId, row.sessionId);
  if (!session) return 'the session no longer exists';
  if (session.version !== row.expectedVersion) {
    return `compacted since the sweep saw it (version ${row.expectedVersion}, now ${session.version})`;
  }
  const plan = row.plan as CompactPlan;
  const strategy = strategySchema.parse(row.strategy);
  const options = strategyUnit(strategy).summaryOptions(strategy);
  if (options === null) return `strategy ${strategy.type} writes no summary`;
  const leaving = await deps.reads.loadMessages(row.tenantId, row.sessionId, plan.coverSeqs);
  const previous: Checkpoint | null =
    session.checkpoint === null ? null : checkpointSchema.parse(session.checkpoint);
  return { input: summarizeInput(row, options, previous, leaving), options, leaving };
}

/** A queued row's summarize input, with what the fidelity check reads. */
interface Rebuilt {
  input: SummarizeInput;
  options: SummaryOptions;
  /** The covered messages, whole. */
  leaving: Message[];
}

/**
 * The ledger entry of a queued row: the sweep job under its key, and the strategy queued with it
 * (its summary instructions recorded); a strategy that no longer parses is recorded by name.
 */
function entryOfRow(row: Row): LedgerEntry {
  const strategy = strategySchema.safeParse(row.strategy);
  return entryOf(requesterOf(row), strategy.success ? strategy.data : 'summarize');
}

/** Who asked for a batched summary: the sweep job, under its key. */
function requesterOf(row: Row): Requester {
  return {
    tenantId: row.tenantId,
    sessionId: row.sessionId,
    idempotencyKey: row.idempotencyKey,
    eventId: row.eventId,
    trigger: 'sweep',
  };
}

async function finish(
  deps: PollDeps,
  row: Row,
  status: 'applied' | 'skipped' | 'failed',
  reason: string | null,
) {
  await finishRow(deps.db, { tenantId: row.tenantId, id: row.id }, status, reason);
}

function scoredOf(summary: { summarizer: string; usage: SummaryUsage }, fidelity: FidelityCheck): Scored {
  return { summarizer: summary.summarizer, usage: summary.usage, fidelity };
}

/** What a scored summary adds to the ledger row of a request that commits nothing: who wrote it, its cost, its score. */
type Scored = Pick<LedgerEntry, 'summarizer' | 'usage' | 'fidelity'>;

async function recordSkipped(deps: PollDeps, row: Row, reason: string, scored?: Scored) {
  await deps.writes.record(skipOf({ ...entryOfRow(row), ...scored }, reason)).catch(() => {});
}

/** A failed batch request: recorded (key null, so the next sweep may try again), never committed. */
async function recordFailed(deps: PollDeps, row: Row, why: string, scored?: Scored) {
  await finish(deps, row, 'failed', why);
  await deps.writes
    .record(failureOf({ ...entryOfRow(row), ...scored }, why, 'batch summary failed'))
    .catch((error: unknown) => deps.logger.warn({ err: error }, 'could not record a failed batch'));
}
