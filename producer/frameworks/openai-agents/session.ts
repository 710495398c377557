/**
 * {@link CompactorSession}: the OpenAI Agents SDK's `Session` over a compactor session of format
 * `openai-responses`. The SDK reads the history through it before a run and hands it the run's
 * items after; compactor's workers keep that history small in between.
 *
 * ```ts
 * const session = new CompactorSession({ db, producer, tenantId: 'acme', sessionId: 'user-42' });
 * const result = await run(agent, 'Fix the parser.', { session });
 * ```
 *
 * The I/O is here; the item mapping is to-responses.ts and from-responses.ts, the run's request
 * size usage.ts, the pop's
 * statement producer/postgres/pop-message.ts.
 */
import { randomUUID } from 'node:crypto';
import type {
  AgentInputItem,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionResult,
  RunContext,
  RunContextAwareSession,
} from '@openai/agents';
import { InvalidInputError, SessionNotFoundError } from '../../../shared/contract/errors.ts';
import { isTypedResponsesItem, type ResponsesItem } from '../../../shared/formats/openai-responses/item.ts';
import { type LoadedResponsesContext, loadContext } from '../../context.ts';
import type { CompactNowResult, CompactNowTarget, EnqueueResult, Producer } from '../../index.ts';
import type { Db } from '../../postgres/db.ts';
import { popNewestMessage } from '../../postgres/pop-message.ts';
import { appendToLiveSession, createSession, liveSessionOf, SessionExistsError } from '../../sessions.ts';
import { callsOf, toAgentItem, toAgentItems } from './from-responses.ts';
import { type CallTool, comparable, resultsWithoutCall, toResponsesItems } from './to-responses.ts';
import { lastRequestTokens } from './usage.ts';

/** Where a {@link CompactorSession} keeps its history, and how it asks for compactions. */
export interface CompactorSessionOptions {
  /** compactor's database (`openDatabase(url).db`). */
  db: Db;
  /**
   * Enqueues `session.run.completed` at the end of each run and compacts on demand: a producer
   * (`createProducer({ db })`) on the queue the workers listen on.
   */
  producer: Pick<Producer, 'runCompleted' | 'compactNow'>;
  tenantId: string;
  /**
   * The compactor session (at most 200 characters, the event contract's id rules). Created on first
   * use, empty and of format `openai-responses`, when the tenant has none; one of another format is
   * refused with an `InvalidInputError` on the first read.
   */
  sessionId: string;
  /** Stored on the session when it is created (policies can be set per agent). */
  agentId?: string | null;
  /** The model's context window in tokens, stored when the session is created (triggers may use it). */
  contextWindow?: number | null;
  /**
   * What `runCompaction({ force: true })` and {@link CompactorSession.compact} ask for: a strategy
   * (default: the tenant's policy) and how long to wait for the worker, ms (default 60,000).
   */
  compactNow?: { strategy?: CompactNowTarget['strategy']; timeoutMs?: number };
}

/** The `session.run.completed` a run's end enqueued. */
export type RunCompletedRecord = EnqueueResult & { eventId: string; sessionId: string };

/** Hops a lineage may take while a pop follows it (a session continued in a child). */
const MAX_HOPS = 100;

/**
 * The OpenAI Agents SDK's `Session` (`@openai/agents` 0.20.0) over a compactor session of format
 * `openai-responses`; also the SDK's `OpenAIResponsesCompactionAwareSession`, whose
 * `runCompaction` the runner calls once a run's items are stored: there it enqueues
 * `session.run.completed`, so a worker compacts between runs with no line of the user's.
 *
 * What each method means on a compacted history:
 * - `getItems()`: the compacted context (`loadContext`, format `openai-responses`) as the SDK's
 *   items: compactor's summary (a user message), the items kept since, every call answered.
 *   `getItems(limit)`: the newest `limit` of those, in order (the summary counts as one item);
 *   `limit` ≤ 0 gives none. A limit may cut a call from its result, as the SDK's own sessions do:
 *   the runner never passes one.
 * - `addItems(items)`: appends the items (each as the Responses input item the SDK sends for it:
 *   to-responses.ts says what is kept and what is refused), to the live session of the lineage.
 * - `popItem()`: removes the newest live item and gives it back, unless it is compactor's summary
 *   or a pinned item (then nothing is removed and it answers undefined): what a compaction archived
 *   is not the session's to pop (recall reads it; `compactor restore` puts it back). The popped
 *   item is deleted, not archived: the caller holds it.
 * - `clearSession()`: the agent starts over in a new compactor session (`<sessionId>~<uuid>`, which
 *   `getSessionId()` then returns; keep it to open the session again). The old one stays whole:
 *   its archive, ledger and recall are not erased.
 * - `runCompaction(args)`: enqueues `session.run.completed` (the worker's policy decides whether to
 *   compact) with the size of the run's last request; with `force: true`, compacts now
 *   ({@link compact}: a manual event, which skips the triggers) and waits for the worker. The
 *   SDK's other arguments (`responseId`, `store`, `compactionMode`) concern OpenAI's own compaction
 *   endpoint and are not used. It answers null: the agent made no model request for it.
 */
export class CompactorSession implements RunContextAwareSession, OpenAIResponsesCompactionAwareSession {
  /** Tells the runner to pass the run's context (its usage gives the event's token counts). */
  readonly acceptsRunContext = true as const;
  /** The `session.run.completed` the last run's end enqueued, once one has. */
  lastRunCompleted: RunCompletedRecord | undefined;
  /** The outcome of the last {@link compact} (or forced `runCompaction`), once one ran. */
  lastCompaction: CompactNowResult | undefined;
  readonly #options: CompactorSessionOptions;
  #sessionId: string;
  /** The live session of the lineage, once known (a `newSession` compaction moves it to a child). */
  #live: string | undefined;
  #created: Promise<void> | undefined;

  /** @throws {InvalidInputError} without a tenant or session id. */
  constructor(options: CompactorSessionOptions) {
    for (const key of ['tenantId', 'sessionId'] as const) {
      if (typeof options[key] !== 'string' || options[key] === '')
        throw new InvalidInputError(`${key}: expected a non-empty string`);
    }
    this.#options = options;
    this.#sessionId = options.sessionId;
  }

  /** The compactor session of this SDK session (created if missing); a new one after `clearSession`. */
  async getSessionId(): Promise<string> {
    await this.#ensure();
    return this.#sessionId;
  }

  /** The live compactor session the history is read from and appended to, once known. */
  get liveSessionId(): string | undefined {
    return this.#live;
  }

  /**
   * The compacted context as the SDK's items; the newest `limit` of them when given (none for 0 or
   * less).
   * @throws {InvalidInputError} for a `limit` that is not a whole number, or a session of another
   *   format; the database's errors.
   */
  async getItems(limit?: number, _runContext?: RunContext<unknown>): Promise<AgentInputItem[]> {
    if (limit !== undefined && !Number.isInteger(limit)) {
      throw new InvalidInputError(`limit: expected a whole number of items, got ${limit}`);
    }
    const items = toAgentItems((await this.#context()).input);
    if (limit === undefined) return items;
    return limit <= 0 ? [] : items.slice(-limit);
  }

  /**
   * Appends the items, in order, to the live session.
   * @throws {InvalidInputError} naming `items[i]` and the field when one cannot be stored whole
   *   (to-responses.ts), or compactor's refusal of the Responses item (`messages[i]…`, the same index);
   *   nothing is written then. The session's size limits (`SessionLimitError`), the database's errors.
   */
  async addItems(items: AgentInputItem[], _runContext?: RunContext<unknown>): Promise<void> {
    if (items.length === 0) return;
    await this.#ensure();
    const calls =
      resultsWithoutCall(items).length > 0
        ? callsOf((await this.#context()).input)
        : new Map<string, CallTool>();
    const converted = toResponsesItems(items, calls);
    converted.forEach((item, i) => {
      // compactor reads `pinned` beside an item as its own option, which would drop it from the item.
      if ('pinned' in item)
        throw new InvalidInputError(
          `items[${i}].providerData.pinned: compactor reads a "pinned" field as its own option, so it could not be stored; nothing was written`,
        );
    });
    const { sessionId } = await appendToLiveSession(
      this.#options.db,
      this.#options.tenantId,
      this.#target(),
      converted,
      { format: 'openai-responses' },
    );
    this.#live = sessionId;
  }

  /**
   * What the runner calls when a model's output starts with a `compaction` item (OpenAI's server-side
   * compaction): the items are appended, the compaction item first; compactor's context sends
   * nothing from before the newest compaction item (but the leading instructions), and keeps it
   * stored.
   */
  async replaceHistoryWithCompaction(
    items: AgentInputItem[],
    runContext?: RunContext<unknown>,
  ): Promise<void> {
    await this.addItems(items, runContext);
  }

  /**
   * Removes the newest live item and returns it, unless it is compactor's summary or pinned.
   * @returns the item as the SDK holds it (a tool result's name from its call); undefined when
   *   nothing was removed.
   * @throws {SessionNotFoundError} when the session is gone; the database's errors.
   */
  async popItem(_runContext?: RunContext<unknown>): Promise<AgentInputItem | undefined> {
    await this.#ensure();
    const { db, tenantId } = this.#options;
    let target = this.#live ?? (await liveSessionOf(db, tenantId, this.#sessionId));
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const outcome = await popNewestMessage(db, tenantId, target);
      if (outcome.status === 'not-found') throw new SessionNotFoundError(tenantId, target);
      if (outcome.status === 'continued') {
        target = outcome.childSessionId;
        continue;
      }
      this.#live = target;
      if (outcome.status === 'kept') return undefined;
      const item = outcome.content as unknown as ResponsesItem;
      const call = isTypedResponsesItem(outcome.call) ? [outcome.call] : [];
      return toAgentItem(item, callsOf(call));
    }
    throw new Error(`session "${this.#sessionId}": its lineage is longer than ${MAX_HOPS} sessions`);
  }

  /**
   * Starts over in a new, empty compactor session; the old one is kept whole (see the class comment).
   */
  async clearSession(_runContext?: RunContext<unknown>): Promise<void> {
    const base = this.#options.sessionId.slice(0, 200 - 37);
    this.#sessionId = `${base}~${randomUUID()}`;
    this.#live = undefined;
    this.#created = undefined;
    await this.#ensure();
  }

  /**
   * The runner's hook after a run's items are stored: enqueues `session.run.completed`, or with
   * `force` compacts now ({@link compact}).
   * @returns null (no model request of the agent's).
   * @throws the producer's errors (the queue unreachable, an invalid event) and, forced, those of
   *   `compactNow` (`CompactionFailedError`): the run's items are stored by then.
   */
  async runCompaction(
    args?: OpenAIResponsesCompactionArgs,
    runContext?: RunContext<unknown>,
  ): Promise<OpenAIResponsesCompactionResult | null> {
    if (args?.force) {
      await this.compact();
      return null;
    }
    await this.#ensure();
    const eventId = randomUUID();
    const sessionId = this.#target();
    const enqueued = await this.#options.producer.runCompleted({
      eventId,
      tenantId: this.#options.tenantId,
      sessionId,
      ...lastRequestTokens(runContext?.usage),
    });
    this.lastRunCompleted = { ...enqueued, eventId, sessionId };
    return null;
  }

  /**
   * Compacts the session now (`producer.compactNow`, a manual event that skips the triggers) and
   * waits for the worker, by the options' `compactNow` (strategy, timeout) unless given here.
   * @returns what `compactNow` saw: `settled` with the job's result (and ledger row, when the
   *   producer has `db`), or `running` when the wait ran out.
   * @throws {CompactionFailedError} when the job failed for good; the queue's errors.
   */
  async compact(options: CompactorSessionOptions['compactNow'] = {}): Promise<CompactNowResult> {
    await this.#ensure();
    const strategy = options.strategy ?? this.#options.compactNow?.strategy;
    const result = await this.#options.producer.compactNow(
      { tenantId: this.#options.tenantId, sessionId: this.#target(), ...(strategy ? { strategy } : {}) },
      { timeoutMs: options.timeoutMs ?? this.#options.compactNow?.timeoutMs ?? 60_000 },
    );
    this.lastCompaction = result;
    return result;
  }

  /**
   * For the runner's comparisons of stored and expected history: each item as the Responses item the
   * SDK sends for it, so that the two shapes of one item compare equal.
   */
  prepareHistoryItemsForPersistenceComparison(items: AgentInputItem[]): AgentInputItem[] {
    return items.map(comparable);
  }

  /** Where reads and appends go: the live session when known, else the session (its lineage is followed). */
  #target(): string {
    return this.#live ?? this.#sessionId;
  }

  async #context(): Promise<LoadedResponsesContext> {
    await this.#ensure();
    const context = await loadContext(this.#options.db, {
      tenantId: this.#options.tenantId,
      sessionId: this.#target(),
      format: 'openai-responses',
    });
    this.#live = context.sessionId;
    return context;
  }

  /** Creates the session once, empty, unless the tenant has it. */
  #ensure(): Promise<void> {
    this.#created ??= createSession(this.#options.db, {
      tenantId: this.#options.tenantId,
      sessionId: this.#sessionId,
      format: 'openai-responses',
      agentId: this.#options.agentId ?? null,
      contextWindow: this.#options.contextWindow ?? null,
      messages: [],
    }).then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof SessionExistsError) return;
        this.#created = undefined;
        throw error;
      },
    );
    return this.#created;
  }
}
