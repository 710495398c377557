/**
 * `compactor dev`: the worker, the HTTP API and the dashboard in one process, on the embedded
 * PostgreSQL when no database is given, until Ctrl-C.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { type Config, loadConfig } from '../../config/config.ts';
import type { ApiServer } from '../../http/api/index.ts';
import type { Dashboard } from '../../http/dashboard/index.ts';
import { ensureDatabase } from '../../postgres/create-database.ts';
import { describeDatabaseError } from '../../postgres/errors.ts';
import { redactUrl } from '../../runtime/services.ts';
import { type CommandContext, flag, type ParsedArgs, positiveInt } from '../command.ts';
import { type LocalDatabase, openLocalDatabase } from '../local-database.ts';
import { serveApi, serveDashboard, serveWorker } from '../serve.ts';
import { waitForSignals } from '../signals.ts';

/** The admin credentials `dev` makes for one run when none are configured. */
export interface DevCredentials {
  token: string;
  user: string;
  password: string;
}

/**
 * Admin credentials for this run, unless the environment sets any of the dashboard's
 * (`COMPACTOR_DASHBOARD_TOKEN`, `_USER`/`_PASSWORD`, `_TOKENS`): then null, and those hold.
 */
export function devCredentials(env: NodeJS.ProcessEnv): DevCredentials | null {
  const configured = ['COMPACTOR_DASHBOARD_TOKEN', 'COMPACTOR_DASHBOARD_USER', 'COMPACTOR_DASHBOARD_TOKENS'];
  if (configured.some((name) => env[name])) return null;
  const secret = () => randomBytes(18).toString('base64url');
  return { token: secret(), user: 'admin', password: secret() };
}

/** What `dev` prints once everything runs: where each part is, with its credentials. */
function devLines(shown: {
  api: string;
  dashboard: string;
  credentials: DevCredentials | null;
  insecure: boolean;
  concurrency: number;
  config: Config;
  database: LocalDatabase;
}): string {
  const { credentials } = shown;
  const auth = (text: string) =>
    shown.insecure
      ? 'no authentication (--insecure)'
      : credentials
        ? text
        : 'credentials: COMPACTOR_DASHBOARD_*';
  const database = shown.database.embedded
    ? shown.database.embedded.url
    : redactUrl(shown.config.databaseUrl);
  return [
    `api        ${shown.api}/v1  ${auth(`Authorization: Bearer ${credentials?.token}`)}`,
    `dashboard  ${shown.dashboard}/  ${auth(`user ${credentials?.user}, password ${credentials?.password}`)}`,
    `database   ${database}`,
    `worker     concurrency ${shown.concurrency}, queue prefix ${shown.config.queuePrefix}`,
    'Ctrl-C stops everything.',
    '',
  ].join('\n');
}

/**
 * Creates the configured database when the server has none of that name, as `compactor demo`
 * does, and says so in one line on stderr (the embedded cluster makes its own when it starts).
 * @throws {DatabaseError} one line, the cause and what to do, when the server cannot be reached or
 *   the role may not create databases: `dev` fails at once rather than waiting for a database.
 */
async function ensureDevDatabase(c: Config, say: (line: string) => void): Promise<void> {
  try {
    if (await ensureDatabase(c.databaseUrl))
      say(`compactor dev: created database ${new URL(c.databaseUrl).pathname.slice(1)}`);
  } catch (error) {
    throw describeDatabaseError(error, { url: c.databaseUrl }) ?? error;
  }
}

/**
 * Starts the worker (it migrates), then the API, then the dashboard, each pushing its close onto
 * `closers` as soon as it runs, so a failure of a later one leaves the earlier ones to be closed.
 */
async function serveAll(
  c: Config,
  logger: Logger,
  options: { concurrency: number; insecure: boolean },
  closers: Array<(force: boolean) => Promise<void>>,
): Promise<{ api: ApiServer; dashboard: Dashboard }> {
  const worker = await serveWorker(c, logger, options.concurrency);
  closers.push((force) => worker.close(force));
  const api = await serveApi(c, logger, {
    port: c.api?.port ?? 3100,
    host: c.api?.host ?? '127.0.0.1',
    insecure: options.insecure,
  });
  closers.push(() => api.close());
  const dashboard = await serveDashboard(c, logger, {
    ...c.dashboard,
    readOnly: false,
    insecure: options.insecure,
  });
  closers.push(() => dashboard.close());
  return { api, dashboard };
}

/** Runs `compactor dev` (its spec, flags and help: specs/dev.ts); resolves with the exit code. */
export async function runDev(args: ParsedArgs, context: CommandContext): Promise<number> {
  const concurrency = positiveInt(args, 'concurrency', 4);
  const insecure = flag(args, 'insecure');
  const database = await openLocalDatabase(context, { command: 'dev', forced: flag(args, 'embedded') });
  const closers: Array<(force: boolean) => Promise<void>> = [];
  const closeAll = async (force: boolean) => {
    for (const close of [...closers].reverse()) await close(force);
  };
  try {
    const credentials = insecure ? null : devCredentials(database.env);
    const c = credentials
      ? loadConfig({
          ...database.env,
          COMPACTOR_DASHBOARD_TOKEN: credentials.token,
          COMPACTOR_DASHBOARD_USER: credentials.user,
          COMPACTOR_DASHBOARD_PASSWORD: credentials.password,
        })
      : database.config;
    const logger = context.logger(c.logLevel);
    if (!database.embedded) await ensureDevDatabase(c, (line) => context.stderr.write(`${line}\n`));
    const { api, dashboard } = await serveAll(c, logger, { concurrency, insecure }, closers);

    // Signals are ours before the lines that say Ctrl-C stops everything.
    const stopped = waitForSignals(async (force) => {
      logger.info(
        { force },
        force ? 'second signal: forcing exit' : 'signal: closing the servers and the worker',
      );
      await closeAll(force);
    });
    database.handOverSignals();
    context.stdout.write(
      devLines({
        api: api.url,
        dashboard: dashboard.url,
        credentials,
        insecure,
        concurrency,
        config: c,
        database,
      }),
    );
    return await stopped;
  } catch (error) {
    await closeAll(true);
    throw error;
  } finally {
    await database.close();
  }
}
