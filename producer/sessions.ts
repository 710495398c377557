/**
 * Writing sessions and messages, as agent services do: create a session with its transcript, or
 * append messages to a live one. Every write is scoped by tenant.
 */

import type { MessageParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import { legacyContent } from '../shared/contract/blocks.ts';
import {
  contentProblem,
  duplicateToolUseId,
  type InputProblem,
  type ToolUseIdAt,
} from '../shared/contract/content-checks.ts';
import {
  InvalidInputError,
  printable,
  SessionContinuedError,
  SessionExistsError,
  SessionNotFoundError,
  ToolUseIdTakenError,
} from '../shared/contract/errors.ts';
import { type Kind, legacyToolIds, type Role } from '../shared/contract/message.ts';
import {
  DEFAULT_SESSION_FORMAT,
  isSessionFormat,
  SESSION_FORMATS,
  type SessionFormat,
} from '../shared/contract/session-format.ts';
import { estimateMessageTokens } from '../shared/contract/tokens.ts';
import type { AiSdkStoredMessage } from '../shared/formats/ai-sdk/encoding.ts';
import type { MessageRow } from '../shared/formats/format.ts';
import type { ChatCompletionsMessage } from '../shared/formats/openai-chat/row.ts';
import type { ResponsesInputItem } from '../shared/formats/openai-responses/row.ts';
import {
  foreignWord,
  formatMismatch,
  likelyFormat,
  SESSION_FORMAT_RULES,
} from '../shared/formats/registry.ts';
import { DEFAULT_LIMITS, type SessionLimits } from '../shared/policy/limits.ts';
import {
  type AppendIdempotency,
  checkIdempotency,
  claimIdempotencyKey,
  recordAppend,
} from './idempotency.ts';
import { limitPassed } from './limits.ts';
import { countPdfPages } from './media/pdf-pages.ts';
import type { Db, Tx } from './postgres/db.ts';
import {
  INSERT_BATCH_ROWS,
  insertMessages,
  liveMessageWithToolUseId,
  type NewMessageRow,
} from './postgres/messages.ts';
import { sessionLimitsOf } from './postgres/session-limits.ts';
import {
  countAppendIn,
  insertSession,
  newestOfLineage,
  sessionCounts,
  sessionFormatOf,
} from './postgres/sessions.ts';
import { assertTools } from './tools.ts';

/**
 * A message in the corpus format (one text row per block: see the corpus README). `tokenCount`
 * defaults to the estimate of shared/contract/tokens.ts. Stored with its native equivalent
 * (shared/contract/blocks.ts, `legacyContent`).
 */
export interface NewMessage {
  seq: number;
  role: Role;
  kind: Exclude<Kind, 'summary'>;
  content: string;
  toolCallId?: string | null;
  toolName?: string | null;
  tokenCount?: number;
  pinned?: boolean;
  createdAt?: Date | null;
}

export type { ChatCompletionsMessage } from '../shared/formats/openai-chat/row.ts';
export type { ResponsesInputItem } from '../shared/formats/openai-responses/row.ts';

/**
 * A native message to store, kept exactly as given, with options: in an `anthropic` session an
 * Anthropic `MessageParam` (`role` user, assistant or system; `content` a string or a list of blocks
 * of any type); in an `openai-chat` session a Chat Completions message ({@link ChatCompletionsMessage});
 * in an `openai-responses` session a Responses API input item ({@link ResponsesInputItem}); in an
 * `ai-sdk` session an AI SDK prompt message, its file data encoded (shared/formats/ai-sdk/encoding.ts).
 */
export interface NativeMessage {
  message: MessageParam | ChatCompletionsMessage | ResponsesInputItem | AiSdkStoredMessage;
  /** Pinned messages never leave in a compaction. Default false. */
  pinned?: boolean;
  createdAt?: Date | null;
  /** Overrides the estimate (shared/contract/blocks.ts), in tokens. */
  tokenCount?: number;
}

/**
 * What {@link appendMessages} takes per message, in the session's format: a bare `MessageParam` as
 * the Anthropic SDK types it, or a corpus-format message (`anthropic` sessions); a Chat Completions
 * message as the `openai` SDK types it (`openai-chat` sessions); a Responses input item as the
 * `openai` SDK types it (`openai-responses` sessions); or a {@link NativeMessage} (a native message
 * with options).
 */
export type AppendMessage =
  | MessageParam
  | ChatCompletionsMessage
  | ResponsesInputItem
  | NativeMessage
  | Omit<NewMessage, 'seq'>;

/** Options of {@link appendMessages}. */
export interface AppendOptions {
  /**
   * The `version` of the `loadContext` result the agent sent, when these messages include the
   * model's reply to it. Its thinking blocks are signed over that context, and the version tells
   * whether a compaction changed the context since (then they are left out of later contexts, as
   * they would fail); without it, a reply appended after a compaction that ran while the model was
   * answering would keep thinking signed over the context before it.
   */
  contextVersion?: number;
  /**
   * Makes the append idempotent: the key is recorded in `append_requests` in the same transaction
   * as the messages, so a retry (or a concurrent twin) with the same key and the same
   * `requestHash` appends nothing and gets the first append's seqs; the same key with another
   * `requestHash` throws {@link IdempotencyKeyReusedError}. Keys are kept at least 24 hours
   * (producer/idempotency.ts). Without it, every call appends.
   */
  idempotency?: AppendIdempotency;
  /**
   * The session-size limits of a tenant whose policy sets none (default `DEFAULT_LIMITS` of
   * shared/policy/limits.ts); the tenant policy's `limits` win, field by field.
   */
  limits?: SessionLimits;
  /**
   * The session's format, when the caller knows it (a framework adapter does): the messages are
   * validated in it first, where otherwise their shape picks the format to try first (a plain
   * `{ role: "user", content: [{ type: "text", … }] }` reads as Anthropic's, and an append to a
   * session of another format then validates and counts twice). A wrong one costs that second try
   * only: the session's own format still decides.
   */
  format?: SessionFormat;
}

/** Where an append went (see {@link appendToLiveSession}). */
export interface AppendResult {
  /** The session the messages are in. */
  sessionId: string;
  /** Their seqs, in order. */
  seqs: number[];
  /**
   * True when an append with the same idempotency key had already written these messages and
   * nothing was written now.
   */
  replayed: boolean;
}

export { SessionContinuedError, SessionExistsError };

export interface CreateSessionInput {
  tenantId: string;
  sessionId: string;
  agentId?: string | null;
  /** Context window of the session's model, in tokens. */
  contextWindow?: number | null;
  /** Seqs as given, strictly ascending; corpus-format or native ({@link NativeMessage} with a seq). */
  messages: Array<NewMessage | (NativeMessage & { seq: number })>;
  /** The tools the agent sends with the session's requests (see `setSessionTools`). */
  tools?: ToolUnion[] | null;
  /** The session-size limits of a tenant whose policy sets none (see {@link AppendOptions.limits}). */
  limits?: SessionLimits;
  /**
   * The wire format of the session's messages, fixed for its life (shared/formats/session-format.ts):
   * `anthropic` (default), `openai-chat` (Chat Completions messages) or `openai-responses` (Responses
   * input items); corpus-format rows are refused in the OpenAI formats.
   */
  format?: SessionFormat;
}

/**
 * Creates a session and stores its messages (seqs as given, strictly ascending) in one
 * transaction, in batches of {@link INSERT_BATCH_ROWS}.
 * @returns the number of messages and estimated tokens stored.
 * @throws {InvalidInputError} naming the message and field, when one is not a valid message of the
 *   session's `format` (or `format` names no format; nothing is written).
 * @throws {SessionExistsError} if the tenant already has this session id (nothing is written).
 * @throws {SessionLimitError} if the messages pass the tenant's session-size limits (nothing is written).
 */
export async function createSession(
  db: Db,
  input: CreateSessionInput,
): Promise<{ messageCount: number; tokenCount: number }> {
  if (input.tools) assertTools(input.tools);
  const format = input.format ?? DEFAULT_SESSION_FORMAT;
  if (!isSessionFormat(format)) {
    throw new InvalidInputError(
      `format: expected one of ${SESSION_FORMATS.map((f) => `"${f}"`).join(', ')}, got ${JSON.stringify(format)}`,
    );
  }
  const normalized = input.messages.map((m, i) => normalize(m, `messages[${i}]`, format, input.sessionId));
  assertUniqueToolUseIds(normalized);
  const rows = input.messages.map((m, i) =>
    toRow(input.tenantId, input.sessionId, m.seq, normalized[i] as Normalized),
  );
  const tokenCount = rows.reduce((sum, r) => sum + r.tokenCount, 0);
  const lastSeq = rows.length > 0 ? (rows[rows.length - 1]?.seq ?? -1) : -1;
  await db.transaction(async (tx) => {
    const limits = await sessionLimitsOf(tx, input.tenantId, input.limits);
    const passed = limitPassed(
      input.sessionId,
      limits,
      { messages: 0, tokens: 0 },
      { messages: rows.length, tokens: tokenCount },
    );
    if (passed) throw passed;
    const created = await insertSession(tx, {
      id: input.sessionId,
      tenantId: input.tenantId,
      agentId: input.agentId ?? null,
      contextWindow: input.contextWindow ?? null,
      tools: input.tools ?? null,
      format,
      lastSeq,
      messageCount: rows.length,
      tokenCount,
    });
    if (!created) {
      throw new SessionExistsError(
        `session "${input.sessionId}" already exists for tenant "${input.tenantId}"; not imported again`,
      );
    }
    await insertMessages(tx, rows);
  });
  return { messageCount: rows.length, tokenCount };
}

/**
 * Appends messages to a live session, giving them the next seqs (`last_seq + 1`, ...), as an
 * agent does after a run: pass the `MessageParam`s it sent and received (the SDK's own types; a
 * response's `{ role: 'assistant', content: response.content }` as is). Their content is stored
 * exactly as given. Takes the session row lock only for the counter update, so it waits for at
 * most one compaction's apply transaction. A session that continued in a child is frozen: nothing
 * is written into it (see {@link appendToLiveSession} to follow it instead).
 * @returns the seqs assigned, in order.
 * @throws {InvalidInputError} naming the message and field, when one is not a valid message
 *   (nothing is written).
 * @throws {SessionNotFoundError} if the tenant has no such session.
 * @throws {SessionContinuedError} naming the live session, if this one continued in a child.
 * @throws {IdempotencyKeyReusedError} when `options.idempotency.key` was used for another request.
 * @throws {SessionLimitError} when the session would pass its tenant's `maxSessionMessages` or
 *   `maxSessionTokens` (checked in the statement that counts the messages in, so concurrent appends
 *   cannot pass it together; nothing is written).
 */
export async function appendMessages(
  db: Db,
  tenantId: string,
  sessionId: string,
  newMessages: AppendMessage[],
  options: AppendOptions = {},
): Promise<number[]> {
  return (await appendOnce(db, tenantId, sessionId, newMessages, options)).seqs;
}

/**
 * {@link appendMessages}, saying where the messages are and whether an earlier append with the
 * same idempotency key had written them (then the session the key recorded, which may be a child
 * when the first append followed the lineage).
 */
async function appendOnce(
  db: Db,
  tenantId: string,
  sessionId: string,
  newMessages: AppendMessage[],
  options: AppendOptions,
): Promise<AppendResult> {
  if (newMessages.length === 0) return { sessionId, seqs: [], replayed: false };
  const contextVersion = options.contextVersion ?? null;
  if (contextVersion !== null && !(Number.isSafeInteger(contextVersion) && contextVersion >= 0)) {
    throw new InvalidInputError(`contextVersion: expected a version from loadContext, got ${contextVersion}`);
  }
  if (options.idempotency) checkIdempotency(options.idempotency);
  // The messages are validated before the transaction, in the format their shape suggests (so an
  // Anthropic append costs no extra read). The session's own format is read when that validation
  // fails (the error then speaks of the session's format), and by the update that counts the
  // messages in: when it differs, that transaction is rolled back (nothing written) and the append
  // validated again in the session's format.
  if (options.format !== undefined && !isSessionFormat(options.format)) {
    throw new InvalidInputError(
      `format: expected one of ${SESSION_FORMATS.map((f) => `"${f}"`).join(', ')}, got ${JSON.stringify(options.format)}`,
    );
  }
  const guessed = options.format ?? likelyFormat(newMessages.map(nativeOf));
  let format = guessed;
  let normalized: Normalized[];
  try {
    normalized = normalizeAll(newMessages, format, sessionId, contextVersion);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    const actual = await sessionFormatOf(db, tenantId, sessionId);
    if (actual === undefined || actual === format) throw error;
    format = actual;
    normalized = normalizeAll(newMessages, format, sessionId, contextVersion);
  }
  try {
    return await appendIn(db, tenantId, sessionId, normalized, options, format);
  } catch (error) {
    if (!(error instanceof OtherFormat)) throw error;
    normalized = normalizeAll(newMessages, error.format, sessionId, contextVersion);
    return appendIn(db, tenantId, sessionId, normalized, options, error.format);
  }
}

/** Thrown inside an append's transaction when the session's format is not the one validated. */
class OtherFormat extends Error {
  constructor(readonly format: SessionFormat) {
    super(`the session's format is ${format}`);
  }
}

/**
 * The message object of an append entry (a {@link NativeMessage}'s `message`, or the entry); null
 * for a corpus-format row, which belongs to no wire format.
 */
function nativeOf(m: AppendMessage): unknown {
  if (typeof m !== 'object' || m === null || 'kind' in m) return null;
  return 'message' in m && !('role' in m) ? m.message : m;
}

/**
 * Validates an append's messages as `format` and derives their rows.
 * @throws {InvalidInputError} naming the first bad message's field, or a repeated tool call id.
 */
function normalizeAll(
  newMessages: AppendMessage[],
  format: SessionFormat,
  sessionId: string,
  contextVersion: number | null,
): Normalized[] {
  const normalized = newMessages.map((m, i) => ({
    ...normalize(m, `messages[${i}]`, format, sessionId),
    contextVersion,
  }));
  assertUniqueToolUseIds(normalized);
  return normalized;
}

/** {@link appendOnce}'s transaction, for messages validated as `format`. */
async function appendIn(
  db: Db,
  tenantId: string,
  sessionId: string,
  normalized: Normalized[],
  options: AppendOptions,
  format: SessionFormat,
): Promise<AppendResult> {
  const { idempotency } = options;
  const total = normalized.reduce((sum, m) => sum + m.tokenCount, 0);
  return db.transaction(async (tx) => {
    if (idempotency) {
      // First, before the session row's lock: a twin request waits here, not holding that lock.
      const earlier = await claimIdempotencyKey(tx, tenantId, sessionId, idempotency);
      if (earlier) return { ...earlier, replayed: true };
    }
    const adding = { messages: normalized.length, tokens: total };
    const row = await countIn(tx, tenantId, sessionId, adding, options);
    if (row.format !== format) throw new OtherFormat(row.format);
    // Under the session row's lock (taken by the update above), so two appends cannot both add an id.
    await assertToolUseIdsFree(tx, tenantId, sessionId, normalized);
    const first = row.lastSeq - normalized.length + 1;
    const rows = normalized.map((m, i) => toRow(tenantId, sessionId, first + i, m));
    await insertMessages(tx, rows);
    const appended = { sessionId, seqs: rows.map((r) => r.seq) };
    if (idempotency) await recordAppend(tx, tenantId, idempotency.key, appended);
    return { ...appended, replayed: false };
  });
}

/**
 * Counts an append into the session row (its seqs, messages and tokens) if the session is live and
 * stays within its tenant's size limits, in one statement: the row lock it takes orders concurrent
 * appends, and each re-checks the limits on the counts the one before it left.
 * @returns the session's new `last_seq`.
 * @throws {SessionNotFoundError}, {@link SessionContinuedError}, {@link SessionLimitError}.
 */
async function countIn(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  adding: { messages: number; tokens: number },
  options: AppendOptions,
): Promise<{ lastSeq: number; format: SessionFormat }> {
  const defaults = options.limits ?? DEFAULT_LIMITS;
  // A compaction may shrink the session between a refused update and the read of why: try again.
  for (let attempt = 0; ; attempt++) {
    const row = await countAppendIn(tx, tenantId, sessionId, adding, defaults);
    if (row) return row;
    const found = await sessionCounts(tx, tenantId, sessionId);
    if (!found) throw new SessionNotFoundError(tenantId, sessionId);
    if (found.child !== null) {
      throw new SessionContinuedError(sessionId, await liveSessionOf(tx, tenantId, sessionId));
    }
    const limits = await sessionLimitsOf(tx, tenantId, defaults);
    const passed = limitPassed(sessionId, limits, found, adding);
    if (passed) throw passed;
    if (attempt >= 3) throw new Error(`session "${sessionId}" changed under the append 4 times; retry it`);
  }
}

/**
 * Appends to the live session of `sessionId`'s lineage: the session itself, or the child it
 * continued in after a `newSession` compaction (followed again if that one transitions while we
 * write). With `options.idempotency`, a repeat of an earlier request returns where that one went
 * (`replayed: true`) and writes nothing.
 * @returns where the messages went and their seqs. Enqueue the run's event for that session.
 * @throws {SessionNotFoundError} if the tenant has no such session.
 * @throws {InvalidInputError} naming the message and field, when one is not a valid message.
 * @throws {IdempotencyKeyReusedError} when the key was used for another request.
 */
export async function appendToLiveSession(
  db: Db,
  tenantId: string,
  sessionId: string,
  newMessages: AppendMessage[],
  options: AppendOptions = {},
): Promise<AppendResult> {
  let target = sessionId;
  for (let hop = 0; ; hop++) {
    try {
      return await appendOnce(db, tenantId, target, newMessages, options);
    } catch (error) {
      if (!(error instanceof SessionContinuedError) || hop >= 100) throw error;
      target = error.liveSessionId;
    }
  }
}

/** A message ready for its row: everything but the seq. */
type Normalized = MessageRow;

/**
 * Validates one message as `format` (the session's) and derives its row: a corpus-format row in an
 * `anthropic` session, else a message of the format, bare or inside `{ message, pinned, … }`.
 * @throws {InvalidInputError} naming `where` and the field: a message of another format (the
 *   registry's words), or one its format refuses.
 */
function normalize(
  m: AppendMessage | NewMessage | (NativeMessage & { seq: number }),
  where: string,
  format: SessionFormat,
  sessionId: string,
): Normalized {
  if (typeof m !== 'object' || m === null) throw new InvalidInputError(`${where}: expected a message object`);
  if ('kind' in m) {
    // A corpus-format row is read into the default format's content (see NewMessage).
    if (format !== DEFAULT_SESSION_FORMAT) {
      throw formatMismatch(`${where}.kind: a corpus-format message`, sessionId, format);
    }
    return corpusRow(m as Omit<NewMessage, 'seq'>, where);
  }
  const wrapper = isWrapper(m) ? m : null;
  const message = wrapper ? wrapper.message : m;
  // Named as a bare message's are, `messages[0].role`, with or without the wrapper.
  const foreign = foreignWord(format, message, where);
  if (foreign) throw formatMismatch(foreign, sessionId, format);
  const options = wrapper
    ? { wrapped: true, pinned: wrapper.pinned, createdAt: wrapper.createdAt, tokenCount: wrapper.tokenCount }
    : {};
  return SESSION_FORMAT_RULES[format].rowOf(message, where, { ...options, pdfPages: countPdfPages });
}

/** Whether an entry is a {@link NativeMessage} (`{ message, … }`), not a message itself. */
function isWrapper(m: object): m is NativeMessage {
  return 'message' in m && !('role' in m) && !('type' in m);
}

/**
 * Validates a corpus-format row and derives its row, its content read into Anthropic blocks.
 * @throws {InvalidInputError} naming the field.
 */
function corpusRow(c: Omit<NewMessage, 'seq'>, where: string): Normalized {
  const problem =
    contentProblem(c.content, where) ??
    ([c.toolCallId, c.toolName].some((v) => v !== undefined && v !== null && typeof v !== 'string')
      ? { field: `${where}.toolCallId`, message: 'expected a string' }
      : (contentProblem(c.toolCallId ?? '', `${where}.toolCallId`) ??
        contentProblem(c.toolName ?? '', `${where}.toolName`)));
  if (problem) throw invalid(problem);
  const contentBlocks = legacyContent({
    role: c.role,
    kind: c.kind,
    content: c.content,
    toolCallId: c.toolCallId ?? null,
    toolName: c.toolName ?? null,
  });
  const id = c.toolCallId ?? null;
  const { toolUseIds, toolResultIds } = legacyToolIds(c.kind, id);
  return {
    role: c.role,
    kind: c.kind,
    content: c.content,
    contentBlocks,
    toolCallId: id,
    toolName: c.toolName ?? null,
    toolUseIds,
    toolResultIds,
    hasThinking: false,
    tokenCount: c.tokenCount ?? estimateMessageTokens(c.content),
    pinned: c.pinned ?? false,
    createdAt: c.createdAt ?? null,
  };
}

function invalid({ field, message }: InputProblem): InvalidInputError {
  return new InvalidInputError(`${field}: ${message}`);
}

/**
 * Refuses a request whose native messages repeat a `tool_use` id (corpus-format rows are records
 * of other frameworks, which reuse ids; they are kept as they are).
 * @throws {InvalidInputError} naming the second block's id field.
 */
function assertUniqueToolUseIds(normalized: readonly Normalized[]): void {
  const problem = duplicateToolUseId(normalized.flatMap((m) => m.toolUseIdsAt ?? []));
  if (problem) throw invalid(problem);
}

/**
 * Refuses appended `tool_use` ids that the session's live messages already hold: what the agent
 * is sent next must hold each id once. Archived messages are not read (an archive grows without
 * bound, and this runs under the session row lock); a restore that would bring an archived id back
 * beside a live one is refused instead (worker/postgres/restore.ts).
 * @throws {ToolUseIdTakenError} naming the first such id's field.
 */
async function assertToolUseIdsFree(
  tx: Tx,
  tenantId: string,
  sessionId: string,
  normalized: readonly Normalized[],
): Promise<void> {
  const wanted = normalized.flatMap((m) => m.toolUseIdsAt ?? []);
  if (wanted.length === 0) return;
  const held = await liveMessageWithToolUseId(
    tx,
    tenantId,
    sessionId,
    wanted.map((w) => w.id),
  );
  if (!held) return;
  const taken = wanted.find((w) => held.ids.includes(w.id)) as ToolUseIdAt;
  throw new ToolUseIdTakenError(
    `${taken.field}: tool_use id "${printable(taken.id, 100)}" is already used in session "${printable(sessionId)}" (seq ${held.seq}); tool_use ids are unique within a session`,
    taken.field,
  );
}

function toRow(tenantId: string, sessionId: string, seq: number, normalized: Normalized) {
  const { toolUseIdsAt: _where, ...m } = normalized;
  return {
    tenantId,
    sessionId,
    seq,
    ...m,
    createdAt: m.createdAt ?? undefined,
  } satisfies NewMessageRow;
}

/**
 * The live session of a lineage: follows `child_session_id` from `sessionId` (a session that
 * continued in a child after a `newSession` compaction) to the newest descendant, in one query.
 * Agents call it to know where to append and what to load.
 * @returns the live session's id (`sessionId` itself when it never transitioned).
 * @throws {SessionNotFoundError} if the tenant has no such session.
 */
export async function liveSessionOf(
  db: Pick<Db, 'execute'>,
  tenantId: string,
  sessionId: string,
): Promise<string> {
  const live = await newestOfLineage(db, tenantId, sessionId);
  if (!live) throw new SessionNotFoundError(tenantId, sessionId);
  return live;
}
