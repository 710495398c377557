/**
 * Asynchronous commit for the rows compactor can lose in a Postgres crash: leases, tenant slots,
 * backlog counts, and queue adds that a later commit of the same job makes durable.
 *
 * A commit normally waits for its WAL record to be flushed to disk (`synchronous_commit = on`); a
 * transaction that sets it `off` for itself returns at once and the WAL writer flushes it within
 * about 3 × `wal_writer_delay` (600 ms by default). A crash of the Postgres server (not of a client)
 * may then forget the last such commits, never a part of one, and never one that a later
 * synchronous commit followed: WAL is flushed in order, so the flush of any later commit carries
 * every earlier one with it (https://www.postgresql.org/docs/current/wal-async-commit.html).
 *
 * Used for:
 * - session leases and tenant slots: a forgotten one is a holder gone, which their time-to-live
 *   already covers, and a Postgres crash ends every holder's connection anyway; the version fence,
 *   not the lease, keeps the data right;
 * - tenant backlog counts: a fair-share ranking, with a time-to-live for counts that leak;
 * - the `session.compacted` and webhook jobs a compaction job adds after its apply: the job's own
 *   completion, a synchronous commit by BullMQ, follows them, and a compaction job whose
 *   completion was lost runs again, finds its ledger row (`duplicate`) and adds them again under
 *   the same job ids.
 * Never for an apply, a ledger row or a message: those commit synchronously.
 */

/**
 * A common table expression that sets `synchronous_commit` off for the transaction of the statement
 * it leads. It runs once, before the statement's rows are read, when the statement refers to it:
 * `… from async_commit` in an `insert … select`, or `and exists (select from async_commit)` in a
 * `where` (an uncorrelated `exists` is a one-time filter, evaluated before the scan). In a
 * statement of its own the setting ends with the statement's implicit transaction.
 */
export const ASYNC_COMMIT =
  "with async_commit as materialized (select set_config('synchronous_commit', 'off', true))";

/**
 * The libpq `options` of a connection all of whose commits are asynchronous (node-postgres's pool
 * config, which BullMQ's PostgreSQL backend extends with its `search_path`).
 */
export const ASYNC_COMMIT_OPTIONS = '-c synchronous_commit=off';
