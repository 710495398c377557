/**
 * How an error is written to the logs: one line without tenant data. Every logger compactor makes
 * (worker, API, CLI: `createLogger`, ./logger.ts) serializes the `err` and `error` fields through
 * {@link errorForLog}, so no caller can log what a database error
 * carries about the statement that failed: drizzle's wrapper puts the whole SQL text and its
 * parameters in its message ("Failed query: … params: …", parameters that hold session text, a
 * search query, a tenant's ids), and postgres.js's error keeps them as `query` and `parameters`
 * (and a row's values in `detail`). What is logged instead is the cause and fix that
 * `describeDatabaseError` tells, with a value Postgres quotes at the end of its message cut.
 */
import { describeDatabaseError } from '../postgres/errors.ts';

/** Where drizzle's wrapper begins its statement and parameters, inside any message. */
const STATEMENT = 'Failed query:';

/** What a statement and its parameters are replaced with. */
const STATEMENT_OMITTED = 'a database statement failed (its text and parameters are not logged)';

/**
 * `value` as the logs may hold it, one line as callers have always logged an error's message: an
 * error of a database statement (drizzle's wrapper or postgres.js's error, anywhere in the `cause`
 * chain) as its cause and fix, never its statement, parameters or row detail; another `Error` as
 * its message and a string as it is, each with any statement text cut; anything else unchanged.
 */
export function errorForLog(value: unknown): unknown {
  if (typeof value === 'string') return withoutStatement(value);
  if (!(value instanceof Error)) return value;
  const database = fromStatement(value) ? describeDatabaseError(value) : null;
  return database ? withoutQuotedValue(database.message) : withoutStatement(value.message);
}

/**
 * Whether `error` or one of its causes is a failed statement's: drizzle's `DrizzleQueryError` or
 * postgres.js's `PostgresError` (both keep the statement as `query`). A socket error of Redis is
 * not, though it has a code `describeDatabaseError` would read as a database's.
 */
function fromStatement(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const fields = current as { name?: unknown; query?: unknown; cause?: unknown };
    if (typeof fields.query === 'string' || fields.name === 'PostgresError') return true;
    current = fields.cause;
  }
  return false;
}

/** `text` cut where drizzle's "Failed query: <statement> params: <parameters>" begins. */
function withoutStatement(text: string): string {
  const at = text.indexOf(STATEMENT);
  return at === -1 ? text : `${text.slice(0, at)}${STATEMENT_OMITTED}`;
}

/**
 * A Postgres message without the value it quotes at its end (`invalid input syntax for type
 * integer: "<a parameter>"`); identifiers it quotes elsewhere (`relation "sessions"`) stay.
 */
function withoutQuotedValue(message: string): string {
  return message.replace(/: "[\s\S]*"$/, ': "…"');
}
