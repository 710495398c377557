/**
 * The database of `compactor demo` and `compactor dev`: the one configured, or, when none is given
 * and nothing answers where the default URL points (127.0.0.1:5432), the embedded PostgreSQL
 * (worker/runtime/embedded-postgres.ts), stopped again when the command ends or the process exits.
 * On the embedded database the queues run on it too (`COMPACTOR_QUEUE_BACKEND=postgres`), so the
 * command needs nothing but Node.
 */
import { connect } from 'node:net';
import path from 'node:path';
import { type Config, loadConfig } from '../config/config.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../runtime/embedded-postgres.ts';
import type { CommandContext } from './command.ts';

/** Why a command runs on the embedded database, or null: on the configured one. */
export type EmbeddedReason = 'forced' | 'nothing-at-default' | null;

/**
 * Whether to start the embedded database: `--embedded` forces it; a `DATABASE_URL` given (not
 * empty) is used as it is; else it is started when nothing answers at the default URL's address.
 * @param defaultAnswers whether something accepted a connection at the default address; only
 *   asked for when neither of the first two decides.
 */
export async function embeddedReason(
  forced: boolean,
  databaseUrl: string | undefined,
  defaultAnswers: () => Promise<boolean>,
): Promise<EmbeddedReason> {
  if (forced) return 'forced';
  if (databaseUrl !== undefined && databaseUrl !== '') return null;
  return (await defaultAnswers()) ? null : 'nothing-at-default';
}

/**
 * The environment a command runs with on the embedded database: its URL, and the Postgres queue
 * backend unless `COMPACTOR_QUEUE_BACKEND` is set.
 */
export function embeddedEnvironment(env: NodeJS.ProcessEnv, url: string): NodeJS.ProcessEnv {
  return { ...env, DATABASE_URL: url, COMPACTOR_QUEUE_BACKEND: env.COMPACTOR_QUEUE_BACKEND || 'postgres' };
}

/**
 * The one line that says a command runs on the embedded database: why, which folder (relative to
 * `cwd` when inside it), which port, which user (when root handed it to another), and the queue.
 */
export function embeddedLine(
  command: string,
  cluster: Pick<EmbeddedPostgres, 'dir' | 'port' | 'runAs' | 'initialised'>,
  reason: Exclude<EmbeddedReason, null>,
  defaultAddress: string,
  queueBackend: string,
  cwd: string,
): string {
  const relative = path.relative(cwd, cluster.dir);
  const dir =
    relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : cluster.dir;
  const why = reason === 'forced' ? '--embedded' : `no DATABASE_URL and nothing answers on ${defaultAddress}`;
  const user = cluster.runAs ? ` as user ${cluster.runAs}` : '';
  return (
    `compactor ${command}: ${why}: ${cluster.initialised ? 'initialised and started' : 'started'} the embedded ` +
    `PostgreSQL in ${dir} on 127.0.0.1:${cluster.port}${user}; queue backend ${queueBackend}`
  );
}

/** The database a command runs on. */
export interface LocalDatabase {
  /** The environment to read the configuration from (the embedded URL set in it, when embedded). */
  env: NodeJS.ProcessEnv;
  /** The configuration of {@link env}. */
  config: Config;
  /** The embedded cluster, or null on the configured database. */
  embedded: EmbeddedPostgres | null;
  /**
   * Until this is called, SIGINT and SIGTERM exit the process at once (the cluster is stopped on
   * the way out); a command that handles them itself (`waitForSignals`) calls it first.
   */
  handOverSignals(): void;
  /** Stops the embedded cluster, if any, and removes the process hooks. */
  close(): Promise<void>;
}

/**
 * Opens the database of `demo` or `dev` (see the module's doc) and says so in one line on the
 * command's stderr. On the embedded one, the process's `exit` stops the cluster (synchronously:
 * after `process.exit`, an uncaught error or a second Ctrl-C too), so no PostgreSQL is left running.
 * @throws {ConfigError} for a bad environment; {@link EmbeddedPostgresError} when the embedded
 *   cluster cannot start (the message says why and what to do).
 */
export async function openLocalDatabase(
  context: CommandContext,
  options: { command: string; forced: boolean },
): Promise<LocalDatabase> {
  const configured = context.config();
  const defaultUrl = new URL(configured.databaseUrl);
  const host = defaultUrl.hostname.replace(/^\[|\]$/g, '');
  const port = Number(defaultUrl.port || 5432);
  const reason = await embeddedReason(options.forced, context.env.DATABASE_URL, () => answers(host, port));
  if (reason === null)
    return {
      env: context.env,
      config: configured,
      embedded: null,
      handOverSignals() {},
      close: async () => {},
    };

  const say = (line: string) => context.stderr.write(`${line}\n`);
  const cluster = await startEmbeddedPostgres({
    dir: configured.embeddedPostgres?.dir,
    port: configured.embeddedPostgres?.port,
    onNotice: (line) => say(`compactor ${options.command}: ${line}`),
  });
  const onExit = () => cluster.stopSync();
  const onSignal = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.on('exit', onExit).on('SIGINT', onSignal).on('SIGTERM', onSignal);
  const handOverSignals = () => {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  };
  const env = embeddedEnvironment(context.env, cluster.url);
  say(
    embeddedLine(
      options.command,
      cluster,
      reason,
      `${defaultUrl.hostname}:${port}`,
      env.COMPACTOR_QUEUE_BACKEND ?? 'postgres',
      process.cwd(),
    ),
  );
  return {
    env,
    config: loadConfig(env),
    embedded: cluster,
    handOverSignals,
    async close() {
      handOverSignals();
      await cluster.stop();
      process.off('exit', onExit);
    },
  };
}

/** Whether something accepts a TCP connection at `host:port` within a second. */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true)).once('error', () => done(false));
  });
}
