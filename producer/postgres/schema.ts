/**
 * compactor's Postgres data model, as a drizzle schema. drizzle-kit generates the SQL
 * migrations in `drizzle/` from this file (`npm run db:generate`). Edit a generated file only to add
 * the data conversion a schema change needs (as 0006 does), after the generated statements, or to
 * write what drizzle-kit cannot express: 0015 partitions `messages` and `archived_messages` by hash
 * of `tenant_id` by hand, keeping the columns and keys this file declares (its snapshot is
 * drizzle-kit's, so `db:generate` finds nothing to change). Every primary and unique key carries
 * `tenant_id` (docs/distributed-postgres.md; test/integration/tenant-keys.test.ts checks it).
 *
 * Units: every `*_tokens` / `token_count` column is an estimated token count; `cost_usd` is US
 * dollars; `*_ms` columns are milliseconds.
 */

import type { StoredContent } from '../../shared/contract/blocks.ts';
import { MESSAGE_KINDS, MESSAGE_ROLES } from '../../shared/contract/message.ts';
import { SESSION_FORMATS } from '../../shared/contract/session-format.ts';
import {
  bigint,
  boolean,
  check,
  customType,
  foreignKey,
  index,
  integer,
  json,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  type SQL,
  type SQLWrapper,
  sql,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
  varchar,
} from './orm.ts';

export { MESSAGE_KINDS, MESSAGE_ROLES };

/**
 * A `json` column holding a message's native content. postgres.js parses `json` itself; drizzle's
 * own `json()` would parse the result again when it is a string, turning the content `"123"` into
 * the number 123. This one takes what postgres.js parsed as it is.
 */
/** PostgreSQL's `tsvector`, read as its text (recall never reads it back). */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

const nativeContent = customType<{ data: StoredContent; driverData: unknown }>({
  dataType: () => 'json',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => value as StoredContent,
});

/** What started a compaction. */
export const TRIGGERS = ['event', 'sweep', 'manual'] as const;
/**
 * Ledger row outcomes. `expired` is no compaction: it records archived originals a retention pass
 * of the sweep dropped (`expired_*` columns), one row per session per pass.
 */
export const COMPACTION_STATUSES = ['applied', 'skipped', 'failed', 'restored', 'expired'] as const;

/** One agent conversation. `tenant_id` scopes every read and write. */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').notNull(),
    tenantId: text('tenant_id').notNull(),
    agentId: text('agent_id'),
    /** Highest seq ever written; the next message gets `last_seq + 1`. -1 when empty. */
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(-1),
    messageCount: integer('message_count').notNull().default(0),
    tokenCount: bigint('token_count', { mode: 'number' }).notNull().default(0),
    /** The model's context window in tokens, when the agent service says it. */
    contextWindow: integer('context_window'),
    /**
     * Bumped by every applied compaction or restore: the fencing token. A plan records it from its
     * snapshot, and the apply refuses to write when it has changed since.
     */
    compactionVersion: integer('compaction_version').notNull().default(0),
    compactionCount: integer('compaction_count').notNull().default(0),
    lastCompactedAt: timestamp('last_compacted_at', { withTimezone: true }),
    /** The current checkpoint (structured summary), or null before the first summary. */
    checkpoint: jsonb('checkpoint'),
    parentSessionId: text('parent_session_id'),
    /** Set when the session continued in a child session (newSession mode); the session stays whole. */
    childSessionId: text('child_session_id'),
    /**
     * Storm guard: `last_seq` when a compaction could not bring the session under its trigger.
     * Events skip cheaply until enough new messages arrive for another compaction to help.
     */
    stormGuardSeq: bigint('storm_guard_seq', { mode: 'number' }),
    /**
     * The real size of the session's context as the agent last reported it (the prompt tokens of
     * its run's last request, `inputTokens` on `session.run.completed`), and the estimated
     * `token_count` at that moment: triggers read `reported + (token_count - estimate then)`.
     * Cleared by a compaction, which changes the context the figure measured.
     */
    reportedInputTokens: integer('reported_input_tokens'),
    reportedTokenCount: bigint('reported_token_count', { mode: 'number' }),
    /**
     * The `tools` the agent sends with the session's requests, as it sends them (Messages API tool
     * definitions), when it declared them (`setSessionTools`): the `anthropic-compaction`
     * summarizer sends them on its compaction request, since kept turns keep their thinking only
     * when `system` and `tools` are the same there and afterwards. Null: not declared.
     */
    tools: json('tools'),
    /**
     * The wire format of the session's messages (shared/contract/session-format.ts), set when it is
     * created and never changed: `anthropic` (every session made before the column existed) or
     * another of `SESSION_FORMATS`. It decides how an append is validated and how the context is
     * rendered (shared/formats/registry.ts).
     */
    format: text('format', { enum: SESSION_FORMATS }).notNull().default('anthropic'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    // The shape of a format name, not the list: a new format (shared/formats/registry.ts) needs no
    // migration; the names themselves are checked where a session is created and read.
    check('sessions_format_check', sql`${t.format} ~ '^[a-z][a-z0-9-]{0,39}$'`),
    // Serves the sweep's keyset scan over live sessions (transitioned parents are left out).
    index('sessions_sweep_idx').on(t.tenantId, t.id).where(sql`${t.childSessionId} is null`),
  ],
);

/**
 * Per-tenant and per-agent compaction policies (shared/policy/policy.ts). `agent_id` null is the tenant's
 * own policy; one row per (tenant, agent), nulls not distinct.
 */
export const compactionPolicies = pgTable(
  'compaction_policies',
  {
    tenantId: text('tenant_id').notNull(),
    agentId: text('agent_id'),
    /** The validated policy: `{ strategy, triggers, mode, enabled }`. */
    policy: jsonb('policy').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [unique('compaction_policies_tenant_agent_key').on(t.tenantId, t.agentId).nullsNotDistinct()],
);

/**
 * The full-text document recall searches in an archived message (`archived_messages.search_vector`):
 * the first {@link ARCHIVE_SEARCH_CHARS} characters of its plain-text rendering, parsed twice with
 * PostgreSQL's `simple` configuration (no stemming, no stop words: paths, commands and identifiers
 * stay as written): once as written, where the default parser keeps a path (`src/app.ts`) or a host
 * as one token, and once with `/ . _ - : \\` read as spaces, so that a part of a path or
 * identifier (`app.ts`, `parse_args`) is found too. Capped because a tsvector holds at most 1 MB
 * (PostgreSQL 16 docs, "Text Search Limitations"): an archive insert must never fail on a large
 * tool result. Stored (a generated column), not an index expression: ranking a search that matches
 * thousands of messages reads their vectors instead of parsing their text again (2.7 s → 0.3 s for
 * 100,000 matches, measured).
 */
export function archiveSearchVector(content: SQLWrapper): SQL {
  const head = sql`left(${content}, ${sql.raw(String(ARCHIVE_SEARCH_CHARS))})`;
  return sql`(to_tsvector('simple'::regconfig, ${head}) || to_tsvector('simple'::regconfig, translate(${head}, '/._-:\\', '      ')))`;
}

/** Characters of an archived message's text that recall indexes (see {@link archiveSearchVector}). */
export const ARCHIVE_SEARCH_CHARS = 100_000;

/** Columns shared by live and archived messages. */
const messageColumns = {
  tenantId: text('tenant_id').notNull(),
  sessionId: text('session_id').notNull(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  role: text('role', { enum: MESSAGE_ROLES }).notNull(),
  kind: text('kind', { enum: MESSAGE_KINDS }).notNull(),
  /** The plain-text rendering of the content (shared/contract/blocks.ts): for summaries, search, tokens. */
  content: text('content').notNull(),
  /**
   * The message's content exactly as the agent wrote it: in an `anthropic` session a JSON string or
   * a list of Anthropic content blocks (any type, every field, in order); in an `openai-chat` session
   * the whole Chat Completions message object (`role`, `content`, `tool_calls`, `tool_call_id`, …).
   * `json`, not `jsonb`: the text is kept as written, key order included. A corpus-format row holds
   * its native equivalent.
   */
  contentBlocks: nativeContent('content_blocks').notNull(),
  /** The first tool id the message opens or answers (the corpus format's one id per row). */
  toolCallId: text('tool_call_id'),
  toolName: text('tool_name'),
  /** Ids of the message's `tool_use` blocks, in order. */
  toolUseIds: text('tool_use_ids').array().notNull().default(sql`'{}'::text[]`),
  /** `tool_use_id`s of the message's `tool_result` blocks, in order. */
  toolResultIds: text('tool_result_ids').array().notNull().default(sql`'{}'::text[]`),
  /** Whether the content holds `thinking` or `redacted_thinking` blocks. */
  hasThinking: boolean('has_thinking').notNull().default(false),
  /**
   * For a model's reply: the session's `compaction_version` when the agent loaded the context it
   * sent (`loadContext` gives it; `appendMessages` records it). Its thinking blocks are signed over
   * that context, so they stay valid only while no compaction has changed it since. Null when
   * unknown: then the seq rule applies (appended after the latest compaction, or not).
   */
  contextVersion: integer('context_version'),
  tokenCount: integer('token_count').notNull(),
  pinned: boolean('pinned').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
};

/**
 * The live history of each session. Hash-partitioned by `tenant_id` (drizzle-kit cannot say so: the
 * partitioning is in migration 0015, and the partition count is `COMPACTOR_HISTORY_PARTITIONS` when
 * it ran), so every key carries `tenant_id` and a statement that names one tenant reads one
 * partition.
 */
export const messages = pgTable('messages', messageColumns, (t) => [
  primaryKey({ columns: [t.tenantId, t.sessionId, t.seq] }),
  foreignKey({
    columns: [t.tenantId, t.sessionId],
    foreignColumns: [sessions.tenantId, sessions.id],
  }).onDelete('cascade'),
]);

/**
 * Messages moved out of `messages` by a compaction, linked to it. A seq can appear here more than
 * once per session (an original message, then the summary that later took its seq), never twice
 * for one compaction. Hash-partitioned by `tenant_id` like `messages` (migration 0015).
 */
export const archivedMessages = pgTable(
  'archived_messages',
  {
    ...messageColumns,
    compactionId: uuid('compaction_id').notNull(),
    archivedAt: timestamp('archived_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * The original of a message its compaction rewrote in place (`clearToolResults` and
     * `clearThinking`): the rewritten version stayed live at the same seq. Restore replaces that
     * live version with this row; the audit counts this row as an earlier version, not a second
     * copy of the message. False for a message that left the live history.
     */
    rewritten: boolean('rewritten').notNull().default(false),
    /** Recall's full-text document of the message ({@link archiveSearchVector}), kept by PostgreSQL. */
    searchVector: tsvector('search_vector')
      .notNull()
      .generatedAlwaysAs(archiveSearchVector(sql.raw('"content"'))),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.compactionId, t.seq] }),
    index('archived_messages_session_seq_idx').on(t.tenantId, t.sessionId, t.seq),
    // loadContext restates the system messages compactions archived: found without reading the
    // rest of a long session's archive.
    index('archived_messages_system_idx').on(t.tenantId, t.sessionId, t.seq).where(sql`${t.role} = 'system'`),
    // The retention pass finds a session's archived rows older than its cutoff, oldest first.
    index('archived_messages_archived_at_idx').on(t.tenantId, t.sessionId, t.archivedAt),
    // Recall's full-text search (producer/postgres/recall-query.ts) over what left the context.
    index('archived_messages_search_idx').using('gin', t.searchVector),
  ],
);

/** The ledger: one row per compaction decision. */
export const compactions = pgTable(
  'compactions',
  {
    id: uuid('id').notNull().defaultRandom(),
    sessionId: text('session_id').notNull(),
    tenantId: text('tenant_id').notNull(),
    /**
     * `event:<tenantId>:<eventId>` for events, `sweep:<tenantId>:<sessionId>:v<version>` for the
     * sweep, `manual:<uuid>` for the CLI's `compact`, each with `:<strategy>` for a stage of `auto`.
     * Unique per tenant (`(tenant_id, idempotency_key)`, so the key is unique on a distributed
     * Postgres too): one effect per key. Every key either names its tenant or holds a random UUID,
     * and every lookup names the tenant, so per-tenant uniqueness is the same rule as the global
     * one. Null on `failed` rows, which record an attempt and must not block a later retry, and on
     * `expired` rows, which no event asked for.
     */
    idempotencyKey: text('idempotency_key'),
    eventId: text('event_id'),
    trigger: text('trigger', { enum: TRIGGERS }).notNull(),
    strategy: text('strategy').notNull(),
    summarizer: text('summarizer'),
    /**
     * The `summarize` strategy's summary instructions, as the request ran with them (the policy's,
     * an event's override, `compact --instructions`); null when there were none. Recorded whatever
     * the summarizer: the `extractive` one ignores them.
     */
    instructions: text('instructions'),
    status: text('status', { enum: COMPACTION_STATUSES }).notNull(),
    reason: text('reason'),
    /** Highest seq that left; messages above it were never touched. */
    cutoffSeq: bigint('cutoff_seq', { mode: 'number' }),
    /**
     * The session's `last_seq` when the compaction was applied: messages above it were appended
     * after it, so their thinking blocks were signed over the compacted conversation.
     */
    lastSeq: bigint('last_seq', { mode: 'number' }),
    /** Seq the summary message took (the last leaving seq), when one was written. */
    summarySeq: bigint('summary_seq', { mode: 'number' }),
    compactionVersion: integer('compaction_version'),
    messagesBefore: integer('messages_before'),
    messagesAfter: integer('messages_after'),
    tokensBefore: bigint('tokens_before', { mode: 'number' }),
    tokensAfter: bigint('tokens_after', { mode: 'number' }),
    messagesArchived: integer('messages_archived'),
    /**
     * What a compaction that rewrites in place cleared: the tool uses whose result (or, when asked,
     * input) `clearToolResults` replaced, the thinking blocks `clearThinking` dropped; null for the
     * strategies that clear nothing. The tokens cleared are `tokens_before - tokens_after`.
     */
    blocksCleared: integer('blocks_cleared'),
    /**
     * Whether thinking signed before this compaction stays valid after it: a `clearThinking` (it
     * removes thinking from the start of the chain), or an `anthropic-compaction` summary whose
     * kept turns meet the API's conditions. False for every other change of the history.
     */
    thinkingPreserved: boolean('thinking_preserved').notNull().default(false),
    /** Why kept thinking does or does not stay valid after an `anthropic-compaction` summary. */
    thinkingNote: text('thinking_note'),
    summary: text('summary'),
    /**
     * The summary's fidelity score in [0, 1] (shared/fidelity/score.ts), on every row whose
     * summarizer produced a summary (applied, or held back under `minFidelity`); null otherwise.
     */
    fidelity: numeric('fidelity', { precision: 4, scale: 3, mode: 'number' }),
    /** The score's parts: `{ paths, lastRequest, instructions, openError, pinned }`, each `{ total, kept }`. */
    fidelityParts: jsonb('fidelity_parts'),
    /**
     * What the leaving messages held that the summary does not: `{ paths, commands, errors,
     * instructions, omitted }`, at most 50 items of 300 characters, control characters removed.
     */
    lost: jsonb('lost'),
    /** The session's checkpoint before this compaction replaced it (what a restore puts back). */
    checkpointBefore: jsonb('checkpoint_before'),
    /** The child session a `newSession` compaction wrote the compacted history to. */
    childSessionId: text('child_session_id'),
    /** `inPlace` or `newSession`. */
    mode: text('mode', { enum: ['inPlace', 'newSession'] }),
    model: text('model'),
    inputTokens: integer('input_tokens'),
    outputTokens: integer('output_tokens'),
    cacheReadTokens: integer('cache_read_tokens'),
    cacheWriteTokens: integer('cache_write_tokens'),
    costUsd: numeric('cost_usd', { precision: 12, scale: 6, mode: 'number' }),
    llmMs: integer('llm_ms'),
    /**
     * The predicted payback of a compaction (shared/policy/payback.ts), made before it on every
     * applied row and on a row skipped for not paying: savings over the expected remaining
     * requests, cost (summary call + prompt-cache rewrite), their ratio (null: free), and the
     * inputs (`PaybackInputs`: tokens saved per request, requests and where that came from, prices).
     */
    paybackSavingsUsd: numeric('payback_savings_usd', { precision: 14, scale: 8, mode: 'number' }),
    paybackCostUsd: numeric('payback_cost_usd', { precision: 14, scale: 8, mode: 'number' }),
    paybackRatio: numeric('payback_ratio', { precision: 12, scale: 4, mode: 'number' }),
    paybackInputs: jsonb('payback_inputs'),
    /**
     * The measured payback of an applied compaction, from the `session.run.completed` events that
     * followed it (at most `MAX_MEASURED_REQUESTS`): requests reported, their prompt tokens, what
     * those prompts would have held without it, the savings and ratio. Null until the first one.
     */
    measuredRequests: integer('measured_requests'),
    measuredTokensSent: bigint('measured_tokens_sent', { mode: 'number' }),
    measuredTokensWithout: bigint('measured_tokens_without', { mode: 'number' }),
    measuredSavingsUsd: numeric('measured_savings_usd', { precision: 14, scale: 8, mode: 'number' }),
    measuredRatio: numeric('measured_ratio', { precision: 12, scale: 4, mode: 'number' }),
    /** The events counted in the measurement: a redelivered event is not counted twice. */
    measuredEventIds: text('measured_event_ids').array(),
    durationMs: integer('duration_ms'),
    error: text('error'),
    restoredAt: timestamp('restored_at', { withTimezone: true }),
    /** `expired` rows: archived messages the retention pass dropped from this session. */
    expiredMessages: integer('expired_messages'),
    /** `expired` rows: the estimated tokens of those messages. */
    expiredTokens: bigint('expired_tokens', { mode: 'number' }),
    /**
     * `expired` rows: the compactions whose archived originals went (all of them: every row of one
     * compaction is archived at the same instant). None of them can be restored any more.
     */
    expiredCompactionIds: uuid('expired_compaction_ids').array(),
    /** `expired` rows: the cutoff; messages archived before this instant were dropped. */
    expiredBefore: timestamp('expired_before', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('compactions_tenant_idempotency_key_key').on(t.tenantId, t.idempotencyKey),
    index('compactions_session_created_idx').on(t.tenantId, t.sessionId, t.createdAt),
    // Whether a compaction in force rewrote a session's messages in place (the leaving read asks on
    // every summary): only such rows are indexed, so the check reads this small index whatever the
    // table's statistics say. Without it, statistics that saw none of a tenant's rows (a tenant new
    // since the last analyze) let the planner take any index that starts with the tenant and filter
    // every ledger row of it.
    index('compactions_rewrites_idx')
      .on(t.tenantId, t.sessionId)
      .where(sql`${t.status} = 'applied' and ${t.blocksCleared} is not null`),
    // The tenant-wide reads by time, each over its own rows only: budgets sum the paid rows'
    // cost_usd over the current UTC day and month; the dashboard lists the failures since a time.
    // Partial, so no lookup of one session can take them (it does not say `cost_usd > 0` or
    // `status = 'failed'`): a full (tenant_id, created_at) index gave a session's ledger read
    // ordered by created_at a way to walk every row of the tenant whenever the statistics saw
    // none of them. The ledger row every job writes enters them only when paid or failed.
    index('compactions_tenant_spend_idx').on(t.tenantId, t.createdAt).where(sql`${t.costUsd} > 0`),
    index('compactions_tenant_failed_idx').on(t.tenantId, t.createdAt).where(sql`${t.status} = 'failed'`),
  ],
);

export type SessionRow = typeof sessions.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type CompactionRow = typeof compactions.$inferSelect;

/** Statuses of a batched summary request. */
export const BATCH_STATUSES = ['queued', 'submitted', 'applied', 'skipped', 'failed'] as const;

/**
 * Summaries requested through the Message Batches API for sweep-found sessions: queued by the
 * sweep's compaction job with its plan, submitted in batches by the poller, applied (fenced, under
 * their idempotency key) when the batch ends.
 */
export const summaryBatches = pgTable(
  'summary_batches',
  {
    id: uuid('id').notNull().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    sessionId: text('session_id').notNull(),
    /** The sweep job's key: one batched summary per session version. */
    idempotencyKey: text('idempotency_key').notNull(),
    eventId: text('event_id'),
    /** The session's compaction version the plan was made at (the fence at apply). */
    expectedVersion: integer('expected_version').notNull(),
    /** The summarize strategy in force. */
    strategy: jsonb('strategy').notNull(),
    /** The plan (shared/strategies/plan.ts CompactPlan) the summary covers. */
    plan: jsonb('plan').notNull(),
    /** The Message Batches API batch id, once submitted. */
    batchId: text('batch_id'),
    status: text('status', { enum: BATCH_STATUSES }).notNull().default('queued'),
    reason: text('reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    // Per tenant, like the ledger's: the sweep's key names the tenant.
    uniqueIndex('summary_batches_tenant_idempotency_key_key').on(t.tenantId, t.idempotencyKey),
    index('summary_batches_open_idx')
      .on(t.status, t.batchId)
      .where(sql`${t.status} in ('queued', 'submitted')`),
  ],
);

/**
 * A tenant's webhook: after each applied compaction, the `session.compacted` event is POSTed to
 * `url`, signed with `secret` (HMAC-SHA256; producer/webhook-signature.ts). One per tenant.
 */
export const webhooks = pgTable('webhooks', {
  tenantId: text('tenant_id').primaryKey(),
  /** An http:// or https:// URL. */
  url: text('url').notNull(),
  /** The signing secret, kept in clear: every delivery is signed with it. Never logged or shown again. */
  secret: text('secret').notNull(),
  /** False: no delivery is enqueued (the webhook stays configured). */
  enabled: boolean('enabled').notNull().default(true),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export type WebhookRow = typeof webhooks.$inferSelect;

/** One row per attempt to deliver an event to a tenant's webhook, delivered or not. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').notNull().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    /** The event's id: the id of the compaction it tells (`webhook-id` is derived from it and the tenant). */
    eventId: uuid('event_id').notNull(),
    /** 1 for the first attempt, then 2, 3, ... (BullMQ's retries). */
    attempt: integer('attempt').notNull(),
    url: text('url').notNull(),
    /** The HTTP status of the response; null when none came (timeout, refused connection). */
    statusCode: integer('status_code'),
    /**
     * Why the attempt failed, for the operator: its class (`timed out`, `connection failed`,
     * `refused by address policy`; `HTTP <status>`) then `: ` and the detail; null when delivered.
     * Tenants are shown the class alone (`tenantDeliveryError`).
     */
    error: text('error'),
    /** From sending the request to the end of the response (or the failure), ms. */
    durationMs: integer('duration_ms').notNull(),
    attemptedAt: timestamp('attempted_at', { withTimezone: true }).notNull().defaultNow(),
    /** True for a 2xx response. */
    delivered: boolean('delivered').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('webhook_deliveries_tenant_event_idx').on(t.tenantId, t.eventId, t.attempt),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * The `Idempotency-Key`s of the HTTP API's appends (`POST /v1/sessions/{id}/messages`): one row per
 * tenant and key, inserted in the same transaction as the messages it appended, so a retried or
 * concurrent request with the same key finds it and gets the first append's seqs back instead of
 * appending again. `request_hash` (SHA-256 hex of the session and the body) tells a retry from a
 * different request reusing the key. Rows are kept at least 24 hours, then deleted
 * (`pruneAppendRequests` in producer/idempotency.ts); purging a session deletes its rows.
 */
export const appendRequests = pgTable(
  'append_requests',
  {
    tenantId: text('tenant_id').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    requestHash: text('request_hash').notNull(),
    /** The session the messages went to (the live one of the lineage named in the request). */
    sessionId: text('session_id').notNull(),
    /** Seqs of the first and last message appended. */
    firstSeq: bigint('first_seq', { mode: 'number' }).notNull(),
    lastSeq: bigint('last_seq', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.idempotencyKey] }),
    index('append_requests_created_idx').on(t.createdAt),
  ],
);

export type AppendRequestRow = typeof appendRequests.$inferSelect;

/**
 * The cost of LLM summaries in flight, reserved against the spend budgets (shared/policy/budget.ts)
 * before the call is made: the check of the budget and the insert of the reservation run under a
 * per-tenant advisory lock, so two workers cannot both fit in the same remaining budget. A
 * reservation is deleted in the transaction that writes the summary's ledger row (its real
 * `cost_usd` takes its place), or when the summary fails; one left by a worker that died stops
 * counting at `expires_at`.
 */
export const budgetReservations = pgTable(
  'budget_reservations',
  {
    id: uuid('id').notNull().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    /** The session's agent, for agent budgets; null for a session without one. */
    agentId: text('agent_id'),
    sessionId: text('session_id').notNull(),
    /** The summary's estimated cost ceiling, USD. */
    costUsd: numeric('cost_usd', { precision: 12, scale: 6, mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** After this instant the reservation no longer counts (its worker is presumed dead). */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('budget_reservations_tenant_idx').on(t.tenantId, t.expiresAt),
  ],
);

export type BudgetReservationRow = typeof budgetReservations.$inferSelect;

/**
 * API keys issued at run time (`compactor key create`, `POST /v1/admin/keys`): what each may do
 * and until when, never its secret: `secret_sha256` is the SHA-256 of the key's random secret
 * (shared/contract/api-keys.ts). A tenant key (`kind` `tenant`, prefix `cpt_`) acts on its
 * `tenant_id`; an admin key (`admin`, `cpa_`) on any tenant, and has `tenant_id` '' (no tenant id
 * is empty), so the primary key still starts with `tenant_id`. A request names the key by its id
 * alone, looked up through `api_keys_id_idx` (ids are 64 random bits; a repeat would be refused
 * as ambiguous, never confused).
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    tenantId: text('tenant_id').notNull(),
    /** Public id: 16 hex characters, in the key's text after its prefix. */
    id: text('id').notNull(),
    /** `tenant` or `admin`, as the key's prefix says. */
    kind: text('kind', { enum: ['tenant', 'admin'] }).notNull(),
    /** What the key is for (shown by `key list`). */
    name: text('name').notNull(),
    /** Its scopes (shared/contract/api-keys.ts SCOPES). */
    scopes: text('scopes').array().notNull(),
    /** SHA-256 of the key's secret, hex. */
    secretSha256: text('secret_sha256').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** After this instant the key is refused; null: never expires. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** When a request last authenticated with it, written at most about once a minute. */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** When it was revoked; refused from then on. */
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    /** The key this one replaced by `key rotate`, if any. */
    rotatedFrom: text('rotated_from'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('api_keys_id_idx').on(t.id),
    check('api_keys_kind_tenant_check', sql`(${t.kind} = 'admin') = (${t.tenantId} = '')`),
  ],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/**
 * Per-session leases on the `postgres` queue backend (worker/postgres/lease.ts), what Redis keys
 * hold on the `redis` backend: at most one live row per session. A lease is taken by inserting its
 * row, or by taking over a row whose `expires_at` has passed (then `fence` counts up); renewed and
 * released only by the holder's `token`. Expiry is read on the database's clock, so workers'
 * clocks need not agree. A lease saves a second LLM call; the version fence of the write is what
 * keeps data correct.
 */
export const sessionLeases = pgTable(
  'session_leases',
  {
    tenantId: text('tenant_id').notNull(),
    sessionId: text('session_id').notNull(),
    /** The holder's random token: renewals and the release name it. */
    token: uuid('token').notNull(),
    /** How many times the lease was taken, 1 up: a holder's number, higher for each later one. */
    fence: bigint('fence', { mode: 'number' }).notNull().default(1),
    /** After this instant another worker may take the lease. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.sessionId] })],
);

/**
 * Each tenant's compaction jobs pending on the `postgres` queue backend, which rank its next job
 * (producer/postgres/tenant-backlog.ts; the sorted set `<prefix>:backlogs` on Redis). A count whose
 * tenant last enqueued over an hour ago is stale: it counts as zero and is dropped.
 */
export const tenantBacklogs = pgTable('tenant_backlogs', {
  tenantId: text('tenant_id').primaryKey(),
  /** Jobs counted in and not yet counted out, ≥ 1 (a row at 0 is deleted). */
  pending: integer('pending').notNull(),
  lastEnqueuedAt: timestamp('last_enqueued_at', { withTimezone: true }).notNull(),
});

/**
 * The worker slots each tenant's running compaction jobs hold on the `postgres` queue backend
 * (worker/postgres/tenant-slots.ts; `<prefix>:active:<tenant>` on Redis), as kept by workers of
 * earlier releases: one row per running job, inserted and deleted. Workers of this release use
 * {@link tenantWorkerSlots}; this table stays for a rolling deploy.
 */
export const tenantSlots = pgTable(
  'tenant_slots',
  {
    tenantId: text('tenant_id').notNull(),
    token: uuid('token').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.token] })],
);

/**
 * The worker slots each tenant's running compaction jobs hold on the `postgres` queue backend
 * (worker/postgres/tenant-slots.ts; `<prefix>:active:<tenant>` on Redis): a tenant's rows are
 * numbered places, reused. A place is held while `expires_at` is in the future (taken with a new
 * `token`, renewed while its job runs, given back by setting it to `-infinity`); a crashed worker's
 * place frees itself at `expires_at`. Taking and giving back update a row in place without touching
 * its key, so the row stays on its page (a HOT update, pruned without vacuum) and a tenant has about
 * as many rows as it ever held places at once (a take racing another's give-back may add one; migration 0028).
 */
export const tenantWorkerSlots = pgTable(
  'tenant_worker_slots',
  {
    tenantId: text('tenant_id').notNull(),
    /** The place's number, 1 up, per tenant. */
    slot: integer('slot').notNull(),
    /** The holder's token; its release and renewal name it. */
    token: uuid('token').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.slot] })],
);

/**
 * The HTTP API's request-rate counters on the `postgres` queue backend, kept by
 * rate-limiter-flexible's `RateLimiterDrizzle` (worker/postgres/rate-limits.ts), whose columns
 * these are: `key` is the limiter's prefix and the tenant id, `points` the requests counted in
 * the window that ends at `expire`.
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  expire: timestamp('expire', { withTimezone: true }),
});

/**
 * The queue workers alive now, and where each listens (producer/postgres/queue-workers.ts reads
 * them; worker/postgres/queue-workers.ts writes them): a running `compactor worker` inserts its row
 * at start, renews `last_seen_at` every `WORKER_HEARTBEAT_MS` and deletes it when it closes
 * gracefully; a crashed worker's row stops counting once older than the staleness window
 * (shared/protocol/queue-workers.ts). Producers and `compactor doctor` compare their own queue
 * with these rows. Process bookkeeping, not tenant data: no `tenant_id`.
 */
export const queueWorkers = pgTable('queue_workers', {
  /** `<host>:<pid>:<random>`, one per worker process. */
  id: text('id').primaryKey(),
  /** `redis` or `postgres`. */
  backend: text('backend').notNull(),
  /** The queue's namespace: the BullMQ prefix on Redis, BullMQ's schema on Postgres. */
  namespace: text('namespace').notNull(),
  /** The Redis or database, for people (no password). */
  target: text('target').notNull(),
  /** The queues the worker takes jobs from. */
  queues: text('queues').array().notNull(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Who wrote a row of {@link claudeCodeEntries}. */
export const ENTRY_ORIGINS = ['sdk', 'compactor'] as const;

/**
 * The transcript lines the Claude Agent SDK mirrors to its `SessionStore`
 * (producer/frameworks/claude-agent-sdk/), one row per line, in the order they came: every line is
 * kept whole, as the SDK gave it, so a resume gets back exactly what was appended. `origin`
 * `compactor` marks the lines the store added when it served the session after a compaction
 * (a `compact_boundary` and the compacted history, the way Claude Code writes its own compaction),
 * kept so that later lines that point at them still find them. The `user` and `assistant` lines of
 * the main transcript are also the messages of the compactor session of the same id (`message_seq`
 * says which one).
 */
export const claudeCodeEntries = pgTable(
  'claude_code_entries',
  {
    tenantId: text('tenant_id').notNull(),
    /** The SDK's session id, which is also the compactor session's id. */
    sessionId: text('session_id').notNull(),
    /** The SDK's `subpath` (a subagent's transcript); '' for the main transcript. */
    subpath: text('subpath').notNull().default(''),
    /** The line's place in its transcript, 0 up. */
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** The SDK's `projectKey` the line was appended under. */
    projectKey: text('project_key').notNull(),
    /** The line's `uuid`, when it has one: a line is stored once per uuid. */
    uuid: text('uuid'),
    /** The line exactly as appended (`json`, not `jsonb`: key order kept). */
    entry: json('entry').notNull(),
    origin: text('origin', { enum: ENTRY_ORIGINS }).notNull().default('sdk'),
    /** For `compactor` lines: the session's compaction version they render. */
    compactionVersion: integer('compaction_version'),
    /** The compactor message seq this line became part of; null for a line that is no message (yet). */
    messageSeq: bigint('message_seq', { mode: 'number' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.sessionId, t.subpath, t.seq] }),
    uniqueIndex('claude_code_entries_uuid_idx')
      .on(t.tenantId, t.sessionId, t.subpath, t.uuid)
      .where(sql`${t.uuid} is not null`),
    index('claude_code_entries_project_idx').on(t.tenantId, t.projectKey),
  ],
);
