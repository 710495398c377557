/**
 * The ports of the compaction pipeline: what it needs from the outside world, in its own terms.
 * The pipeline imports these interfaces and nothing that talks to Postgres, Redis or an LLM; the
 * adapters (Postgres reads and fenced writes, the Redis lease, the summarizers) implement them,
 * and the runtime hands the pipeline the adapters it built.
 *
 * A write is a {@link Change}: data the pipeline derived from a pure plan (which effects, which
 * ledger entry, which fence). The Postgres adapter executes it blindly under the session's row
 * lock; the only decisions it makes are the ones that must be made at write time — is the
 * idempotency key already used, is the session still at the version the plan was made at.
 */

import type { ContextRead } from '../../producer/postgres/context-query.ts';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import type { StoredContent } from '../../shared/contract/blocks.ts';
import type { Message, MessageMeta } from '../../shared/contract/message.ts';
import type { FidelityCheck } from '../../shared/fidelity/score.ts';
import type { Effect } from '../../shared/planning/effects.ts';
import type { SessionSnapshot } from '../../shared/planning/types.ts';
import type { BudgetAction, BudgetDecision, BudgetLimit, Spend } from '../../shared/policy/budget.ts';
import type { PaybackPrediction } from '../../shared/policy/payback.ts';
import type { GateState, Mode, Policy, Triggers } from '../../shared/policy/policy.ts';
import type { SummarizerName } from '../../shared/strategies/index.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import type { Summarizer, SummaryUsage } from '../../shared/summary/summarizer.ts';

/** The admission check's input: the session's state and the policies that may apply. */
export interface Gate {
  state: GateState;
  /** Whether a ledger row already holds the request's idempotency key (a duplicate). */
  keyUsed: boolean;
  agentPolicy: Policy | null;
  tenantPolicy: Policy | null;
}

/** A consistent read of one session: its row and the metadata of its live messages. */
export interface Snapshot extends SessionSnapshot {
  messageCount: number;
  tokenCount: number;
  checkpoint: Checkpoint | null;
  /** Live messages with seq ≤ snapshotSeq, ascending, without content. */
  messages: MessageMeta[];
}

/**
 * Who asked for a compaction and how it went, as the ledger records it. The adapter adds what only
 * the write knows (counters before and after, the new version, the time).
 */
export interface LedgerEntry {
  tenantId: string;
  sessionId: string;
  /** Unique per effect; null only for `failed` rows. */
  idempotencyKey: string | null;
  eventId: string | null;
  trigger: 'event' | 'sweep' | 'manual';
  /** The strategy's name, or `policy` when a failure came before a policy was resolved. */
  strategy: string;
  /** The strategy's summary instructions, or null (none, or a strategy that writes no summary). */
  instructions: string | null;
  mode: Mode;
  /** Why: a skip's reason, a fallback's note, a failure's summary. */
  reason: string | null;
  /** A failed attempt's error message. */
  error: string | null;
  summarizer: string | null;
  usage: SummaryUsage | null;
  /** Time spent on the request before the write, ms. */
  durationMs: number;
  /**
   * Whether thinking signed before the change stays valid after it, and why (ledger
   * `thinking_preserved`, `thinking_note`). Absent: it does not.
   */
  thinking?: { preserved: boolean; note: string | null } | undefined;
  /**
   * The summary's fidelity check (ledger `fidelity`, `fidelity_parts`, `lost`): set on every row
   * of a summary that was scored, committed or not. Absent: no summary was scored.
   */
  fidelity?: FidelityCheck | undefined;
  /**
   * The compaction's predicted payback (ledger `payback_*`), made before it: set on every row of a
   * compact plan, applied or skipped for not paying. Absent: no compaction was planned.
   */
  payback?: PaybackPrediction | undefined;
}

/** The prompt size an agent reported with an event (`session.run.completed`). */
export interface ContextReport {
  tenantId: string;
  sessionId: string;
  /** The event's id: the request counts once towards a measurement; null: not counted. */
  eventId: string | null;
  inputTokens: number;
  cacheReadTokens?: number | undefined;
}

/** A compaction to write: effects, the fence they are valid under, and the ledger entry. */
export interface Change {
  entry: LedgerEntry;
  /** compaction_version the plan was made at: the fencing token. */
  expectedVersion: number;
  /** Highest seq that leaves (recorded in the ledger). */
  cutoffSeq: number;
  /** Seq of the summary message, or null without one. */
  summarySeq: number | null;
  /** Executed in order, in one transaction. */
  effects: Effect[];
  /**
   * The session's triggers: when the session is still over them after the change, the storm guard
   * is set so that events stop retrying a compaction that cannot help. Data, evaluated at write
   * time with the counters the write produced. Null for a change that may not set the guard (a
   * manual run with its own strategy, a batch's summary collected later): the write clears it.
   */
  guard: StormGuardRule | null;
  /**
   * The budget reservation of the summary this change writes: deleted in the transaction that
   * writes the ledger row, whose `cost_usd` takes its place. Absent: none was made.
   */
  reservationId?: string | null | undefined;
}

/** The triggers a change is measured against after it is written. */
export interface StormGuardRule {
  triggers: Triggers;
  /** The session's context window in tokens, for `contextFraction`. */
  contextWindow: number | null;
}

/** A decision that changes no message: a `skipped` decision, or a `failed` attempt (no key). */
export interface NoChange {
  entry: LedgerEntry;
  status: 'skipped' | 'failed';
  /** Set the storm guard: a compaction could not bring the session under its trigger. */
  stormGuard: boolean;
  /** The session's counters as the caller just read them (absent: the adapter reads them). */
  counts?: { messageCount: number; tokenCount: number } | undefined;
  /** As {@link Change.reservationId}: a skip after a paid summary replaces its reservation too. */
  reservationId?: string | null | undefined;
}

/** What the pipeline decides about a snapshot read under the row lock. */
export type Decision = { change: Change } | { noChange: NoChange };

/**
 * The ledger row a write left: `applied`, `skipped` or `failed` as its status says, or
 * `duplicate` when the idempotency key had already been used (`row` is then the earlier one).
 */
export interface WriteResult {
  status: 'applied' | 'skipped' | 'failed' | 'duplicate';
  row: CompactionRow;
  /**
   * The checkpoint this write set, when it applied a change: the summary's (null when the change
   * wrote none). Absent for the other statuses, whose row the session may have moved past since.
   */
  checkpoint?: Checkpoint | null | undefined;
}

/** Reads of one session, tenant-scoped. */
export interface SessionReads {
  /**
   * The session's counters, lineage, storm guard and policies, and whether `idempotencyKey` is
   * already in the ledger; no lock.
   * @throws {SessionNotFoundError} if the tenant has no such session.
   */
  loadGate(tenantId: string, sessionId: string, idempotencyKey?: string | null): Promise<Gate>;
  /** @throws {SessionNotFoundError} if the tenant has no such session. */
  loadSnapshot(tenantId: string, sessionId: string): Promise<Snapshot>;
  /**
   * The full messages of `seqs` (ascending), as a summary must read them; seqs no longer live are
   * absent. A live message that an applied compaction rewrote in place (a cleared tool result,
   * dropped thinking) comes back as its original, the earliest archived version of its seq: a
   * summary covers what the agent saw, not the placeholders. Every other message as it is live.
   */
  loadMessages(tenantId: string, sessionId: string, seqs: number[]): Promise<Message[]>;
  /**
   * The stored content (`content_blocks`, as the agent wrote it) of the live messages of `seqs`, by
   * seq; seqs no longer live are absent.
   */
  loadContents(tenantId: string, sessionId: string, seqs: number[]): Promise<Map<number, StoredContent>>;
  /**
   * The same as {@link SessionReads.loadMessages} (originals included), read a page at a time as
   * the consumer asks, so a long history is never whole.
   */
  pagedMessages(tenantId: string, sessionId: string, seqs: number[]): AsyncIterable<Message[]>;
  /** The tenant's ledger row holding `idempotencyKey`, if any (keys are unique per tenant). */
  findByKey(tenantId: string, idempotencyKey: string): Promise<CompactionRow | undefined>;
  /**
   * The session's context read as `loadContext` reads it, limited to the live rows of `seqs` and
   * the system rows below them, with the session's declared tools: what an
   * `anthropic-compaction` summary sends as its compaction request.
   * @throws {SessionNotFoundError} if the tenant has no such session.
   */
  loadConversation(tenantId: string, sessionId: string, seqs: number[]): Promise<ContextRead>;
}

/** Where a locked read starts: the session, the request's key and the version the gate saw. */
export interface LockedRead {
  tenantId: string;
  sessionId: string;
  idempotencyKey: string;
  /** compaction_version as the admission gate read it. */
  seenVersion: number;
  /**
   * For a strategy that reads content (its unit's `reads`): the seqs whose stored content to read
   * under the lock, chosen from the locked metadata; the snapshot then carries them as `contents`.
   */
  contentSeqs?: ((messages: MessageMeta[]) => number[]) | undefined;
}

/** Writes, each checked at write time against the session's version and the idempotency key. */
export interface FencedWrites {
  /**
   * Executes `change` in one transaction under the session's row lock.
   * @returns the new ledger row, or the earlier one when its key is already used (`duplicate`).
   * @throws {FenceError} if the session is no longer at `change.expectedVersion`, or the messages
   *   the plan saw can no longer leave (re-plan and retry).
   * @throws {SessionNotFoundError} if the session vanished.
   */
  apply(change: Change): Promise<WriteResult>;
  /**
   * Reads the session under its row lock, hands the snapshot to `decide` (pure) and writes what it
   * decides, all in one transaction: for changes that need no LLM call, so no lease is needed. The
   * snapshot carries the id the ledger row will take if `decide` returns a change, and the
   * contents `read.contentSeqs` asked for.
   * @throws as {@link FencedWrites.apply}.
   */
  applyUnderLock(read: LockedRead, decide: (snapshot: Snapshot) => Decision): Promise<WriteResult>;
  /** Writes a ledger row that changes no message (a skip under its key returns the earlier row). */
  record(noChange: NoChange): Promise<WriteResult>;
  /**
   * Records the context size the agent reported for the session (tokens, as the Messages API
   * counted its last request), with the session's estimate at this moment, for the token
   * triggers. Not fenced: a measurement, the latest wins; a compaction clears it. An unknown
   * session is left alone (the gate reports it). In the same transaction, the request counts once
   * (by its event id) towards the measured payback of the session's last applied compaction.
   */
  reportContextTokens(report: ContextReport): Promise<void>;
}

/** A summary to check against the budgets in force and reserve, before its LLM call. */
export interface BudgetRequest {
  tenantId: string;
  sessionId: string;
  /** The session's agent (agent budgets sum over its sessions), or null. */
  agentId: string | null;
  /** The limits in force, most specific first (`budgetLimits`); never empty. */
  limits: BudgetLimit[];
  /** The summary's estimated cost ceiling, USD (`estimatedCostUsd`). */
  estimateUsd: number;
  /** Wall clock, ms since the epoch: which UTC day and month the spend is summed over. */
  now: number;
}

/** What {@link Budgets.reserve} found: the decision, and the reservation when it allowed the summary. */
export interface BudgetCheck {
  decision: BudgetDecision;
  /** Set when the decision allowed the summary: release it if no ledger row replaces it. */
  reservationId: string | null;
}

/**
 * Spend budgets over the ledger. The check and the reservation are one atomic step per tenant, so
 * concurrent workers cannot both fit in what is left of a budget.
 */
export interface Budgets {
  /**
   * Sums the spend the limits count (ledger `cost_usd` in the request's UTC day and month, plus
   * live reservations), hands it to `decide` (pure), and reserves `estimateUsd` when it allows,
   * all serialized per tenant.
   */
  reserve(request: BudgetRequest, decide: (spend: Spend) => BudgetDecision): Promise<BudgetCheck>;
  /**
   * Deletes the tenant's reservation (the summary failed or was not written); one already gone is
   * fine.
   */
  release(tenantId: string, reservationId: string): Promise<void>;
}

/** A held lease. `signal` aborts when the lease is lost (expired or taken), so work can stop early. */
export interface Lease {
  readonly key: string;
  readonly token: string;
  readonly signal: AbortSignal;
  /** Releases the lease if still ours; never throws. */
  release(): Promise<void>;
}

/** Per-session leases: they save a second LLM call, they do not keep data correct. */
export interface Leases {
  /** The session's lease, or null when another worker holds it. */
  acquire(tenantId: string, sessionId: string): Promise<Lease | null>;
}

/** The pipeline's clocks: it reads no time but through them, so a test can set it. */
export interface Clock {
  /** Monotonic-enough time in ms, for durations. */
  now(): number;
  /**
   * Wall-clock time, ms since the epoch: for the minimum interval between compactions and the UTC
   * day and month a spend budget sums over.
   */
  wall(): number;
}

/**
 * The summarizers this process can run: one set, for every route a summary takes. Which one writes
 * a given summary is the pipeline's choice (the strategy's `summarizer`, else `primary`), and every
 * stand-in is the fallback policy's (./fallback.ts).
 */
export interface Summarizers {
  /**
   * Writes the summaries of strategies that name no summarizer, or one this process cannot run
   * (`anthropic` with an API key, else `extractive`).
   */
  primary: Summarizer;
  /**
   * The summarizers a strategy may name (`summarizer`) that this process can run. Absent: a
   * strategy's choice is not looked at and `primary` writes every summary (as on a last attempt's
   * fallback run).
   */
  named?: Partial<Record<SummarizerName, Summarizer>> | undefined;
  /**
   * The free, offline summarizer (the extractive one) that stands in for a paid summary a budget
   * refused (`onExceeded: 'extractive'`), for a summary under `minFidelity` (`onLowFidelity:
   * 'fallback'`) and for a last attempt that failed (`fallback: 'extractive'`). Absent: those
   * routes skip or fail instead, and the ledger row says why.
   */
  offline?: Summarizer | undefined;
}

/** The timed stages of one run. */
export type Stage = 'admission' | 'lease' | 'snapshot' | 'plan' | 'summarize' | 'apply';

/**
 * What the pipeline tells an observer (metrics, benchmarks): how long a stage took (`ms`), a plan
 * the fence rejected (the pipeline then plans again), the fidelity score of a summary made
 * (committed or not, shared/fidelity/score.ts), and a summary a budget refused, with what was done
 * instead and the limit that refused it.
 */
export type PipelineEvent =
  | { type: 'stage'; stage: Stage; ms: number }
  | { type: 'fenceRejected' }
  | { type: 'fidelity'; summarizer: string; score: number }
  | { type: 'budgetExceeded'; action: BudgetAction; limit: BudgetLimit };

/** Receives the pipeline's events as they happen; must not throw (it is not awaited). */
export interface PipelineObserver {
  observe(event: PipelineEvent): void;
}
