/**
 * The ports of the compaction pipeline: what it needs from the outside world, in its own terms.
 * The pipeline imports these interfaces and nothing that talks to Postgres, Redis or an LLM; the
 * adapters (Postgres reads and fenced writes, the Redis lease, the summarizers) implement them,
 * and the runtime hands the pipeline the adapters it built.
 */

import type { Message, MessageMeta } from '../../shared/contract/message.ts';
import type { CompactPlan, Plan, SessionSnapshot } from '../../shared/planning/plan.ts';
import type { GateState, Mode, Policy } from '../../shared/policy/policy.ts';
import type { CompactionRow } from '../../shared/postgres/schema.ts';
import type { Strategy } from '../../shared/strategies/index.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import type { SummaryUsage } from '../../shared/summary/summarizer.ts';

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

/** What a ledger row says about who asked and why. */
export interface LedgerContext {
  tenantId: string;
  sessionId: string;
  /** Unique per effect; null only for `failed` rows. */
  idempotencyKey: string | null;
  eventId: string | null;
  trigger: 'event' | 'sweep' | 'manual';
  strategy: string;
}

/** The summary to write with a `summarize` compaction. */
export interface SummaryToWrite {
  checkpoint: Checkpoint;
  /** Rendered text of the summary message. */
  text: string;
  /** Estimated tokens of `text`. */
  tokenCount: number;
  summarizer: string;
  usage: SummaryUsage;
}

/** A plan to apply under the fence. */
export interface ApplyInput extends LedgerContext {
  plan: CompactPlan;
  /** compaction_version read with the snapshot: the fencing token. */
  expectedVersion: number;
  summary: SummaryToWrite | null;
  /** The ledger row's reason, if any (e.g. a fallback). */
  note?: string | undefined;
  /** `inPlace` (default) rewrites the session; `newSession` writes the result to a child session. */
  mode?: Mode | undefined;
  /** Whether the session would still be over its trigger with these counts (messages, tokens). */
  stillOverTrigger?: ((messages: number, tokens: number) => boolean) | undefined;
  /** Time spent before apply (snapshot, plan, summary), ms. */
  durationMs: number;
}

/** A compaction that needs no LLM call, read, planned and applied under the row lock. */
export interface UnderLockInput extends LedgerContext {
  planStrategy: Strategy;
  mode?: Mode | undefined;
  note?: string | undefined;
  stillOverTrigger?: ((messages: number, tokens: number) => boolean) | undefined;
  /** compaction_version as the admission gate read it. */
  seenVersion: number;
  now: () => number;
  durationMs: () => number;
  onStage?: ((stage: 'snapshot' | 'plan' | 'apply', ms: number) => void) | undefined;
}

/** Result of a write: `duplicate` when the idempotency key had already been used. */
export type ApplyResult = { status: 'applied' | 'duplicate'; row: CompactionRow };

/** A ledger row that changes no message: a `skipped` decision or a `failed` attempt. */
export interface RecordInput extends LedgerContext {
  status: 'skipped' | 'failed';
  reason: string;
  error?: string | null;
  durationMs: number;
  usage?: SummaryUsage | undefined;
  summarizer?: string | null;
  stormGuard?: boolean;
  counts?: { messageCount: number; tokenCount: number };
}

/** Reads of one session, tenant-scoped. */
export interface SessionReads {
  /** @throws {SessionNotFoundError} if the tenant has no such session. */
  loadGate(tenantId: string, sessionId: string, idempotencyKey?: string | null): Promise<Gate>;
  /** @throws {SessionNotFoundError} if the tenant has no such session. */
  loadSnapshot(tenantId: string, sessionId: string): Promise<Snapshot>;
  loadMessages(tenantId: string, sessionId: string, seqs: number[]): Promise<Message[]>;
  pagedMessages(tenantId: string, sessionId: string, seqs: number[]): AsyncIterable<Message[]>;
  findByKey(idempotencyKey: string): Promise<CompactionRow | undefined>;
}

/** Writes, each checked at write time against the session's version and the idempotency key. */
export interface FencedWrites {
  apply(input: ApplyInput): Promise<ApplyResult>;
  compactUnderLock(input: UnderLockInput): Promise<ApplyResult & { plan: Plan | null }>;
  record(input: RecordInput): Promise<ApplyResult>;
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
