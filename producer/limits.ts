/**
 * The session-size limits of a tenant (shared/policy/limits.ts) as the writes of producer/sessions.ts
 * enforce them: read from the tenant's own policy in the writing transaction
 * (producer/postgres/session-limits.ts), so every writer (the HTTP API, an agent service calling the
 * library, the CLI's import) keeps them.
 */
import { SessionLimitError } from '../shared/contract/errors.ts';
import type { SessionLimits } from '../shared/policy/limits.ts';

/**
 * The limit a session holding `current` would pass by taking `adding`, or null when it fits.
 * Messages are checked first, then tokens against the lower of `maxSessionTokens` and
 * `maxContextTokens` (a session may not grow past what a read returns: shared/policy/limits.ts),
 * named as the one that binds (`maxSessionTokens` when they are equal).
 */
export function limitPassed(
  sessionId: string,
  limits: SessionLimits,
  current: { messages: number; tokens: number },
  adding: { messages: number; tokens: number },
): SessionLimitError | null {
  const tokenLimit =
    limits.maxContextTokens < limits.maxSessionTokens ? 'maxContextTokens' : 'maxSessionTokens';
  const counts = [
    ['maxSessionMessages', current.messages, adding.messages],
    [tokenLimit, current.tokens, adding.tokens],
  ] as const;
  for (const [limit, now, more] of counts) {
    if (now + more > limits[limit]) return new SessionLimitError(sessionId, limit, limits[limit], now, more);
  }
  return null;
}
