/**
 * Structured JSON logs (pino) on stderr, so stdout stays free for command output. Message content
 * and secrets are never logged: log ids, counts and reasons.
 */
import { type Logger, pino } from 'pino';

/** A logger at `level` writing JSON lines to stderr. */
export function createLogger(level: string, name = 'compactor'): Logger {
  return pino(
    { name, level, redact: ['apiKey', '*.apiKey', 'headers.authorization', 'headers["x-api-key"]'] },
    pino.destination(2),
  );
}
