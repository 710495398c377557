/**
 * Structured JSON logs (pino) on stderr, so stdout stays free for command output. Message content
 * and secrets are never logged: log ids, counts and reasons, and errors as their cause (./log-errors.ts).
 */
import { type Logger, pino } from 'pino';
import { errorForLog } from './log-errors.ts';

/**
 * Fields never written, wherever a careless caller puts them: secrets (API keys, dashboard
 * tokens and passwords, authorization headers, cookies) and session content (message content,
 * summaries, checkpoints).
 */
const REDACT = [
  ...['apiKey', 'token', 'password', 'authorization', 'cookie', 'content', 'summary', 'checkpoint'].flatMap(
    (key) => [key, `*.${key}`],
  ),
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
];

/**
 * A logger at `level` writing JSON lines to `destination` (default: stderr, through pino's
 * synchronous file-descriptor destination). Its `err` and `error` fields go through
 * {@link errorForLog}: a database error is logged as its cause, never its statement or parameters.
 */
export function createLogger(
  level: string,
  name = 'compactor',
  destination: { write(line: string): unknown } = pino.destination(2),
): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      serializers: { err: errorForLog, error: errorForLog },
    },
    destination,
  );
}
