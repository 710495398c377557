/**
 * The few error classes of compactor, small and with `name` set, so one place can tell permanent
 * from transient. Permanent ones are turned into BullMQ `UnrecoverableError`s by the worker;
 * anything else is treated as transient and retried.
 */

/** Input that can never succeed: a bad event, an unknown session, a foreign tenant. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}

/** The session does not exist for this tenant (or belongs to another tenant: same answer). */
export class SessionNotFoundError extends InvalidInputError {
  override name = 'SessionNotFoundError';
  constructor(tenantId: string, sessionId: string) {
    super(`session "${sessionId}" not found for tenant "${tenantId}"`);
  }
}

/**
 * The session changed between snapshot and apply: its `compaction_version` (the fencing token) moved,
 * so the plan is stale. Re-plan and retry.
 */
export class FenceError extends Error {
  override name = 'FenceError';
}

/** A summary that must not be committed (empty, refusal, truncated, invalid). Retryable. */
export class SummaryRejectedError extends Error {
  override name = 'SummaryRejectedError';
}

/** An LLM request that can never succeed as sent (400/401/403/404): fix configuration. */
export class SummarizerConfigError extends Error {
  override name = 'SummarizerConfigError';
}

/** Another worker holds the session's lease. */
export class LeaseBusyError extends Error {
  override name = 'LeaseBusyError';
}

/** Whether retrying cannot help. */
export function isPermanent(error: unknown): boolean {
  return error instanceof InvalidInputError || error instanceof SummarizerConfigError;
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
