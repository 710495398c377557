/**
 * In-memory implementations of the pipeline's ports (worker/pipeline/ports.ts), for unit tests of
 * the pipeline without a database: the session reads and fenced writes over sessions, messages, an
 * archive and a ledger held in maps ({@link MemoryStore}), the spend budgets with their
 * reservations ({@link MemoryBudgets}), per-session leases another worker can hold or take away
 * ({@link MemoryLeases}), and a clock the test sets ({@link ManualClock}). {@link memoryPipeline}
 * wires them into `PipelineDeps` with an observer that keeps every event.
 *
 * They keep the rules the Postgres adapters keep, as the ports state them: a write honours the
 * idempotency key (a key already in the ledger returns its row), checks the version fence
 * (`FenceError`), executes the change's effects (archive, continue in a child, write the summary,
 * rewrite in place; every planned seq must still be there), updates the counters and the storm
 * guard, and replaces the summary's budget reservation, all at once. The ledger rows are built by
 * the Postgres adapter's own pure row builders, so a row here holds what the table would.
 */
import { randomUUID } from 'node:crypto';
import type { ContextRead } from '../../producer/postgres/context-query.ts';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import { asAnthropicContent, contentFacts, type StoredContent } from '../../shared/contract/blocks.ts';
import { FenceError, SessionNotFoundError } from '../../shared/contract/errors.ts';
import type { Message, MessageMeta, Role } from '../../shared/contract/message.ts';
import type { Effect } from '../../shared/planning/effects.ts';
import { type BudgetDecision, budgetWindows, type Spend } from '../../shared/policy/budget.ts';
import { addMeasuredRequest, type PaybackInputs } from '../../shared/policy/payback.ts';
import { overTrigger, type Policy, type PolicyInput, policySchema } from '../../shared/policy/policy.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import type { Batching, PipelineDeps, QueuedSummary } from '../../worker/pipeline/deps.ts';
import type {
  BudgetCheck,
  BudgetRequest,
  Budgets,
  Change,
  Clock,
  ContextReport,
  Decision,
  FencedWrites,
  Gate,
  Lease,
  Leases,
  LockedRead,
  NoChange,
  PipelineEvent,
  SessionReads,
  Snapshot,
  Summarizers,
  WriteResult,
} from '../../worker/pipeline/ports.ts';
import type { EffectFacts } from '../../worker/postgres/effects.ts';
import { appliedRow, type LedgerValues, unchangedRow } from '../../worker/postgres/ledger.ts';
import type { LockedSession } from '../../worker/postgres/lock.ts';
import { MAX_MEASURED_REQUESTS } from '../../worker/postgres/payback.ts';
import { silentLogger } from './fixtures.ts';
import { metaOfContent } from './messages.ts';

/** A clock that moves only when told: `now` for durations, `wall` ms since the epoch. */
export class ManualClock implements Clock {
  constructor(
    private monotonic = 0,
    private epochMs = Date.UTC(2025, 5, 15, 12),
  ) {}

  now(): number {
    return this.monotonic;
  }

  wall(): number {
    return this.epochMs;
  }

  /** Moves both clocks on by `ms`. */
  advance(ms: number): void {
    this.monotonic += ms;
    this.epochMs += ms;
  }
}

/** One stored message: its metadata, its content as the agent wrote it, and its text rendering. */
interface StoredRow extends MessageMeta {
  content: StoredContent;
  text: string;
  contextVersion: number | null;
}

/** An archived message: the row as it left, the compaction it left with, and whether it was rewritten. */
interface ArchivedRow extends StoredRow {
  tenantId: string;
  sessionId: string;
  compactionId: string;
  rewritten: boolean;
}

/** One session as the `sessions` row and its live `messages` hold it. */
interface StoredSession {
  tenantId: string;
  sessionId: string;
  agentId: string | null;
  contextWindow: number | null;
  lastSeq: number;
  compactionVersion: number;
  checkpoint: Checkpoint | null;
  stormGuardSeq: number | null;
  childSessionId: string | null;
  parentSessionId: string | null;
  lastCompactedAt: number | null;
  reportedInputTokens: number | null;
  reportedTokenCount: number | null;
  tools: Array<Record<string, unknown>> | null;
  /** Live messages by seq. */
  messages: Map<number, StoredRow>;
}

/** A message to seed a session with: a role and content as an agent appends them. */
export interface SeedMessage {
  role: Role;
  content: StoredContent;
  pinned?: boolean;
}

/** What a session holds now, as a test asserts it. */
export interface SessionView {
  version: number;
  messageCount: number;
  tokenCount: number;
  checkpoint: Checkpoint | null;
  stormGuardSeq: number | null;
  childSessionId: string | null;
  /** The live messages, ascending: seq, role, kind and text. */
  messages: Array<{ seq: number; role: Role; kind: MessageMeta['kind']; text: string }>;
}

const key = (tenantId: string, sessionId: string) => `${tenantId}\u0000${sessionId}`;

/**
 * Sessions, their messages, the archive and the ledger, in maps: the pipeline's {@link SessionReads}
 * and {@link FencedWrites}. `budgets` is told of the reservations the writes replace.
 */
export class MemoryStore implements SessionReads, FencedWrites {
  /** The ledger, oldest first. */
  readonly ledger: CompactionRow[] = [];
  /** Archived messages, in the order they left. */
  readonly archive: ArchivedRow[] = [];
  private readonly sessions = new Map<string, StoredSession>();
  private readonly policies = new Map<string, Policy>();
  /** Runs once, before the next write's fence check (a concurrent writer, for a test). */
  private beforeWrite: Array<() => void> = [];

  constructor(
    private readonly clock: Clock,
    private readonly budgets: MemoryBudgets,
  ) {
    budgets.attach(this);
  }

  /** Creates a session holding `messages` at seqs 0, 1, ... */
  addSession(
    tenantId: string,
    sessionId: string,
    messages: SeedMessage[],
    options: { agentId?: string; contextWindow?: number } = {},
  ): void {
    const session: StoredSession = {
      tenantId,
      sessionId,
      agentId: options.agentId ?? null,
      contextWindow: options.contextWindow ?? null,
      lastSeq: -1,
      compactionVersion: 0,
      checkpoint: null,
      stormGuardSeq: null,
      childSessionId: null,
      parentSessionId: null,
      lastCompactedAt: null,
      reportedInputTokens: null,
      reportedTokenCount: null,
      tools: null,
      messages: new Map(),
    };
    this.sessions.set(key(tenantId, sessionId), session);
    this.append(tenantId, sessionId, messages);
  }

  /** Appends messages after the session's last seq, as the producer does. */
  append(tenantId: string, sessionId: string, messages: SeedMessage[]): void {
    const session = this.session(tenantId, sessionId);
    for (const message of messages) {
      const seq = ++session.lastSeq;
      session.messages.set(seq, rowOf(seq, message.role, message.content, message.pinned ?? false));
    }
  }

  /**
   * Sets the tenant's policy (`agentId`: the agent's), in its JSON form.
   * @throws {ZodError} for a policy `policySchema` refuses.
   */
  setPolicy(
    tenantId: string,
    policy: PolicyInput | Record<string, unknown>,
    agentId: string | null = null,
  ): void {
    this.policies.set(key(tenantId, agentId ?? ''), policySchema.parse(policy));
  }

  /** Runs `change` just before the next write checks its fence: another writer that got there first. */
  beforeNextWrite(change: () => void): void {
    this.beforeWrite.push(change);
  }

  /** Bumps the session's compaction version, as a compaction or restore by someone else does. */
  bumpVersion(tenantId: string, sessionId: string): void {
    this.session(tenantId, sessionId).compactionVersion++;
  }

  /** What the session holds now. @throws {SessionNotFoundError} for an unknown session. */
  view(tenantId: string, sessionId: string): SessionView {
    const session = this.session(tenantId, sessionId);
    const live = liveRows(session);
    return {
      version: session.compactionVersion,
      messageCount: live.length,
      tokenCount: sum(live.map((m) => m.tokenCount)),
      checkpoint: session.checkpoint,
      stormGuardSeq: session.stormGuardSeq,
      childSessionId: session.childSessionId,
      messages: live.map((m) => ({ seq: m.seq, role: m.role, kind: m.kind, text: m.text })),
    };
  }

  /** The session's ledger rows, oldest first. */
  rows(tenantId: string, sessionId: string): CompactionRow[] {
    return this.ledger.filter((r) => r.tenantId === tenantId && r.sessionId === sessionId);
  }

  /** The agent of a session, or null (for agent budgets). */
  agentOf(tenantId: string, sessionId: string): string | null {
    return this.sessions.get(key(tenantId, sessionId))?.agentId ?? null;
  }

  // SessionReads

  async loadGate(tenantId: string, sessionId: string, idempotencyKey: string | null = null): Promise<Gate> {
    const session = this.session(tenantId, sessionId);
    const live = liveRows(session);
    return {
      state: {
        messageCount: live.length,
        tokenCount: sum(live.map((m) => m.tokenCount)),
        contextWindow: session.contextWindow,
        lastCompactedAt: session.lastCompactedAt,
        reportedInputTokens: session.reportedInputTokens,
        reportedTokenCount: session.reportedTokenCount,
        agentId: session.agentId,
        lastSeq: session.lastSeq,
        compactionVersion: session.compactionVersion,
        stormGuardSeq: session.stormGuardSeq,
        childSessionId: session.childSessionId,
      },
      keyUsed: idempotencyKey !== null && this.rowByKey(tenantId, idempotencyKey) !== undefined,
      agentPolicy:
        session.agentId === null ? null : (this.policies.get(key(tenantId, session.agentId)) ?? null),
      tenantPolicy: this.policies.get(key(tenantId, '')) ?? null,
    };
  }

  async loadSnapshot(tenantId: string, sessionId: string): Promise<Snapshot> {
    return this.snapshotOf(this.session(tenantId, sessionId));
  }

  async loadMessages(tenantId: string, sessionId: string, seqs: number[]): Promise<Message[]> {
    const session = this.session(tenantId, sessionId);
    return [...seqs]
      .sort((a, b) => a - b)
      .flatMap((seq) => {
        const live = session.messages.get(seq);
        if (!live) return [];
        // A message rewritten in place is read as its original, the earliest archived version.
        const original = this.archive.find(
          (a) => a.tenantId === tenantId && a.sessionId === sessionId && a.seq === seq && a.rewritten,
        );
        return [messageOf(original ?? live)];
      });
  }

  async loadContents(
    tenantId: string,
    sessionId: string,
    seqs: number[],
  ): Promise<Map<number, StoredContent>> {
    return contentsOf(this.session(tenantId, sessionId), seqs);
  }

  /** Pages of {@link MemoryStore.pageSize} messages, read one page at a time as the consumer asks. */
  pagedMessages(tenantId: string, sessionId: string, seqs: number[]): AsyncIterable<Message[]> {
    const store = this;
    const ordered = [...seqs].sort((a, b) => a - b);
    return {
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < ordered.length; i += store.pageSize) {
          const page = await store.loadMessages(tenantId, sessionId, ordered.slice(i, i + store.pageSize));
          if (page.length > 0) yield page;
        }
      },
    };
  }

  /** Messages per page of {@link MemoryStore.pagedMessages}. */
  pageSize = 3;

  async findByKey(tenantId: string, idempotencyKey: string): Promise<CompactionRow | undefined> {
    return this.rowByKey(tenantId, idempotencyKey);
  }

  async loadConversation(tenantId: string, sessionId: string, seqs: number[]): Promise<ContextRead> {
    const session = this.session(tenantId, sessionId);
    const wanted = new Set(seqs);
    const last = Math.max(-1, ...seqs);
    const rows = liveRows(session).filter((m) => wanted.has(m.seq) || (m.role === 'system' && m.seq < last));
    const applied = this.rows(tenantId, sessionId).filter((r) => r.status === 'applied');
    return {
      liveId: sessionId,
      version: session.compactionVersion,
      format: 'anthropic',
      render: {
        rows: rows.map((m) => ({
          seq: m.seq,
          role: m.role,
          kind: m.kind,
          content: m.content,
          pinned: m.pinned,
          contextVersion: m.contextVersion,
        })),
        checkpoint: session.checkpoint,
        compactedThroughSeq: applied.length === 0 ? null : Math.max(...applied.map((r) => r.lastSeq ?? -1)),
        version: session.compactionVersion,
      },
      tools: session.tools,
      bytes: sum(rows.map((m) => JSON.stringify(m.content).length)),
      tokens: sum(liveRows(session).map((m) => m.tokenCount)),
      overLimit: null,
    };
  }

  // FencedWrites

  async apply(change: Change): Promise<WriteResult> {
    const { tenantId, sessionId, idempotencyKey } = change.entry;
    this.runBeforeWrite();
    const session = this.session(tenantId, sessionId);
    const earlier = idempotencyKey === null ? undefined : this.rowByKey(tenantId, idempotencyKey);
    if (earlier) return { status: 'duplicate', row: earlier };
    if (session.compactionVersion !== change.expectedVersion) {
      throw new FenceError(
        `session "${sessionId}" is at compaction version ${session.compactionVersion}, ` +
          `the plan was made at ${change.expectedVersion}`,
      );
    }
    return this.writeChange(session, change, randomUUID());
  }

  async applyUnderLock(read: LockedRead, decide: (snapshot: Snapshot) => Decision): Promise<WriteResult> {
    this.runBeforeWrite();
    const session = this.session(read.tenantId, read.sessionId);
    const earlier = this.rowByKey(read.tenantId, read.idempotencyKey);
    if (earlier) return { status: 'duplicate', row: earlier };
    const compactionId = randomUUID();
    const snapshot = this.snapshotOf(session);
    const decision = decide({
      ...snapshot,
      compactionId,
      ...(read.contentSeqs ? { contents: contentsOf(session, read.contentSeqs(snapshot.messages)) } : {}),
    });
    if ('change' in decision) return this.writeChange(session, decision.change, compactionId);
    const written = this.writeNoChange(decision.noChange, snapshot);
    if (!written) throw new Error(`ledger: the skip of "${read.idempotencyKey}" wrote no row`);
    return written;
  }

  async record(noChange: NoChange): Promise<WriteResult> {
    const { tenantId, sessionId, idempotencyKey } = noChange.entry;
    const session = this.session(tenantId, sessionId);
    if (noChange.reservationId) this.budgets.drop(tenantId, noChange.reservationId);
    const counts = noChange.counts ?? countsOf(session);
    const written = this.writeNoChange(noChange, counts);
    if (written) return written;
    const existing = idempotencyKey ? this.rowByKey(tenantId, idempotencyKey) : undefined;
    if (!existing) throw new Error(`ledger: insert of "${idempotencyKey}" conflicted but no row holds it`);
    return { status: 'duplicate', row: existing };
  }

  async reportContextTokens(report: ContextReport): Promise<void> {
    const { tenantId, sessionId, inputTokens } = report;
    const session = this.sessions.get(key(tenantId, sessionId));
    if (!session) return;
    session.reportedInputTokens = inputTokens;
    session.reportedTokenCount = countsOf(session).tokenCount;
    this.measurePayback(report, session.compactionVersion);
  }

  /** As worker/postgres/payback.ts: the report counts once towards the current compaction's measurement. */
  private measurePayback(report: ContextReport, version: number): void {
    const { eventId } = report;
    const row = this.ledger.findLast(
      (r) =>
        r.tenantId === report.tenantId &&
        r.sessionId === report.sessionId &&
        r.status === 'applied' &&
        r.compactionVersion === version &&
        r.paybackInputs !== null,
    );
    if (!row || eventId === null || row.eventId === eventId) return;
    const counted = row.measuredEventIds ?? [];
    if (counted.includes(eventId) || counted.length >= MAX_MEASURED_REQUESTS) return;
    const measured = addMeasuredRequest(
      row.measuredRequests === null
        ? null
        : {
            requests: row.measuredRequests,
            tokensSent: row.measuredTokensSent ?? 0,
            tokensWithout: row.measuredTokensWithout ?? 0,
            savingsUsd: row.measuredSavingsUsd ?? 0,
            ratio: row.measuredRatio,
          },
      row.paybackInputs as PaybackInputs,
      row.costUsd,
      report,
    );
    Object.assign(row, {
      measuredRequests: measured.requests,
      measuredTokensSent: measured.tokensSent,
      measuredTokensWithout: measured.tokensWithout,
      measuredSavingsUsd: measured.savingsUsd,
      measuredRatio: measured.ratio,
      measuredEventIds: [...counted, eventId],
    });
  }

  // What the writes share

  private session(tenantId: string, sessionId: string): StoredSession {
    const session = this.sessions.get(key(tenantId, sessionId));
    if (!session) throw new SessionNotFoundError(tenantId, sessionId);
    return session;
  }

  private rowByKey(tenantId: string, idempotencyKey: string): CompactionRow | undefined {
    return this.ledger.find((r) => r.tenantId === tenantId && r.idempotencyKey === idempotencyKey);
  }

  private snapshotOf(session: StoredSession): Snapshot {
    const live = liveRows(session).filter((m) => m.seq <= session.lastSeq);
    return {
      tenantId: session.tenantId,
      sessionId: session.sessionId,
      compactionVersion: session.compactionVersion,
      snapshotSeq: session.lastSeq,
      // The in-memory store holds Anthropic content only (its seeds are content blocks).
      format: 'anthropic',
      messageCount: live.length,
      tokenCount: sum(live.map((m) => m.tokenCount)),
      checkpoint: session.checkpoint,
      messages: live.map(metaOf),
    };
  }

  private runBeforeWrite(): void {
    for (const change of this.beforeWrite.splice(0)) change();
  }

  /** The effects, the counters, the storm guard, the reservation and the ledger row, at once. */
  private writeChange(session: StoredSession, change: Change, id: string): WriteResult {
    const locked = lockedOf(session);
    const facts = this.executeEffects(session, change.effects, id);
    if (change.reservationId) this.budgets.drop(session.tenantId, change.reservationId);
    const version = session.compactionVersion + 1;
    const { guard } = change;
    const stillOver =
      guard !== null &&
      overTrigger(guard.triggers, guard.contextWindow, facts.messagesAfter, facts.tokensAfter);
    if (facts.session.checkpoint) session.checkpoint = facts.session.checkpoint;
    if (facts.childSessionId) session.childSessionId = facts.childSessionId;
    session.stormGuardSeq = stillOver ? session.lastSeq : null;
    session.reportedInputTokens = null;
    session.reportedTokenCount = null;
    session.compactionVersion = version;
    session.lastCompactedAt = this.clock.wall();
    const row = this.insert(appliedRow(id, change, locked, facts, version));
    return { status: 'applied', row, checkpoint: facts.written };
  }

  /** A row that changes no message (and the storm guard when asked); null when its key is taken. */
  private writeNoChange(
    noChange: NoChange,
    counts: { messageCount: number; tokenCount: number },
  ): WriteResult | null {
    const { tenantId, sessionId } = noChange.entry;
    if (noChange.stormGuard) {
      const session = this.session(tenantId, sessionId);
      session.stormGuardSeq = session.lastSeq;
    }
    // A failed row holds no key; any other row's key is unique per tenant.
    const values = unchangedRow(noChange, counts);
    if (values.idempotencyKey !== null && this.rowByKey(tenantId, values.idempotencyKey)) return null;
    return { status: noChange.status, row: this.insert(values) };
  }

  private insert(values: LedgerValues): CompactionRow {
    const row: CompactionRow = { ...values, createdAt: new Date(this.clock.wall()) };
    this.ledger.push(row);
    return row;
  }

  private executeEffects(session: StoredSession, effects: Effect[], compactionId: string): EffectFacts {
    let child: StoredSession | null = null;
    let archived = 0;
    let blocksCleared: number | null = null;
    let written: Checkpoint | null = null;
    for (const effect of effects) {
      if (effect.type === 'archive') {
        archived += this.archiveSeqs(session, effect.seqs, effect.cutoffSeq, compactionId);
      } else if (effect.type === 'continueInChild') {
        child = this.continueInChild(session, effect.childSessionId, effect.withoutSeqs);
      } else if (effect.type === 'writeSummary') {
        const target = effect.into === 'child' ? child : session;
        if (target === null) throw new Error('writeSummary into a child: no continueInChild before it');
        const content = effect.blocks ?? effect.text;
        target.messages.set(effect.seq, {
          ...rowOf(effect.seq, 'user', content, false),
          kind: 'summary',
          text: effect.text,
          tokenCount: effect.tokenCount,
        });
        target.checkpoint = effect.checkpoint;
        written = effect.checkpoint;
      } else {
        archived += this.rewrite(session, effect.rewrites, compactionId);
        blocksCleared = (blocksCleared ?? 0) + effect.blocks;
      }
    }
    const result = countsOf(child ?? session);
    const own = countsOf(session);
    return {
      messagesAfter: result.messageCount,
      tokensAfter: result.tokenCount,
      archived,
      blocksCleared,
      childSessionId: child?.sessionId ?? null,
      session: { ...own, checkpoint: child ? null : written },
      written,
    };
  }

  /** Moves the planned seqs to the archive; pinned ones and those above the cutoff never move. */
  private archiveSeqs(
    session: StoredSession,
    seqs: number[],
    cutoffSeq: number,
    compactionId: string,
  ): number {
    const moving = seqs.flatMap((seq) => {
      const row = session.messages.get(seq);
      return row && !row.pinned && seq <= cutoffSeq ? [row] : [];
    });
    if (moving.length !== seqs.length) {
      throw new FenceError(
        `session "${session.sessionId}": ${moving.length} of ${seqs.length} planned messages ` +
          'could still leave; the snapshot is stale',
      );
    }
    for (const row of moving) {
      session.messages.delete(row.seq);
      this.archive.push({ ...row, ...where(session), compactionId, rewritten: false });
    }
    return moving.length;
  }

  /** Archives each original whole (marked rewritten), then sets the live row's new content. */
  private rewrite(
    session: StoredSession,
    rewrites: Extract<Effect, { type: 'rewrite' }>['rewrites'],
    compactionId: string,
  ): number {
    const rows = rewrites.flatMap((r) => {
      const row = session.messages.get(r.seq);
      return row && !row.pinned ? [row] : [];
    });
    if (rows.length !== rewrites.length) {
      throw new FenceError(
        `session "${session.sessionId}": ${rows.length} of ${rewrites.length} planned messages ` +
          'could still be rewritten; the snapshot is stale',
      );
    }
    for (const r of rewrites) {
      const row = session.messages.get(r.seq) as StoredRow;
      this.archive.push({ ...row, ...where(session), compactionId, rewritten: true });
      session.messages.set(r.seq, {
        ...row,
        content: r.content,
        text: r.text,
        tokenCount: r.tokenCount,
        thinking: r.thinking,
      });
    }
    return rows.length;
  }

  /** A child session holding every live message of the parent but `without`, with their seqs. */
  private continueInChild(parent: StoredSession, childId: string, without: number[]): StoredSession {
    const leaving = new Set(without);
    const child: StoredSession = {
      ...parent,
      sessionId: childId,
      compactionVersion: 0,
      parentSessionId: parent.sessionId,
      childSessionId: null,
      stormGuardSeq: null,
      lastCompactedAt: null,
      reportedInputTokens: null,
      reportedTokenCount: null,
      messages: new Map(
        liveRows(parent)
          .filter((m) => !leaving.has(m.seq))
          .map((m) => [m.seq, { ...m, contextVersion: null }]),
      ),
    };
    this.sessions.set(key(parent.tenantId, childId), child);
    return child;
  }
}

/**
 * Spend budgets over the store's ledger: the tenant's (and agent's) `costUsd` in the request's UTC
 * day and month plus the live reservations, checked and reserved in one step (nothing else runs in
 * between here, as the Postgres adapter's advisory lock ensures there).
 */
export class MemoryBudgets implements Budgets {
  /** Live reservations. */
  readonly reservations: Array<{ id: string; tenantId: string; agentId: string | null; costUsd: number }> =
    [];
  private store: MemoryStore | null = null;

  /** Binds the ledger whose spend is counted (done by the store's constructor). */
  attach(store: MemoryStore): void {
    this.store = store;
  }

  async reserve(request: BudgetRequest, decide: (spend: Spend) => BudgetDecision): Promise<BudgetCheck> {
    const store = this.store;
    if (!store) throw new Error('MemoryBudgets: no store attached');
    const { dayStart, monthStart } = budgetWindows(request.now);
    const rows = store.ledger.filter(
      (r) => r.tenantId === request.tenantId && r.createdAt >= monthStart && (r.costUsd ?? 0) > 0,
    );
    const ofAgent = (r: CompactionRow) =>
      request.agentId !== null && store.agentOf(r.tenantId, r.sessionId) === request.agentId;
    const daily = (r: CompactionRow) => r.createdAt >= dayStart;
    const cost = (list: CompactionRow[]) => sum(list.map((r) => r.costUsd ?? 0));
    const live = this.reservations.filter((r) => r.tenantId === request.tenantId);
    const tenantReserved = sum(live.map((r) => r.costUsd));
    const agentReserved = sum(live.filter((r) => r.agentId === request.agentId).map((r) => r.costUsd));
    const decision = decide({
      tenant: {
        daily: { spentUsd: cost(rows.filter(daily)), reservedUsd: tenantReserved },
        monthly: { spentUsd: cost(rows), reservedUsd: tenantReserved },
      },
      agent: {
        daily: { spentUsd: cost(rows.filter((r) => daily(r) && ofAgent(r))), reservedUsd: agentReserved },
        monthly: { spentUsd: cost(rows.filter(ofAgent)), reservedUsd: agentReserved },
      },
    });
    if (!decision.allowed) return { decision, reservationId: null };
    const id = randomUUID();
    this.reservations.push({
      id,
      tenantId: request.tenantId,
      agentId: request.agentId,
      costUsd: request.estimateUsd,
    });
    return { decision, reservationId: id };
  }

  async release(tenantId: string, reservationId: string): Promise<void> {
    this.drop(tenantId, reservationId);
  }

  /** Deletes the reservation, if it is still there. */
  drop(tenantId: string, reservationId: string): void {
    const i = this.reservations.findIndex((r) => r.tenantId === tenantId && r.id === reservationId);
    if (i >= 0) this.reservations.splice(i, 1);
  }
}

/**
 * Per-session leases in a map. A test makes another worker hold a session ({@link holdElsewhere})
 * or takes a held lease away ({@link lose}: its signal aborts, as when the Redis lease expires).
 */
export class MemoryLeases implements Leases {
  private readonly held = new Map<string, { token: string; controller: AbortController }>();

  async acquire(tenantId: string, sessionId: string): Promise<Lease | null> {
    const name = key(tenantId, sessionId);
    if (this.held.has(name)) return null;
    const token = randomUUID();
    const controller = new AbortController();
    this.held.set(name, { token, controller });
    return {
      key: name,
      token,
      signal: controller.signal,
      release: async () => {
        if (this.held.get(name)?.token === token) this.held.delete(name);
      },
    };
  }

  /** Another worker takes the session's lease. */
  holdElsewhere(tenantId: string, sessionId: string): void {
    this.held.set(key(tenantId, sessionId), { token: 'elsewhere', controller: new AbortController() });
  }

  /** The session's lease is lost: its holder's signal aborts and someone else holds it. */
  lose(tenantId: string, sessionId: string): void {
    const name = key(tenantId, sessionId);
    this.held.get(name)?.controller.abort(new Error('lease lost'));
    this.held.set(name, { token: 'taken', controller: new AbortController() });
  }

  /** Whether anyone holds the session's lease. */
  isHeld(tenantId: string, sessionId: string): boolean {
    return this.held.has(key(tenantId, sessionId));
  }
}

/** Message batches in a list: `fits` says whether a summary may be batched. */
export class MemoryBatching implements Batching {
  readonly queued: QueuedSummary[] = [];

  constructor(private readonly fitsAll = true) {}

  fits(): boolean {
    return this.fitsAll;
  }

  async queue(item: QueuedSummary): Promise<boolean> {
    if (this.queued.some((q) => q.tenantId === item.tenantId && q.idempotencyKey === item.idempotencyKey))
      return false;
    this.queued.push(item);
    return true;
  }
}

/** The pipeline on in-memory ports, and the ports, for a test to arrange and inspect. */
export interface MemoryPipeline {
  deps: PipelineDeps;
  store: MemoryStore;
  budgets: MemoryBudgets;
  leases: MemoryLeases;
  clock: ManualClock;
  /** Every event the pipeline told its observer, in order. */
  events: PipelineEvent[];
}

/** `PipelineDeps` on fresh in-memory ports, with the given summarizers (and batching, if any). */
export function memoryPipeline(
  summarizers: Summarizers,
  options: { batching?: Batching } = {},
): MemoryPipeline {
  const clock = new ManualClock();
  const budgets = new MemoryBudgets();
  const store = new MemoryStore(clock, budgets);
  const leases = new MemoryLeases();
  const events: PipelineEvent[] = [];
  const deps: PipelineDeps = {
    reads: store,
    writes: store,
    leases,
    summarizers,
    clock,
    budgets,
    observer: { observe: (event) => events.push(event) },
    batching: options.batching,
    logger: silentLogger,
  };
  return { deps, store, budgets, leases, clock, events };
}

function rowOf(seq: number, role: Role, content: StoredContent, pinned: boolean): StoredRow {
  return {
    ...metaOfContent(seq, role, content, pinned),
    content,
    text: contentFacts(asAnthropicContent(content)).text,
    contextVersion: null,
  };
}

function metaOf(row: StoredRow): MessageMeta {
  const { content: _content, text: _text, contextVersion: _version, ...meta } = row;
  return meta;
}

function messageOf(row: StoredRow): Message {
  return { ...metaOf(row), content: row.text };
}

function liveRows(session: StoredSession): StoredRow[] {
  return [...session.messages.values()].sort((a, b) => a.seq - b.seq);
}

function countsOf(session: StoredSession): { messageCount: number; tokenCount: number } {
  const live = liveRows(session);
  return { messageCount: live.length, tokenCount: sum(live.map((m) => m.tokenCount)) };
}

function contentsOf(session: StoredSession, seqs: number[]): Map<number, StoredContent> {
  const contents = new Map<number, StoredContent>();
  for (const seq of seqs) {
    const row = session.messages.get(seq);
    if (row) contents.set(seq, row.content);
  }
  return contents;
}

/** The session row as the Postgres adapter's lock reads it, for the ledger's row builder. */
function lockedOf(session: StoredSession): LockedSession {
  const counts = countsOf(session);
  return {
    ...counts,
    format: 'anthropic',
    compactionVersion: session.compactionVersion,
    checkpoint: session.checkpoint,
    lastSeq: session.lastSeq,
    agentId: session.agentId,
    contextWindow: session.contextWindow,
    keyUsed: false,
    messages: [],
  };
}

function where(session: StoredSession): { tenantId: string; sessionId: string } {
  return { tenantId: session.tenantId, sessionId: session.sessionId };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
