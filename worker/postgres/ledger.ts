/**
 * The ledger (`compactions`): the one place a ledger row is built from what the pipeline asked for
 * (a {@link Change} or a {@link NoChange}) and what the write found, and written. One fixed
 * statement, prepared once per connection, can carry the session's counter update with it. The hot path writes one per job; drizzle's insert
 * builder spent about as long building it as Postgres spent running it (`npm run bench`, part 1),
 * so the text is built once here from the column list and only the values travel.
 */

import { randomUUID } from 'node:crypto';
import { type Db, executePrepared, type Tx } from '../../producer/postgres/db.ts';
import type { CompactionRow } from '../../producer/postgres/schema.ts';
import type { Checkpoint } from '../../shared/summary/checkpoint.ts';
import type { Change, LedgerEntry, NoChange } from '../pipeline/ports.ts';
import type { EffectFacts } from './effects.ts';
import type { LockedSession } from './lock.ts';

/** Every column of a ledger row but `created_at` (the database's clock sets it). */
export type LedgerValues = Omit<CompactionRow, 'createdAt'>;

/** The columns, in the order of the statement's parameters: [field, column, cast]. */
const COLUMNS: ReadonlyArray<readonly [keyof LedgerValues, string, string]> = [
  ['id', 'id', 'uuid'],
  ['sessionId', 'session_id', 'text'],
  ['tenantId', 'tenant_id', 'text'],
  ['idempotencyKey', 'idempotency_key', 'text'],
  ['eventId', 'event_id', 'text'],
  ['trigger', 'trigger', 'text'],
  ['strategy', 'strategy', 'text'],
  ['summarizer', 'summarizer', 'text'],
  ['instructions', 'instructions', 'text'],
  ['status', 'status', 'text'],
  ['reason', 'reason', 'text'],
  ['cutoffSeq', 'cutoff_seq', 'bigint'],
  ['lastSeq', 'last_seq', 'bigint'],
  ['summarySeq', 'summary_seq', 'bigint'],
  ['compactionVersion', 'compaction_version', 'integer'],
  ['messagesBefore', 'messages_before', 'integer'],
  ['messagesAfter', 'messages_after', 'integer'],
  ['tokensBefore', 'tokens_before', 'bigint'],
  ['tokensAfter', 'tokens_after', 'bigint'],
  ['messagesArchived', 'messages_archived', 'integer'],
  ['blocksCleared', 'blocks_cleared', 'integer'],
  ['thinkingPreserved', 'thinking_preserved', 'boolean'],
  ['thinkingNote', 'thinking_note', 'text'],
  ['summary', 'summary', 'text'],
  ['fidelity', 'fidelity', 'numeric'],
  ['fidelityParts', 'fidelity_parts', 'jsonb'],
  ['lost', 'lost', 'jsonb'],
  ['checkpointBefore', 'checkpoint_before', 'jsonb'],
  ['childSessionId', 'child_session_id', 'text'],
  ['mode', 'mode', 'text'],
  ['model', 'model', 'text'],
  ['inputTokens', 'input_tokens', 'integer'],
  ['outputTokens', 'output_tokens', 'integer'],
  ['cacheReadTokens', 'cache_read_tokens', 'integer'],
  ['cacheWriteTokens', 'cache_write_tokens', 'integer'],
  ['costUsd', 'cost_usd', 'numeric'],
  ['llmMs', 'llm_ms', 'integer'],
  ['paybackSavingsUsd', 'payback_savings_usd', 'numeric'],
  ['paybackCostUsd', 'payback_cost_usd', 'numeric'],
  ['paybackRatio', 'payback_ratio', 'numeric'],
  ['paybackInputs', 'payback_inputs', 'jsonb'],
  ['measuredRequests', 'measured_requests', 'integer'],
  ['measuredTokensSent', 'measured_tokens_sent', 'bigint'],
  ['measuredTokensWithout', 'measured_tokens_without', 'bigint'],
  ['measuredSavingsUsd', 'measured_savings_usd', 'numeric'],
  ['measuredRatio', 'measured_ratio', 'numeric'],
  ['measuredEventIds', 'measured_event_ids', 'text[]'],
  ['durationMs', 'duration_ms', 'integer'],
  ['error', 'error', 'text'],
  ['restoredAt', 'restored_at', 'timestamptz'],
  ['expiredMessages', 'expired_messages', 'integer'],
  ['expiredTokens', 'expired_tokens', 'bigint'],
  ['expiredCompactionIds', 'expired_compaction_ids', 'uuid[]'],
  ['expiredBefore', 'expired_before', 'timestamptz'],
];

const INSERT = `insert into compactions (${COLUMNS.map(([, column]) => column).join(', ')})
  values (${COLUMNS.map(([, , cast], i) => `$${i + 1}::${cast}`).join(', ')})`;

const N = COLUMNS.length;

/** Ledger insert that does nothing when the idempotency key is already used. */
const INSERT_UNLESS_KEY_USED = `${INSERT} on conflict do nothing returning created_at`;

/**
 * The session's row after an apply and the ledger row, in one statement: a data-modifying CTE
 * always runs to completion, whether or not the insert reads it. The checkpoint and the child
 * session id are left as they are when null.
 */
const UPDATE_SESSION_AND_INSERT = `with counters as (
    update sessions set
      message_count = $${N + 3}::integer,
      token_count = $${N + 4}::bigint,
      checkpoint = coalesce($${N + 5}::jsonb, checkpoint),
      child_session_id = coalesce($${N + 6}::text, child_session_id),
      storm_guard_seq = $${N + 7}::bigint,
      reported_input_tokens = null,
      reported_token_count = null,
      compaction_version = $${N + 8}::integer,
      compaction_count = compaction_count + 1,
      last_compacted_at = now(),
      updated_at = now()
    where tenant_id = $${N + 1}::text and id = $${N + 2}::text
    returning 1
  )
  ${INSERT} returning created_at`;

/** What an apply sets on the session row besides the compaction count and the timestamps. */
export interface SessionAfterApply {
  messageCount: number;
  tokenCount: number;
  /** The new checkpoint; null leaves it as it is. */
  checkpoint: Checkpoint | null;
  /** The child a `newSession` compaction continued in; null leaves it as it is. */
  childSessionId: string | null;
  /** The storm guard: `last_seq` when the session is still over its trigger, else null. */
  stormGuardSeq: number | null;
  compactionVersion: number;
}

/** A ledger row's values with every optional column null. */
function ledgerValues(
  values: Pick<
    LedgerValues,
    'id' | 'sessionId' | 'tenantId' | 'idempotencyKey' | 'eventId' | 'trigger' | 'strategy' | 'status'
  > &
    Partial<LedgerValues>,
): LedgerValues {
  const row = {} as Record<keyof LedgerValues, unknown>;
  for (const [field] of COLUMNS) row[field] = values[field] ?? null;
  row.thinkingPreserved = values.thinkingPreserved ?? false;
  return row as LedgerValues;
}

/** The columns every row takes from its entry: who asked, why, and what the LLM cost. */
function entryColumns(entry: LedgerEntry) {
  const { usage } = entry;
  return {
    tenantId: entry.tenantId,
    sessionId: entry.sessionId,
    idempotencyKey: entry.idempotencyKey,
    eventId: entry.eventId,
    trigger: entry.trigger,
    strategy: entry.strategy,
    reason: entry.reason,
    error: entry.error,
    summarizer: entry.summarizer,
    instructions: entry.instructions,
    durationMs: Math.round(entry.durationMs),
    thinkingPreserved: entry.thinking?.preserved ?? false,
    thinkingNote: entry.thinking?.note ?? null,
    fidelity: entry.fidelity?.score ?? null,
    fidelityParts: entry.fidelity?.parts ?? null,
    lost: entry.fidelity?.lost ?? null,
    ...(entry.payback
      ? {
          paybackSavingsUsd: entry.payback.savingsUsd,
          paybackCostUsd: entry.payback.costUsd,
          paybackRatio: entry.payback.ratio,
          paybackInputs: entry.payback.inputs,
        }
      : {}),
    ...(usage
      ? {
          model: usage.model,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          cacheReadTokens: usage.cacheReadTokens,
          cacheWriteTokens: usage.cacheWriteTokens,
          costUsd: usage.costUsd,
          llmMs: Math.round(usage.llmMs),
        }
      : {}),
  };
}

/**
 * The row of an applied change: the counters before (the locked row) and after (what the effects
 * did), the version it produced, the summary it wrote and the checkpoint it replaced (so a
 * restore can put it back).
 */
export function appliedRow(
  id: string,
  change: Change,
  locked: LockedSession,
  facts: EffectFacts,
  version: number,
): LedgerValues {
  const summary = change.effects.find((e) => e.type === 'writeSummary');
  return ledgerValues({
    ...entryColumns(change.entry),
    id,
    status: 'applied',
    mode: change.entry.mode,
    childSessionId: facts.childSessionId,
    cutoffSeq: change.cutoffSeq,
    lastSeq: locked.lastSeq,
    summarySeq: change.summarySeq,
    compactionVersion: version,
    messagesBefore: locked.messageCount,
    messagesAfter: facts.messagesAfter,
    tokensBefore: locked.tokenCount,
    tokensAfter: facts.tokensAfter,
    messagesArchived: facts.archived,
    blocksCleared: facts.blocksCleared,
    summary: summary?.text ?? null,
    checkpointBefore: summary ? locked.checkpoint : null,
  });
}

/**
 * The row of a decision that changed nothing: the session's counters before and after are equal.
 * A `failed` row never holds an idempotency key, so a later attempt may still apply.
 */
export function unchangedRow(
  noChange: NoChange,
  counts: { messageCount: number; tokenCount: number },
): LedgerValues {
  const columns = entryColumns(noChange.entry);
  return ledgerValues({
    ...columns,
    idempotencyKey: noChange.status === 'failed' ? null : columns.idempotencyKey,
    id: randomUUID(),
    status: noChange.status,
    messagesBefore: counts.messageCount,
    messagesAfter: counts.messageCount,
    tokensBefore: counts.tokenCount,
    tokensAfter: counts.tokenCount,
    messagesArchived: 0,
  });
}

function parametersOf(values: LedgerValues): unknown[] {
  return COLUMNS.map(([field, , cast]) => {
    const value = values[field];
    if (value === null || value === undefined) return null;
    if (cast === 'jsonb') return JSON.stringify(value);
    if (value instanceof Date) return value.toISOString();
    return value;
  });
}

function rowOf(values: LedgerValues, createdAt: string | Date): CompactionRow {
  return { ...values, createdAt: createdAt instanceof Date ? createdAt : new Date(createdAt) };
}

/**
 * Inserts a ledger row; with `session`, also updates the session's row (`tenantId`, `sessionId`
 * of `values`) in the same statement. Run it inside the apply transaction, under the row lock.
 * @returns the row as stored, or null when `skipIfKeyUsed` and the idempotency key is taken.
 * @throws the database's unique violation when the key is taken and `skipIfKeyUsed` is not set.
 */
export async function insertLedgerRow(
  db: Db | Tx,
  values: LedgerValues,
  options: { session?: SessionAfterApply; skipIfKeyUsed?: boolean } = {},
): Promise<CompactionRow | null> {
  const { session } = options;
  if (session && options.skipIfKeyUsed) throw new Error('insertLedgerRow: an apply cannot skip on conflict');
  const parameters = parametersOf(values);
  const text = session
    ? UPDATE_SESSION_AND_INSERT
    : options.skipIfKeyUsed
      ? INSERT_UNLESS_KEY_USED
      : `${INSERT} returning created_at`;
  if (session) {
    parameters.push(
      values.tenantId,
      values.sessionId,
      session.messageCount,
      session.tokenCount,
      session.checkpoint === null ? null : JSON.stringify(session.checkpoint),
      session.childSessionId,
      session.stormGuardSeq,
      session.compactionVersion,
    );
  }
  const [row] = await executePrepared<{ created_at: string | Date }>(db, { sql: text, params: parameters });
  return row ? rowOf(values, row.created_at) : null;
}
