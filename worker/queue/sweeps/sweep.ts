/**
 * Scheduled sweeps, the safety net for events that never arrive: find the sessions over their
 * trigger whose events were lost, and enqueue one compaction job for each. The scan walks
 * `sessions` in keyset order (`(tenant_id, id) > (last page's last)`, never OFFSET) through a
 * partial covering index, one page at a time, so its memory stays flat however many sessions there
 * are. Each job's idempotency key derives from the session's compaction version: a sweep repeated,
 * or overlapping with events, never compacts one version twice.
 */

import { createHash } from 'node:crypto';
import type { Queue, Worker } from 'bullmq';
import type { Db } from '../../../producer/postgres/db.ts';
import type { TenantBacklog } from '../../../producer/queue/tenant-backlog.ts';
import {
  admit,
  contextTokens,
  type GateState,
  overTrigger,
  resolvePolicy,
} from '../../../shared/policy/policy.ts';
import {
  COMPACTION_QUEUE,
  DEFAULT_JOB_OPTIONS,
  deduplicationIdOf,
  jobOptionsFor,
  SWEEP_COMPACTION,
  type SweepCompactionJob,
} from '../../../shared/protocol/events.ts';
import type { WorkerMetrics } from '../../observability/metrics.ts';
import type { Policies } from '../../postgres/policies.ts';
import { PolicyCache } from '../../postgres/policy-cache.ts';
import { liveSessionPages, type SweepRow } from '../../postgres/sweep-scan.ts';
import { runAll, type Services } from '../../runtime/services.ts';
import { pollBatches } from '../batches/batches.ts';
import { createAppliedHooks } from '../session-events/applied-hooks.ts';
import { retryOnConflict } from './conflict-retry.ts';
import { runRetention } from './retention.ts';

/** BullMQ queue of the sweep job itself (the compactions it finds go on the compaction queue). */
export const SWEEP_QUEUE = 'compaction-sweep';
/** Id of the job scheduler: one per deployment, however many workers upsert it. */
export const SWEEP_SCHEDULER_ID = 'compactor-sweep';
/** Id of the scheduler that submits and collects message batches (with an Anthropic key only). */
export const BATCH_SCHEDULER_ID = 'compactor-batches';

/** A session a sweep found over its trigger. */
export interface DueSession {
  tenantId: string;
  sessionId: string;
  compactionVersion: number;
  reason: string;
}

export interface SweepResult {
  scanned: number;
  due: number;
  /** Jobs added (0 on a dry run; duplicates of waiting jobs are absorbed by BullMQ). */
  enqueued: number;
  ms: number;
  /** The first due sessions found (at most 100), for `compactor sweep` to print. */
  sample: DueSession[];
}

export interface SweepOptions {
  /** Rows per page. Default 1,000. */
  pageSize?: number;
  /** Wall clock, ms since the epoch. */
  now?: () => number;
  /** Only report; enqueue nothing. */
  dryRun?: boolean;
  /** Called once per page with the rows scanned so far (progress, benchmarks). */
  onPage?: (scanned: number) => void;
}

type Row = SweepRow;

/**
 * Where a sweep enqueues: the compaction queue and the tenants' backlog counts beside it (a
 * producer has both).
 */
export interface SweepTarget {
  queue: Queue;
  backlog: TenantBacklog;
}

/**
 * Scans every live session once and enqueues a compaction for each one over its trigger.
 * @param target the compaction queue and its backlog counts (null on a dry run).
 */
export async function runSweep(
  db: Db,
  target: SweepTarget | null,
  options: SweepOptions = {},
): Promise<SweepResult> {
  const started = performance.now();
  const pageSize = options.pageSize ?? 1_000;
  const now = options.now ?? Date.now;
  const policies = new PolicyCache(db);
  const result: SweepResult = { scanned: 0, due: 0, enqueued: 0, ms: 0, sample: [] };
  for await (const page of liveSessionPages(db, pageSize)) {
    result.scanned += page.length;
    const due: DueSession[] = [];
    for (const row of page) {
      const found = await dueSession(row, await policies.get(row.tenant_id, row.agent_id), now());
      if (found) due.push(found);
    }
    result.due += due.length;
    for (const d of due) if (result.sample.length < 100) result.sample.push(d);
    if (target && !options.dryRun && due.length > 0)
      result.enqueued += await enqueue(target.queue, target.backlog, due);
    options.onPage?.(result.scanned);
  }
  result.ms = performance.now() - started;
  return result;
}

/** Whether one session is over a trigger a sweep should act on (a real limit, not "no trigger"). */
async function dueSession(row: Row, policies: Policies, now: number): Promise<DueSession | null> {
  const policy = resolvePolicy(undefined, policies.agent, policies.tenant);
  const state: GateState = {
    messageCount: row.message_count,
    tokenCount: Number(row.token_count),
    contextWindow: row.context_window,
    lastCompactedAt: row.last_compacted_at === null ? null : new Date(row.last_compacted_at).getTime(),
    lastSeq: Number(row.last_seq),
    compactionVersion: row.compaction_version,
    stormGuardSeq: row.storm_guard_seq === null ? null : Number(row.storm_guard_seq),
    childSessionId: null,
    reportedInputTokens: row.reported_input_tokens,
    reportedTokenCount: row.reported_token_count === null ? null : Number(row.reported_token_count),
  };
  if (!overTrigger(policy.triggers, state.contextWindow, state.messageCount, contextTokens(state)))
    return null;
  const decision = admit({ trigger: 'sweep' }, policy, state, now);
  if (!decision.fire) return null;
  return {
    tenantId: row.tenant_id,
    sessionId: row.id,
    compactionVersion: row.compaction_version,
    reason: decision.reason,
  };
}

/**
 * Adds one job per due session, each at its tenant's fair priority (producer/redis/tenant-backlog.ts);
 * returns how many BullMQ accepted. A job coalesced into one already waiting is counted out again.
 */
async function enqueue(queue: Queue, backlog: TenantBacklog, due: DueSession[]): Promise<number> {
  const priorities: number[] = [];
  for (const d of due) priorities.push(await backlog.take(d.tenantId));
  const jobs = due.map((d, i) => {
    const data: SweepCompactionJob = {
      eventId: sweepJobIdOf(d),
      tenantId: d.tenantId,
      sessionId: d.sessionId,
      expectedVersion: d.compactionVersion,
    };
    return {
      name: SWEEP_COMPACTION,
      data,
      opts: {
        // The queue's own retention (jobOptionsFor its backend) over the defaults.
        ...DEFAULT_JOB_OPTIONS,
        ...queue.defaultJobOptions,
        jobId: data.eventId,
        priority: priorities[i] ?? 1,
        deduplication: { id: deduplicationIdOf(d), keepLastIfActive: true },
      },
    };
  });
  const added = await queue.addBulk(jobs);
  for (const [i, job] of added.entries()) {
    const d = due[i];
    if (d && job.id !== jobs[i]?.data.eventId) await backlog.release(d.tenantId);
  }
  return added.length;
}

/**
 * A BullMQ-safe job id per session and version (ids may hold characters BullMQ refuses, like `:`):
 * `sweep-<24 hex of sha256(tenant, session)>-v<version>`.
 */
export function sweepJobIdOf(d: Pick<DueSession, 'tenantId' | 'sessionId' | 'compactionVersion'>): string {
  const hash = createHash('sha256').update(`${d.tenantId}\u0000${d.sessionId}`).digest('hex').slice(0, 24);
  return `sweep-${hash}-v${d.compactionVersion}`;
}

/**
 * Runs scheduled sweeps in this process: upserts the job scheduler (one per deployment, however
 * many workers start; `sweepEveryMs` 0 removes it) and starts a sweep worker of concurrency 1. Each
 * sweep enqueues the due compactions, then runs the retention pass (worker/queue/sweeps/retention.ts).
 * @param options.metrics observes the fidelity of batch summaries (`compactor_summary_fidelity`).
 * @returns `close()`, which stops the sweep worker and its queues (every step runs).
 */
export async function startSweepService(
  services: Services,
  options: { metrics?: Pick<WorkerMetrics, 'summaryFidelity'> } = {},
): Promise<{ close(): Promise<void> }> {
  const { config, logger } = services;
  const { queues } = services;
  const link = queues.link();
  const applied = createAppliedHooks(services);
  const sweepQueue = new queues.Queue(SWEEP_QUEUE, link.options);
  const compactionQueue = new queues.Queue(COMPACTION_QUEUE, {
    ...link.options,
    defaultJobOptions: jobOptionsFor(queues.kind),
  });
  // Without a listener, BullMQ prints each reconnect attempt's error as a raw stack on stderr.
  services.queueState.watch(sweepQueue, 'sweep queue');
  services.queueState.watch(compactionQueue, 'compaction queue');
  let worker: Worker | undefined;
  // Workers starting together upsert the same schedulers: on the PostgreSQL backend two upserts
  // can deadlock, and the one Postgres aborts runs again.
  if (config.sweepEveryMs > 0) {
    await retryOnConflict(() =>
      sweepQueue.upsertJobScheduler(SWEEP_SCHEDULER_ID, { every: config.sweepEveryMs }, { name: 'sweep' }),
    );
  } else {
    await retryOnConflict(() => sweepQueue.removeJobScheduler(SWEEP_SCHEDULER_ID));
  }
  const { batches } = services;
  if (batches) {
    await retryOnConflict(() =>
      sweepQueue.upsertJobScheduler(BATCH_SCHEDULER_ID, { every: config.batchPollMs }, { name: 'batches' }),
    );
  } else {
    await retryOnConflict(() => sweepQueue.removeJobScheduler(BATCH_SCHEDULER_ID));
  }
  if (config.sweepEveryMs > 0 || batches) {
    worker = new queues.Worker(
      SWEEP_QUEUE,
      async (job) => {
        if (job.name === 'batches' && batches) {
          const polled = await pollBatches({
            db: services.database.db,
            reads: services.reads,
            writes: services.writes,
            batches,
            logger,
            onApplied: (row, checkpoint) => applied.onApplied(row, checkpoint),
            onFidelity: options.metrics?.summaryFidelity,
          });
          logger.info(polled, 'message batches polled');
          return polled;
        }
        const result = await runSweep(services.database.db, {
          queue: compactionQueue,
          backlog: services.backlog,
        });
        logger.info(
          { scanned: result.scanned, due: result.due, enqueued: result.enqueued, ms: Math.round(result.ms) },
          'sweep done',
        );
        const retention = await runRetention(services.database.db);
        if (retention.checked > 0) {
          logger.info(
            {
              checked: retention.checked,
              sessions: retention.sessions,
              messages: retention.messages,
              tokens: retention.tokens,
              ms: Math.round(retention.ms),
            },
            'retention pass done',
          );
        }
        return {
          scanned: result.scanned,
          due: result.due,
          enqueued: result.enqueued,
          expiredSessions: retention.sessions,
          expiredMessages: retention.messages,
        };
      },
      { ...link.options, concurrency: 1 },
    );
    services.queueState.watch(worker, 'sweep worker');
  }
  let closing: Promise<void> | undefined;
  return {
    close: () => {
      closing ??= runAll(logger, [
        async () => worker?.close(),
        () => applied.close(),
        () => sweepQueue.close(),
        () => compactionQueue.close(),
        () => link.close(),
      ]);
      return closing;
    },
  };
}
