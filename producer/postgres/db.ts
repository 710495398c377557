/**
 * The Postgres connection (postgres.js) and its drizzle wrapper, shared by worker and producer.
 */

import type { Socket } from 'node:net';
import postgres from 'postgres';
import { DatabaseError, InvalidInputError } from '../../shared/contract/errors.ts';
import type { SQL } from './orm.ts';
import { drizzle, PgDialect, type PostgresJsDatabase, type PreparedQueryConfig } from './orm.ts';
import * as schema from './schema.ts';

export type Db = PostgresJsDatabase<typeof schema>;

const dialect = new PgDialect();

/** A drizzle transaction on {@link Db}. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  /** drizzle over the pool; use `db.transaction` for atomic work. */
  db: Db;
  /** The raw postgres.js pool, for `LISTEN`, reserved connections and shutdown. */
  sql: postgres.Sql;
  /** Ends the pool, waiting at most `timeoutS` seconds for running queries. */
  close(timeoutS?: number): Promise<void>;
}

export interface DatabaseOptions {
  /** Pool size. Default 10. */
  max?: number;
  /** Connection name shown in `pg_stat_activity.application_name`. */
  applicationName?: string;
  /** The Postgres schema holding compactor's tables. Default {@link DEFAULT_SCHEMA}. */
  schema?: string;
  /** Closes a connection idle this long, seconds. Default: never. */
  idleTimeoutS?: number;
  /**
   * Opens each connection's socket, connected to the server, in place of postgres.js's own TCP
   * connection to the URL's host (postgres.js's `socket` option): a benchmark's tap on the wire
   * (test/bench/wire-tap.ts). Default: postgres.js connects.
   */
  socket?: () => Socket;
}

/** The Postgres schema compactor's tables live in unless configured otherwise (`COMPACTOR_SCHEMA`). */
export const DEFAULT_SCHEMA = 'compactor';

/**
 * Checks a schema name: a lower-case unquoted Postgres identifier (letters, digits, `_`, at most 63
 * bytes, not starting with a digit or `pg_`), so it never needs quoting in `search_path` or DDL.
 * @throws {InvalidInputError} naming what is wrong.
 */
export function assertSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema) || schema.startsWith('pg_'))
    throw new InvalidInputError(
      `invalid schema name "${schema}": use 1-63 lower-case letters, digits and _, not starting with a digit or pg_`,
    );
  return schema;
}

/**
 * The postgres.js options that make every connection resolve compactor's tables in `schema`: the
 * schema is sent as the `search_path` start-up parameter, so statements name tables unqualified and
 * nothing is created in `public`. Parallel query is off (`max_parallel_workers_per_gather = 0`):
 * every statement compactor sends reads one session's rows, and a plan that starts parallel workers
 * for it spends more starting them than reading (a generic plan of `loadContext`'s read chose a
 * parallel scan of the tenant's partition: 9 ms, 1.1 ms without). (A pooler in transaction mode,
 * such as PgBouncer's, drops start-up parameters: set both on its database entry instead.)
 */
export function connectionOptions(
  schema = DEFAULT_SCHEMA,
  applicationName = 'compactor',
): { onnotice: () => void; connection: Record<string, string> } {
  return {
    onnotice: () => {},
    connection: {
      application_name: applicationName,
      search_path: assertSchemaName(schema),
      max_parallel_workers_per_gather: '0',
    },
  };
}

/**
 * Opens a lazily-connecting pool to `url`, its connections set to compactor's schema. Nothing is
 * sent until the first query.
 * @throws {InvalidInputError} when `options.schema` is not a valid schema name.
 */
export function openDatabase(url: string, options: DatabaseOptions = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 10,
    ...(options.idleTimeoutS === undefined ? {} : { idle_timeout: options.idleTimeoutS }),
    ...connectionOptions(options.schema, options.applicationName),
    // Not in postgres.js's types, but an option of its connections (src/connection.js).
    ...(options.socket ? ({ socket: options.socket } as object) : {}),
  });
  const db = drizzle(sql, { schema });
  let closing: Promise<void> | undefined;
  return {
    db,
    sql,
    close: (timeoutS = 5) => {
      closing ??= sql.end({ timeout: timeoutS });
      return closing;
    },
  };
}

/**
 * Checks, with one cheap query, that the database holds compactor's schema, so a command that needs
 * it says so before doing anything. A connection error is thrown as postgres.js threw it
 * (`describeDatabaseError` tells the user what it means).
 * @throws {DatabaseError} `no compactor tables in schema "compactor" of database "x": run \`compactor migrate\``.
 */
export async function assertSchema(database: Pick<Database, 'sql'>): Promise<void> {
  const [row] = await database.sql<{ sessions: string | null; database: string; schema: string | null }[]>`
    select to_regclass('sessions')::text as sessions, current_database() as database,
           current_setting('search_path') as schema`;
  if (row && row.sessions === null)
    throw new DatabaseError(`no compactor tables in schema "${row.schema}" of database "${row.database}"`, {
      hint: 'run `compactor migrate`',
      code: null,
    });
}

/**
 * Runs a raw statement (drizzle `sql`, or a text with `$n` parameters) as a prepared statement
 * and returns its rows as objects, with Postgres's column names.
 *
 * drizzle's `execute` and unprepared builders hand postgres.js `prepare: false`, whatever the client
 * was configured with: drizzle-orm's postgres.js adapter calls `unsafe()` with no `prepare` option
 * or with the builder's own `false`, and postgres.js defaults to unprepared (a known drizzle-orm bug,
 * still there in 0.45.4).
 * postgres.js then sends every statement with parameters in two round trips (Parse/Describe, wait
 * for the parameter types, then Bind/Execute), and Postgres parses and plans it each time. A
 * prepared statement is parsed once per connection and then takes one round trip. Use it for the
 * hot path's fixed-text statements only: postgres.js keeps every distinct text it prepared for the
 * life of the connection.
 */
export function executePrepared<T>(
  db: Db | Tx,
  query: SQL | { sql: string; params: unknown[] },
): Promise<T[]> {
  const { session } = db._;
  const prepared = session.prepareQuery<PreparedQueryConfig & { execute: T[] }>(
    'getSQL' in query ? dialect.sqlToQuery(query) : query,
    undefined,
    'compactor',
    false,
  );
  return prepared.execute();
}
