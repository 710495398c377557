/**
 * The `compactor` command line. Each subcommand parses its flags with node's `util.parseArgs`,
 * loads the configuration once from the environment, does one thing and returns an exit code:
 * 0 done, 1 failed (the error is printed), 2 bad usage.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { importTranscript, transcriptFiles } from '../../producer/import.ts';
import { createProducer } from '../../producer/index.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import { TranscriptError } from '../../shared/contract/transcript.ts';
import { explainStays, planCompaction } from '../../shared/planning/plan.ts';
import { openDatabase } from '../../shared/postgres/db.ts';
import { type Config, ConfigError, loadConfig } from '../../shared/runtime/config.ts';
import { createLogger } from '../../shared/runtime/logger.ts';
import { parseStrategy, type Strategy } from '../../shared/strategies/index.ts';
import { type Dashboard, DashboardConfigError, startDashboard } from '../http/dashboard/index.ts';
import { startMetricsServer } from '../http/metrics-server.ts';
import { createWorkerMetrics } from '../observability/metrics.ts';
import { effectivePolicy, runCompaction } from '../pipeline/pipeline.ts';
import { migrateDatabase } from '../postgres/migrate.ts';
import { getPolicy, listPolicies, setPolicy } from '../postgres/policies.ts';
import { restoreCompaction } from '../postgres/restore.ts';
import { CompactionStore } from '../postgres/store.ts';
import { runSweep, startSweepService } from '../queue/sweep.ts';
import { startWorker } from '../queue/worker.ts';
import { openServices, poolSizeFor, redactUrl } from '../runtime/services.ts';
import { retryUntilReady } from '../runtime/startup.ts';
import { runDemo } from './demo.ts';

const USAGE = `usage: compactor <command> [options]

commands:
  demo [dir] [--concurrency N]        migrate, import the corpus under a fresh tenant, compact every
                                      session through BullMQ and print a table (default dir:
                                      the repository's corpus/sessions)
  migrate                             apply the SQL migrations in drizzle/ (safe to repeat)
  import <file-or-dir>... [--tenant T] [--session S]
                                      load JSONL transcripts as sessions
  enqueue --tenant T --session S [--event-id E] [--strategy X]
                                      enqueue session.run.completed
  worker [--concurrency N]            process compaction jobs until SIGTERM (with
                                      COMPACTOR_METRICS_PORT: /metrics, /healthz, /readyz)
  dashboard [--port N] [--host H] [--read-only] [--insecure]
                                      Bull Board, the ledger API and session pages until SIGTERM
  compact --tenant T --session S [--strategy X] [--dry-run]
                                      compact one session now; print the ledger row as JSON
  history --tenant T --session S      print the session's ledger as JSON lines
  restore --tenant T --session S --compaction ID [--dry-run]
                                      put a compaction's archived messages back exactly

  sweep [--dry-run]                   scan every session now; enqueue a compaction for each one over
                                      its trigger (--dry-run: only list them)
  policy set --tenant T [--agent A] --policy JSON
  policy get --tenant T [--agent A]
  policy list --tenant T              the tenant's and its agents' compaction policies

strategies: none | slidingWindow:N | summarize[:keepRecent] | a JSON object
environment: DATABASE_URL, REDIS_URL, COMPACTOR_QUEUE_PREFIX, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
             COMPACTOR_MODEL, COMPACTOR_LOG_LEVEL, COMPACTOR_METRICS_PORT, COMPACTOR_METRICS_HOST,
             COMPACTOR_DASHBOARD_TOKEN, COMPACTOR_DASHBOARD_USER, COMPACTOR_DASHBOARD_PASSWORD,
             COMPACTOR_DASHBOARD_TOKENS, COMPACTOR_DASHBOARD_PORT, COMPACTOR_DASHBOARD_HOST`;

/** A wrong flag or argument: printed with the usage, exit code 2. */
class UsageError extends Error {
  override name = 'UsageError';
}

type Command = (args: string[], config: () => Config) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  demo: demoCommand,
  migrate: migrateCommand,
  import: importCommand,
  enqueue: enqueueCommand,
  worker: workerCommand,
  dashboard: dashboardCommand,
  compact: compactCommand,
  history: historyCommand,
  restore: restoreCommand,
  sweep: sweepCommand,
  policy: policyCommand,
};

/** Runs the CLI with `argv` (without node and the script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`compactor: unknown command "${name}"\n${USAGE}\n`);
    return 2;
  }
  let config: Config | undefined;
  try {
    return await command(rest, () => {
      config ??= loadConfig();
      return config;
    });
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`compactor ${name}: ${error.message}\n${USAGE}\n`);
      return 2;
    }
    const known = [ConfigError, InvalidInputError, TranscriptError, DashboardConfigError].some(
      (c) => error instanceof c,
    );
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`compactor ${name}: ${known ? message : `failed: ${message}`}\n`);
    return 1;
  }
}

function parse<T extends NonNullable<Parameters<typeof parseArgs>[0]>['options']>(
  args: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

function positiveInt(value: string | boolean | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${flag} must be a positive integer, got "${value}"`);
  return n;
}

function strategyFlag(value: string | boolean | undefined): Strategy | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return parseStrategy(value);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function migrateCommand(args: string[], config: () => Config): Promise<number> {
  parse(args, {});
  await migrateDatabase(config().databaseUrl);
  process.stdout.write('migrations applied\n');
  return 0;
}

async function importCommand(args: string[], config: () => Config): Promise<number> {
  const { values, positionals } = parse(
    args,
    { tenant: { type: 'string' }, session: { type: 'string' } },
    true,
  );
  if (positionals.length === 0) throw new UsageError('give at least one transcript file or directory');
  const files = await transcriptFiles(positionals);
  if (values.session && files.length !== 1)
    throw new UsageError('--session needs exactly one transcript file');
  const tenantId = values.tenant ?? 'default';
  const database = openDatabase(config().databaseUrl, { max: 2 });
  let failed = 0;
  try {
    for (const file of files) {
      try {
        const r = await importTranscript(database.db, file, { tenantId, sessionId: values.session });
        process.stdout.write(
          `imported ${r.sessionId}: ${r.messageCount} messages, ${r.tokenCount} tokens (${r.ms.toFixed(0)} ms)\n`,
        );
      } catch (error) {
        if (!(error instanceof InvalidInputError || error instanceof TranscriptError)) throw error;
        failed++;
        process.stderr.write(`not imported: ${error.message}\n`);
      }
    }
  } finally {
    await database.close();
  }
  return failed > 0 ? 1 : 0;
}

async function enqueueCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, {
    tenant: { type: 'string' },
    session: { type: 'string' },
    'event-id': { type: 'string' },
    strategy: { type: 'string' },
  });
  const c = config();
  const producer = createProducer({ redisUrl: c.redisUrl, prefix: c.queuePrefix });
  try {
    const result = await producer.runCompleted({
      eventId: values['event-id'] ?? randomUUID(),
      tenantId: required(values.tenant, 'tenant'),
      sessionId: required(values.session, 'session'),
      occurredAt: new Date().toISOString(),
      strategy: strategyFlag(values.strategy),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } finally {
    await producer.close();
  }
}

async function workerCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, { concurrency: { type: 'string' } });
  const c = config();
  const logger = createLogger(c.logLevel);
  const starting = new AbortController();
  const stopStarting = () => starting.abort();
  process.once('SIGTERM', stopStarting).once('SIGINT', stopStarting);
  await retryUntilReady(() => migrateDatabase(c.databaseUrl), {
    logger,
    what: `Postgres at ${redactUrl(c.databaseUrl)}`,
    signal: starting.signal,
  });
  process.off('SIGTERM', stopStarting).off('SIGINT', stopStarting);
  const concurrency = positiveInt(values.concurrency, 'concurrency', 4);
  const poolSize = poolSizeFor(c, concurrency);
  const services = openServices(c, logger, { poolSize });
  const metrics = createWorkerMetrics();
  const running = startWorker(services, { concurrency, metrics });
  const sweeps = await startSweepService(services);
  const { port: metricsPort, host: metricsHost } = c.metrics;
  const ops =
    metricsPort === null
      ? null
      : await startMetricsServer(services, metrics, { port: metricsPort, host: metricsHost });
  if (ops) logger.info({ url: ops.url }, 'metrics, /healthz and /readyz listening');
  logger.info(
    {
      concurrency: running.worker.opts.concurrency,
      dbPoolSize: poolSize,
      summarizer: services.summarizer.name,
      prefix: c.queuePrefix,
    },
    'worker started',
  );
  return waitForSignals(async (force) => {
    logger.info({ force }, force ? 'second signal: forcing exit' : 'signal: finishing active jobs');
    await sweeps.close();
    await running.close(force);
    await ops?.close();
  });
}

async function dashboardCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'read-only': { type: 'boolean' },
    insecure: { type: 'boolean' },
  });
  const c = config();
  const port = values.port === undefined ? c.dashboard.port : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`);
  const host = values.host ?? c.dashboard.host;
  const logger = createLogger(c.logLevel);
  const services = openServices(c, logger, { poolSize: 4 });
  let dashboard: Dashboard;
  try {
    dashboard = await startDashboard(services, {
      port,
      host,
      readOnly: values['read-only'] ?? false,
      insecure: values.insecure ?? false,
    });
  } catch (error) {
    await services.close();
    throw error;
  }
  logger.info(
    { url: dashboard.url, readOnly: values['read-only'] ?? false, prefix: c.queuePrefix },
    'dashboard listening',
  );
  return waitForSignals(async () => {
    logger.info('signal: closing the dashboard');
    await dashboard.close();
  });
}

/**
 * Resolves with exit code 0 after the first SIGTERM/SIGINT has run `stop(false)` (graceful);
 * a second signal runs `stop(true)` and exits 1 at once, leaving unfinished jobs to stall and be
 * recovered by another worker.
 */
function waitForSignals(stop: (force: boolean) => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let signals = 0;
    const onSignal = () => {
      signals++;
      if (signals === 1) {
        stop(false).then(
          () => resolve(0),
          () => resolve(1),
        );
      } else {
        void stop(true).finally(() => process.exit(1));
        setTimeout(() => process.exit(1), 2_000).unref();
      }
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

async function compactCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, {
    tenant: { type: 'string' },
    session: { type: 'string' },
    strategy: { type: 'string' },
    'dry-run': { type: 'boolean' },
  });
  const tenantId = required(values.tenant, 'tenant');
  const sessionId = required(values.session, 'session');
  const override = strategyFlag(values.strategy);
  const c = config();
  const logger = createLogger(c.logLevel);
  const services = openServices(c, logger, { poolSize: 2 });
  try {
    if (values['dry-run']) {
      const snapshot = await services.store.loadSnapshot(tenantId, sessionId);
      const { strategy, source, mode, triggers } = await effectivePolicy(services.store, {
        tenantId,
        sessionId,
        strategy: override,
      });
      const plan = planCompaction(snapshot, snapshot.messages, strategy);
      const stays = plan.action === 'compact' ? explainStays(snapshot.messages, plan) : [];
      const preview = {
        dryRun: true,
        tenantId,
        sessionId,
        strategy,
        policy: { source: override ? 'override' : source, mode, triggers },
        snapshotSeq: snapshot.snapshotSeq,
        plan,
        stays,
      };
      process.stdout.write(`${JSON.stringify(preview, null, 2)}\n`);
      return 0;
    }
    const outcome = await runCompaction(
      { ...services, now: () => performance.now() },
      {
        tenantId,
        sessionId,
        strategy: override,
        trigger: 'manual',
        idempotencyKey: `manual:${randomUUID()}`,
        eventId: null,
      },
    );
    // A manual compaction never batches: it always has its ledger row.
    process.stdout.write(`${JSON.stringify(outcome.row)}\n`);
    return 0;
  } finally {
    await services.close();
  }
}

async function historyCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, { tenant: { type: 'string' }, session: { type: 'string' } });
  const tenantId = required(values.tenant, 'tenant');
  const sessionId = required(values.session, 'session');
  const database = openDatabase(config().databaseUrl, { max: 1 });
  try {
    const store = new CompactionStore(database.db);
    const rows = await store.history(tenantId, sessionId);
    if (rows.length === 0) await store.assertSession(tenantId, sessionId); // a foreign session: "not found"
    for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
    return 0;
  } finally {
    await database.close();
  }
}

async function restoreCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, {
    tenant: { type: 'string' },
    session: { type: 'string' },
    compaction: { type: 'string' },
    'dry-run': { type: 'boolean' },
  });
  const tenantId = required(values.tenant, 'tenant');
  const sessionId = required(values.session, 'session');
  const compactionId = required(values.compaction, 'compaction');
  const c = config();
  const services = openServices(c, createLogger(c.logLevel), { poolSize: 2 });
  try {
    // The lease keeps a running compaction from paying for a summary the restore will fence off.
    const lease = await services.leases.acquire(tenantId, sessionId);
    if (!lease) throw new InvalidInputError(`session "${sessionId}" is being compacted right now; try again`);
    try {
      const result = await restoreCompaction(services.database.db, {
        tenantId,
        sessionId,
        compactionId,
        dryRun: values['dry-run'] ?? false,
      });
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    } finally {
      await lease.release();
    }
  } finally {
    await services.close();
  }
}

async function sweepCommand(args: string[], config: () => Config): Promise<number> {
  const { values } = parse(args, { 'dry-run': { type: 'boolean' } });
  const c = config();
  const database = openDatabase(c.databaseUrl, { max: 2 });
  const producer = values['dry-run'] ? null : createProducer({ redisUrl: c.redisUrl, prefix: c.queuePrefix });
  try {
    const result = await runSweep(database.db, producer?.queue ?? null, {
      dryRun: values['dry-run'] ?? false,
    });
    for (const due of result.sample) process.stdout.write(`${JSON.stringify(due)}\n`);
    const { sample: _sample, ...totals } = result;
    process.stdout.write(
      `${JSON.stringify({ dryRun: values['dry-run'] ?? false, ...totals, ms: Math.round(totals.ms) })}\n`,
    );
    return 0;
  } finally {
    await producer?.close();
    await database.close();
  }
}

async function policyCommand(args: string[], config: () => Config): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parse(rest, {
    tenant: { type: 'string' },
    agent: { type: 'string' },
    policy: { type: 'string' },
  });
  const tenantId = required(values.tenant, 'tenant');
  const agentId = values.agent ?? null;
  const database = openDatabase(config().databaseUrl, { max: 1 });
  try {
    if (action === 'set') {
      const text = required(values.policy, 'policy');
      let input: unknown;
      try {
        input = JSON.parse(text);
      } catch {
        throw new UsageError(`--policy must be a JSON object, got: ${text.slice(0, 80)}`);
      }
      process.stdout.write(`${JSON.stringify(await setPolicy(database.db, tenantId, agentId, input))}\n`);
    } else if (action === 'get') {
      const row = await getPolicy(database.db, tenantId, agentId);
      if (!row)
        throw new InvalidInputError(
          `no policy for tenant "${tenantId}"${agentId ? ` agent "${agentId}"` : ''}`,
        );
      process.stdout.write(`${JSON.stringify(row)}\n`);
    } else if (action === 'list') {
      for (const row of await listPolicies(database.db, tenantId))
        process.stdout.write(`${JSON.stringify(row)}\n`);
    } else {
      throw new UsageError(`policy takes set, get or list, got "${action ?? ''}"`);
    }
    return 0;
  } finally {
    await database.close();
  }
}

async function demoCommand(args: string[], config: () => Config): Promise<number> {
  const { values, positionals } = parse(args, { concurrency: { type: 'string' } }, true);
  if (positionals.length > 1) throw new UsageError('demo takes at most one directory');
  return runDemo(config(), {
    dir: positionals[0],
    concurrency: positiveInt(values.concurrency, 'concurrency', 4),
    out: process.stdout,
    progress: process.stderr,
  });
}
