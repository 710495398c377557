/**
 * Prometheus metrics (prom-client) of the worker and the dashboard. Each process builds its own
 * registry (never prom-client's global one), so several workers in one test process do not collide.
 * Labels are low-cardinality on purpose: no tenant, session or job ids (those go to the logs).
 *
 * Exported names (units in the name, as Prometheus wants):
 * - `compactor_jobs_total{outcome,trigger}`: settled jobs; outcome applied | skipped | duplicate |
 *   batched (summary queued for a message batch) | failed (its last attempt failed, or it failed
 *   for good at once)
 * - `compactor_job_retries_total{trigger}`: attempts that failed and will be retried
 * - `compactor_compaction_duration_seconds{outcome}`: histogram, one job attempt, start to settle
 * - `compactor_llm_latency_seconds{summarizer,result}`: histogram, one summary (all its LLM calls)
 * - `compactor_llm_tokens_total{summarizer,model,type}`: type input | output | cache_read | cache_write
 * - `compactor_llm_cost_usd_total{summarizer,model}`
 * - `compactor_tokens_saved_total`, `compactor_messages_archived_total`: by applied compactions
 * - `compactor_lease_conflicts_total`: jobs put back because another worker held the session
 * - `compactor_fence_rejections_total`: plans discarded at apply because the session moved
 * - `compactor_budget_exceeded_total{action,scope,period}`: summaries a spend budget refused;
 *   action extractive (summarized offline instead) | skip; scope tenant | agent; period daily |
 *   monthly (no tenant label: the ledger row's reason names the session and the figures)
 * - `compactor_summary_fidelity{summarizer}`: histogram, the fidelity score (0..1) of each summary
 *   made (shared/fidelity/score.ts), committed or not
 * - `compactor_queue_depth{queue,state}`: BullMQ job counts, read from Redis at scrape time
 * - `compactor_dashboard_auth_failures_total{reason}`: dashboard only
 * - Node's default process metrics (`process_*`, `nodejs_*`).
 */
import type { JobState, Queue } from 'bullmq';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import type { BudgetAction, BudgetLimit } from '../../shared/policy/budget.ts';
import type { Summarizer, SummaryUsage } from '../../shared/summary/summarizer.ts';
import { withTimeout } from './health.ts';

/** What a settled job did. */
export type JobOutcome = 'applied' | 'skipped' | 'duplicate' | 'batched' | 'failed';

/** A BullMQ queue as the depth gauge needs it. */
export type CountedQueue = Pick<Queue, 'name' | 'getJobCounts'>;

const QUEUE_STATES: JobState[] = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'failed',
  'completed',
];

/** Seconds a scrape waits for Redis before leaving the queue depth out. */
const QUEUE_COUNT_TIMEOUT_MS = 2_000;

/** The metrics every compactor process exports: Node's defaults and the queue depth. */
export interface BaseMetrics {
  readonly registry: Registry;
  /** Adds queues whose job counts are read on each scrape. */
  watchQueues(queues: CountedQueue[]): void;
}

/** The worker's metrics; the processor and the instrumented adapters call these. */
export interface WorkerMetrics extends BaseMetrics {
  /**
   * A job settled: with a ledger row, or `batched` (its summary waits for a message batch; no row
   * yet). `seconds` is the attempt's wall time.
   */
  jobSettled(
    outcome: Exclude<JobOutcome, 'failed'>,
    trigger: string,
    seconds: number,
    row: SettledRow | null,
  ): void;
  /** An attempt failed; `final` when BullMQ will not retry it. */
  jobFailed(final: boolean, trigger: string, seconds: number): void;
  leaseConflict(): void;
  fenceRejected(): void;
  /** A spend budget refused a paid summary; `action` is what was done instead. */
  budgetExceeded(action: BudgetAction, limit: Pick<BudgetLimit, 'scope' | 'period'>): void;
  /** The fidelity score (0..1) of one summary, committed or not. */
  summaryFidelity(summarizer: string, score: number): void;
  /** One summarizer call: its wall time, and its usage when it succeeded. */
  summarized(summarizer: string, seconds: number, usage: LlmUsage | null): void;
}

/** The dashboard's metrics. */
export interface DashboardMetrics extends BaseMetrics {
  /** A request refused for its credentials: `missing`, `invalid` or `forbidden`. */
  authFailed(reason: 'missing' | 'invalid' | 'forbidden'): void;
}

/** The ledger fields the metrics read from a settled job. */
export type SettledRow = Pick<CompactionRow, 'tokensBefore' | 'tokensAfter' | 'messagesArchived'>;

/** Token counts and cost of one summary, as the ledger records them (its wall time is not read). */
export type LlmUsage = Omit<SummaryUsage, 'llmMs'>;

function createBase(): BaseMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const queues: CountedQueue[] = [];
  new Gauge({
    name: 'compactor_queue_depth',
    help: 'BullMQ jobs per queue and state, read from Redis at scrape time',
    labelNames: ['queue', 'state'],
    registers: [registry],
    // Every worker process of `compactor worker --processes N` reads the same queues: their
    // aggregate (prom-client's AggregatorRegistry) takes one reading, not the sum of N.
    aggregator: 'max',
    async collect() {
      this.reset();
      await Promise.all(
        queues.map(async (queue) => {
          const counts = await withTimeout(queue.getJobCounts(...QUEUE_STATES), QUEUE_COUNT_TIMEOUT_MS).catch(
            () => null,
          );
          // Redis did not answer: leave this queue out of the scrape rather than report zeros.
          if (!counts) return;
          for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
        }),
      );
    },
  });
  return { registry, watchQueues: (more) => queues.push(...more) };
}

/** The worker's registry and recorders. */
export function createWorkerMetrics(): WorkerMetrics {
  const base = createBase();
  const registers = [base.registry];
  const jobs = new Counter({
    name: 'compactor_jobs_total',
    help: 'Settled compaction jobs by outcome (applied, skipped, duplicate, batched, failed) and trigger',
    labelNames: ['outcome', 'trigger'],
    registers,
  });
  const retries = new Counter({
    name: 'compactor_job_retries_total',
    help: 'Job attempts that failed and will be retried with backoff',
    labelNames: ['trigger'],
    registers,
  });
  const duration = new Histogram({
    name: 'compactor_compaction_duration_seconds',
    help: 'Wall time of one job attempt, from start to settle (or failure)',
    labelNames: ['outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers,
  });
  const llmLatency = new Histogram({
    name: 'compactor_llm_latency_seconds',
    help: 'Wall time of one summary (all its LLM calls), by summarizer and result (ok, error)',
    labelNames: ['summarizer', 'result'],
    buckets: [0.005, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160],
    registers,
  });
  const llmTokens = new Counter({
    name: 'compactor_llm_tokens_total',
    help: 'Tokens the LLM counted, by type (input, output, cache_read, cache_write)',
    labelNames: ['summarizer', 'model', 'type'],
    registers,
  });
  const llmCost = new Counter({
    name: 'compactor_llm_cost_usd_total',
    help: 'Cost of LLM summaries in US dollars',
    labelNames: ['summarizer', 'model'],
    registers,
  });
  const tokensSaved = new Counter({
    name: 'compactor_tokens_saved_total',
    help: 'Estimated tokens removed from live sessions by applied compactions',
    registers,
  });
  const archived = new Counter({
    name: 'compactor_messages_archived_total',
    help: 'Messages moved to the archive by applied compactions',
    registers,
  });
  const leaseConflicts = new Counter({
    name: 'compactor_lease_conflicts_total',
    help: 'Jobs put back to delayed because another worker held the session lease',
    registers,
  });
  const fenceRejections = new Counter({
    name: 'compactor_fence_rejections_total',
    help: 'Plans discarded at apply because the session changed since the snapshot',
    registers,
  });
  const budgetExceeded = new Counter({
    name: 'compactor_budget_exceeded_total',
    help: 'Paid summaries a spend budget refused, by what was done instead (extractive, skip), scope and period',
    labelNames: ['action', 'scope', 'period'],
    registers,
  });
  const fidelity = new Histogram({
    name: 'compactor_summary_fidelity',
    help: 'Fidelity score (0..1) of each summary against the messages it replaces, by summarizer',
    labelNames: ['summarizer'],
    buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1],
    registers,
  });
  return {
    ...base,
    summaryFidelity: (summarizer, score) => fidelity.observe({ summarizer }, score),
    budgetExceeded: (action, limit) =>
      budgetExceeded.inc({ action, scope: limit.scope, period: limit.period }),
    jobSettled(outcome, trigger, seconds, row) {
      jobs.inc({ outcome, trigger });
      duration.observe({ outcome }, seconds);
      if (outcome !== 'applied' || !row) return;
      const saved = (row.tokensBefore ?? 0) - (row.tokensAfter ?? 0);
      if (saved > 0) tokensSaved.inc(saved);
      if ((row.messagesArchived ?? 0) > 0) archived.inc(row.messagesArchived ?? 0);
    },
    jobFailed(final, trigger, seconds) {
      if (final) jobs.inc({ outcome: 'failed', trigger });
      else retries.inc({ trigger });
      duration.observe({ outcome: 'failed' }, seconds);
    },
    leaseConflict: () => leaseConflicts.inc(),
    fenceRejected: () => fenceRejections.inc(),
    summarized(summarizer, seconds, usage) {
      llmLatency.observe({ summarizer, result: usage ? 'ok' : 'error' }, seconds);
      if (!usage) return;
      const model = usage.model ?? 'none';
      const types: Array<[string, number]> = [
        ['input', usage.inputTokens],
        ['output', usage.outputTokens],
        ['cache_read', usage.cacheReadTokens],
        ['cache_write', usage.cacheWriteTokens],
      ];
      for (const [type, n] of types) if (n > 0) llmTokens.inc({ summarizer, model, type }, n);
      if (usage.costUsd > 0) llmCost.inc({ summarizer, model }, usage.costUsd);
    },
  };
}

/** The dashboard's registry and recorders. */
export function createDashboardMetrics(): DashboardMetrics {
  const base = createBase();
  const authFailures = new Counter({
    name: 'compactor_dashboard_auth_failures_total',
    help: 'Dashboard requests refused for their credentials (missing, invalid, forbidden)',
    labelNames: ['reason'],
    registers: [base.registry],
  });
  return { ...base, authFailed: (reason) => authFailures.inc({ reason }) };
}

/**
 * The summarizer, timed: each call's latency, tokens and cost go to `metrics`. Its name, `reads`
 * (a compaction summarizer is handed the conversation only when it says it reads it) and
 * `estimate` are kept.
 */
export function instrumentSummarizer(summarizer: Summarizer, metrics: WorkerMetrics): Summarizer {
  const { estimate, reads } = summarizer;
  return {
    name: summarizer.name,
    ...(reads ? { reads } : {}),
    ...(estimate ? { estimate: (input) => estimate.call(summarizer, input) } : {}),
    async summarize(input) {
      const started = performance.now();
      try {
        const result = await summarizer.summarize(input);
        metrics.summarized(summarizer.name, (performance.now() - started) / 1000, result.usage);
        return result;
      } catch (error) {
        metrics.summarized(summarizer.name, (performance.now() - started) / 1000, null);
        throw error;
      }
    },
  };
}
