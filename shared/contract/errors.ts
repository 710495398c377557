/**
 * compactor's error taxonomy, in one file. Each class is small, sets `name`, and belongs to one of
 * three families that decide what happens next:
 * - input that can never succeed ({@link InvalidInputError} and its subclasses, and
 *   {@link ConfigError} / {@link SummarizerConfigError}: fix the input or the configuration);
 * - conflicts that resolve themselves ({@link LeaseBusyError}, {@link FenceError}: try again);
 * - transient failures ({@link RateLimitedError}, {@link TransientError}, {@link DatabaseError}, and
 *   anything unknown).
 * {@link toError} turns whatever was thrown into an `Error`, once, at the edge that catches it. The
 * BullMQ worker's table from error to job action is `worker/queue/compaction/job-actions.ts`.
 */

/** Input that can never succeed: a bad event, an unknown session, a foreign tenant. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** The session does not exist for this tenant (or belongs to another tenant: same answer). */
export class SessionNotFoundError extends InvalidInputError {
  override name = 'SessionNotFoundError';
  constructor(tenantId: string, sessionId: string) {
    super(`session "${printable(sessionId)}" not found for tenant "${printable(tenantId)}"`);
  }
}

/**
 * An appended `tool_use` block reuses an id the session's live messages already hold; nothing was
 * written. `field` names the block's id in the request (`messages[3].content[1].id`).
 */
export class ToolUseIdTakenError extends InvalidInputError {
  override name = 'ToolUseIdTakenError';
  constructor(
    message: string,
    /** The request field that holds the id. */
    readonly field: string,
  ) {
    super(message);
  }
}

/** A session id is already taken for the tenant; nothing was written. */
export class SessionExistsError extends InvalidInputError {
  override name = 'SessionExistsError';
}

/**
 * The session continued in a child session (a `newSession` compaction) and is frozen: writes go to
 * the live session, {@link SessionContinuedError.liveSessionId}.
 */
export class SessionContinuedError extends InvalidInputError {
  override name = 'SessionContinuedError';
  constructor(
    sessionId: string,
    /** The newest session of the lineage: where the conversation goes on. */
    readonly liveSessionId: string,
  ) {
    const live = printable(liveSessionId);
    super(
      `session "${printable(sessionId)}" continued in session "${live}" after a newSession compaction and ` +
        `takes no more messages: append to "${live}" (appendToLiveSession follows the lineage)`,
    );
  }
}

/**
 * A restore of a compaction whose archived originals a retention pass dropped: they are gone, so
 * the compaction can never be undone. The message says when and under which retention.
 */
export class ArchiveExpiredError extends InvalidInputError {
  override name = 'ArchiveExpiredError';
  constructor(
    message: string,
    /** The compaction that cannot be restored. */
    readonly compactionId: string,
    /** The `expired` ledger row that records the drop. */
    readonly expiredRowId: string,
  ) {
    super(message);
  }
}

/**
 * An idempotency key was used before for a different request (another session or another body):
 * nothing was written. The HTTP API answers 422.
 */
export class IdempotencyKeyReusedError extends InvalidInputError {
  override name = 'IdempotencyKeyReusedError';
}

/**
 * An append (or a new session) would take a session past its tenant's size limit, or past the
 * largest context a read returns (shared/policy/limits.ts); nothing was written. The message names the limit, its value, what the
 * session holds and what the append would add.
 */
export class SessionLimitError extends InvalidInputError {
  override name = 'SessionLimitError';
  constructor(
    sessionId: string,
    /**
     * The limit passed: `maxSessionMessages`, `maxSessionTokens`, or `maxContextTokens` (the
     * largest context a read returns, which a session may not pass either).
     */
    readonly limit: 'maxSessionMessages' | 'maxSessionTokens' | 'maxContextTokens',
    /** Its value, in messages or estimated tokens. */
    readonly value: number,
    /** What the session holds now (live), in the limit's unit. */
    readonly current: number,
    /** What the refused write would have added, in the limit's unit. */
    readonly adding: number,
  ) {
    const unit = limit === 'maxSessionMessages' ? 'messages' : 'estimated tokens';
    const what = limit === 'maxContextTokens' ? ' (the largest context a read returns)' : '';
    super(
      `session "${sessionId}" would exceed its limit ${limit} of ${value} ${unit}${what} ` +
        `(it holds ${current}, the write adds ${adding}); nothing was written. ` +
        "Compact the session, or raise the limit in the tenant's policy (limits)",
    );
  }
}

/**
 * A session's context is larger than its tenant's `maxContextBytes` or `maxContextTokens`
 * (shared/policy/limits.ts): it was not loaded. A part of a context is no request an agent could
 * send (tool calls lose their results, signed thinking its chain), so there is no partial answer:
 * compact the session.
 */
export class ContextLimitError extends InvalidInputError {
  override name = 'ContextLimitError';
  constructor(
    sessionId: string,
    /** The limit passed. */
    readonly limit: 'maxContextBytes' | 'maxContextTokens',
    /** Its value, bytes or estimated tokens. */
    readonly value: number,
    /** The context's size in the limit's unit (bytes of stored content, or estimated tokens). */
    readonly size: number,
  ) {
    const unit = limit === 'maxContextBytes' ? 'bytes' : 'estimated tokens';
    super(
      `the context of session "${sessionId}" is ${size} ${unit}, over its limit ${limit} of ${value} ${unit}; ` +
        'it was not loaded. Compact the session (POST /v1/sessions/{id}/compact), or raise the limit in the ' +
        "tenant's policy (limits)",
    );
  }
}

/**
 * A compaction job that `compactNow` waited for failed for good (no attempt left, or an error that
 * retrying cannot fix); the message is the job's failure reason.
 */
export class CompactionFailedError extends Error {
  override name = 'CompactionFailedError';
  constructor(
    message: string,
    /** The BullMQ job id: Bull Board and the ledger show the attempt. */
    readonly jobId: string,
  ) {
    super(message);
  }
}

/** A transcript that cannot be imported; the message names the source, line and field. */
export class TranscriptError extends InvalidInputError {
  override name = 'TranscriptError';
}

/** An environment variable is invalid; the message names the variable and what it must be. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The session changed between the snapshot a plan was made from and the write (another compaction
 * or a restore committed first): the plan is discarded; re-plan and retry.
 */
export class FenceError extends Error {
  override name = 'FenceError';
}

/** Another worker holds the session's lease: try later, without using an attempt. */
export class LeaseBusyError extends Error {
  override name = 'LeaseBusyError';
}

/** A summary that must not be committed (empty, refusal, truncated, invalid). Retryable. */
export class SummaryRejectedError extends Error {
  override name = 'SummaryRejectedError';
}

/**
 * A summary scored under its strategy's `minFidelity` with `onLowFidelity: 'retry'`: not
 * committed; its `failed` ledger row (with the score) is already written. Retryable, as any
 * rejected summary.
 */
export class LowFidelityError extends SummaryRejectedError {
  override name = 'LowFidelityError';
}

/**
 * The summarizer found nothing it could summarize (Anthropic's `compaction_nothing_to_summarize`:
 * no user or assistant content among the leaving messages). The compaction is skipped and the
 * ledger says why; nothing was written.
 */
export class NothingToSummarizeError extends Error {
  override name = 'NothingToSummarizeError';
}

/** An LLM request that can never succeed as sent (400/401/403/404): fix configuration. */
export class SummarizerConfigError extends Error {
  override name = 'SummarizerConfigError';
}

/** The LLM API said 429: retry no sooner than {@link retryAfterMs} from when it answered. */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  /** Wait asked for by `retry-after-ms` / `retry-after`, in ms; null when the response gave none. */
  readonly retryAfterMs: number | null;
  /** The API's request id, or null. */
  readonly requestId: string | null;
  constructor(
    message: string,
    details: { retryAfterMs: number | null; requestId: string | null; cause?: unknown },
  ) {
    super(message, { cause: details.cause });
    this.retryAfterMs = details.retryAfterMs;
    this.requestId = details.requestId;
  }
}

/** A failure that may pass: overload, server error, timeout, lost connection, garbled body. */
export class TransientError extends Error {
  override name = 'TransientError';
  /** HTTP status, or null when no response came (connection error, timeout). */
  readonly status: number | null;
  /** The API's request id, or null. */
  readonly requestId: string | null;
  constructor(
    message: string,
    details: { status: number | null; requestId: string | null; cause?: unknown },
  ) {
    super(message, { cause: details.cause });
    this.status = details.status;
    this.requestId = details.requestId;
  }
}

/**
 * Postgres could not do what was asked, told as its cause and what to do about it (no schema, no
 * server, no such database, a refused login), never as the SQL text that failed. Built by
 * `describeDatabaseError` (worker/postgres/errors.ts). Transient as far as the worker is concerned:
 * a database that is down or not yet migrated may be fixed while jobs wait.
 */
export class DatabaseError extends Error {
  override name = 'DatabaseError';
  /** What went wrong, e.g. `database "x" does not exist`. */
  readonly problem: string;
  /** What to do about it, e.g. "run `compactor migrate`"; null when there is nothing to suggest. */
  readonly hint: string | null;
  /** The Postgres SQLSTATE (`42P01`) or Node error code (`ECONNREFUSED`), or null. */
  readonly code: string | null;
  constructor(problem: string, details: { hint: string | null; code: string | null; cause?: unknown }) {
    super(details.hint ? `${problem}: ${details.hint}` : problem, { cause: details.cause });
    this.problem = problem;
    this.hint = details.hint;
    this.code = details.code;
  }
}

/** Whether retrying cannot help. */
export function isPermanent(error: unknown): boolean {
  return (
    error instanceof InvalidInputError ||
    error instanceof SummarizerConfigError ||
    error instanceof ConfigError
  );
}

/**
 * Whatever was thrown, as an `Error`: errors pass through; a string becomes its message; anything
 * else is described (JSON when it can be, else `String`), so a `throw 42` or a rejected plain
 * object still reaches the log and the failed job with a readable message.
 */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  let text: string;
  try {
    text = JSON.stringify(thrown) ?? String(thrown);
  } catch {
    text = String(thrown);
  }
  return new Error(`non-error thrown: ${printable(text, 500)}`, { cause: thrown });
}

/**
 * Untrusted text made safe to quote in an error message: cut at `max` characters, and control,
 * invisible formatting (bidi overrides, zero-width) and unpaired surrogate characters written as
 * `\uXXXX`, so a hostile key or id cannot flood a log or rewrite a terminal line.
 */
export function printable(text: string, max = 300): string {
  const cut = text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
  return cut.replace(/[\p{Cc}\p{Cf}\p{Cs}]/gu, (c) => {
    const code = c.codePointAt(0) ?? 0;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
