/**
 * What a failed Postgres call means for the person running compactor: the cause and what to do,
 * instead of drizzle's "Failed query: <SQL> params: ..." wrapper. Pure: it only reads the error
 * objects drizzle and postgres.js throw (drizzle's wrapper keeps the driver's error as `cause`;
 * postgres.js gives Postgres's SQLSTATE as `code`, and Node's socket errors `code`, `errno`,
 * `address`, `port`).
 */
import {
  DatabaseError,
  RateLimitedError,
  SummarizerConfigError,
  TransientError,
} from '../../shared/contract/errors.ts';

/** Where the error happened: the `DATABASE_URL` in use, to name host, port, database and user. */
export interface DatabaseErrorContext {
  /** The connection URL; only its host, port, database and user are ever quoted, never the password. */
  url?: string | undefined;
}

interface ErrorFields {
  name?: unknown;
  severity?: unknown;
  message?: unknown;
  code?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Node socket codes (and postgres.js's connect timeout) of a connection that failed. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
]);

/**
 * The database error inside `error`, as a {@link DatabaseError} whose message is one line: the cause
 * and what to do. Looks through drizzle's query wrapper (`cause`) and Node's `AggregateError` (a
 * host name with several addresses). A DatabaseError is returned as is.
 * @returns null when `error` is no Postgres or connection error, or is another dependency's (the
 *   Messages API's: {@link TransientError}, {@link RateLimitedError}, {@link SummarizerConfigError}),
 *   which the caller reports as it is.
 */
export function describeDatabaseError(
  error: unknown,
  context: DatabaseErrorContext = {},
): DatabaseError | null {
  if (error instanceof DatabaseError) return error;
  // Another dependency's error, classified where it was thrown: a connection refused by the
  // Messages API is not the database's, whatever its cause chain holds.
  if (
    error instanceof TransientError ||
    error instanceof RateLimitedError ||
    error instanceof SummarizerConfigError
  )
    return null;
  const found = findDriverError(error);
  if (!found) return null;
  const code = typeof found.code === 'string' ? found.code : '';
  const message = typeof found.message === 'string' ? firstLine(found.message) : String(found.message);
  const where = parseUrl(context.url);
  const make = (problem: string, hint: string | null) =>
    new DatabaseError(problem, { hint, code: code || null, cause: error });
  switch (code) {
    case 'ECONNREFUSED':
      return make(
        `connection refused at ${endpoint(where, found)}`,
        'is PostgreSQL running there? (DATABASE_URL)',
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return make(
        `host "${where?.host ?? stringField(found.hostname) ?? '?'}" not found`,
        'check the host in DATABASE_URL',
      );
    case 'ETIMEDOUT':
    case 'CONNECT_TIMEOUT':
      return make(
        `no answer from ${endpoint(where, found)} (connection timed out)`,
        'is PostgreSQL running there, and reachable? (DATABASE_URL)',
      );
    case '3D000': {
      const name = /database "([^"]*)"/.exec(message)?.[1] ?? where?.database ?? '?';
      return make(
        `database "${name}" does not exist`,
        `create it (createdb ${shellWord(name)}) or point DATABASE_URL at another`,
      );
    }
    case '42P01':
      return make(message, "compactor's tables are missing from its schema; run `compactor migrate`");
    case '42P07':
      return make(
        message,
        "compactor's migrations may have been applied by another tool (drizzle-kit push, a SQL dump) without " +
          'being recorded; migrate an empty database, or drop these tables first',
      );
    case '28P01':
    case '28000': {
      const user = where?.user ?? /(?:user|role) "([^"]*)"/.exec(message)?.[1] ?? '?';
      return make(
        `authentication failed for user "${user}" (${message})`,
        'check the user and password in DATABASE_URL',
      );
    }
    default:
      return make(message, null);
  }
}

/**
 * The driver's error: the first error in the `cause` chain (or an `AggregateError`'s `errors`) that
 * carries a `code`. Drizzle's wrapper without one still yields its cause, so its SQL text is never
 * the message.
 */
function findDriverError(error: unknown): ErrorFields | null {
  let current: unknown = error;
  let wrapped: ErrorFields | null = null;
  for (let depth = 0; depth < 8 && isObject(current); depth++) {
    const fields = current as ErrorFields;
    if (isDriverError(fields)) return fields;
    if (Array.isArray(fields.errors)) {
      const inner = fields.errors.map(findDriverError).find((e) => e !== null);
      if (inner) return inner;
    }
    if (isDrizzleWrapper(fields) && isObject(fields.cause)) wrapped = fields.cause as ErrorFields;
    current = fields.cause;
  }
  return wrapped;
}

/** An error of Postgres itself (postgres.js's `PostgresError`, with its SQLSTATE) or of the socket. */
function isDriverError(fields: ErrorFields): boolean {
  if (typeof fields.code !== 'string') return false;
  const fromPostgres = fields.name === 'PostgresError' || typeof fields.severity === 'string';
  return fromPostgres || CONNECTION_CODES.has(fields.code);
}

/** drizzle's `DrizzleQueryError`: "Failed query: ..." with the query, params and cause. */
function isDrizzleWrapper(fields: ErrorFields & { query?: unknown }): boolean {
  return typeof fields.query === 'string' && 'cause' in fields;
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}

interface UrlParts {
  host: string;
  port: string;
  database: string | undefined;
  user: string | undefined;
}

/** Host, port (default 5432), database and user of a Postgres URL; never its password. */
function parseUrl(url: string | undefined): UrlParts | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
    return {
      host: u.hostname,
      port: u.port || '5432',
      database: database || undefined,
      user: u.username ? decodeURIComponent(u.username) : undefined,
    };
  } catch {
    return undefined;
  }
}

/** `host:port` from the URL, else from the socket error. */
function endpoint(where: UrlParts | undefined, found: ErrorFields): string {
  if (where) return `${where.host}:${where.port}`;
  const address = stringField(found.address) ?? '?';
  return typeof found.port === 'number' ? `${address}:${found.port}` : address;
}

/** A database name as a shell word: quoted when it holds anything but letters, digits and `_-.`. */
function shellWord(name: string): string {
  return /^[\w.-]+$/.test(name) ? name : `'${name.replaceAll("'", "'\\''")}'`;
}
