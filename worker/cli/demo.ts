/**
 * `compactor demo`: the main job end to end on real transcripts. Migrates, imports every
 * transcript under a fresh tenant, starts a worker in-process, enqueues one
 * `session.run.completed` per session plus a duplicate of each, waits until every event is settled
 * and prints what happened, with the invariant checks. Safe to run any number of times.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import { type ImportedSession, importTranscript, transcriptFiles } from '../../producer/import.ts';
import { connectionOf, createProducer } from '../../producer/index.ts';
import { InvalidInputError } from '../../shared/contract/errors.ts';
import type { Config } from '../config/config.ts';
import { packagePath } from '../config/package-files.ts';
import { audit, violations } from '../postgres/audit.ts';
import { ensureDatabase } from '../postgres/create-database.ts';
import { keyedLedgerLines, type LedgerLine } from '../postgres/queries/ledger.ts';
import { startWorker } from '../queue/compaction/worker.ts';
import { createLogger } from '../runtime/logger.ts';
import { migrateInstall } from '../runtime/migrate-install.ts';
import { openServices } from '../runtime/services.ts';
import type { Progress, TerminalStream } from './progress.ts';

/** The real transcripts shipped with the repository (`corpus/sessions`; not in the npm package). */
export const DEFAULT_CORPUS_DIR = packagePath('corpus', 'sessions');

export interface DemoOptions {
  /** Directory of `*.jsonl` transcripts. Default {@link DEFAULT_CORPUS_DIR}. */
  dir?: string | undefined;
  /** Worker concurrency. */
  concurrency: number;
  /** Where the table goes. */
  out: TerminalStream;
  /** Where progress lines go (stderr). */
  err: TerminalStream;
  /** The bar for the import and the wait, drawn on a terminal only. */
  progress: Progress;
  /** Longest wait for the events to settle, ms. Default 300,000. */
  timeoutMs?: number;
  /** Makes the worker's logger at a pino level. Default {@link createLogger} (JSON lines on stderr). */
  logger?: (level: string) => Logger;
}

/**
 * Runs the demo; returns the exit code (0 when every check holds).
 * @throws {InvalidInputError} when the directory has no transcripts.
 */
export async function runDemo(config: Config, options: DemoOptions): Promise<number> {
  const dir = options.dir ?? DEFAULT_CORPUS_DIR;
  if (!existsSync(dir))
    throw new InvalidInputError(
      options.dir === undefined
        ? 'the demo corpus ships with the repository, not the npm package: pass a directory of .jsonl transcripts'
        : `${dir}: no such directory; pass a directory of .jsonl transcripts`,
    );
  const say = (line: string) => options.progress.print(options.err, line);
  const started = performance.now();
  const logger = (options.logger ?? createLogger)(config.logLevel === 'info' ? 'warn' : config.logLevel);

  if (await ensureDatabase(config.databaseUrl))
    say(`created database ${new URL(config.databaseUrl).pathname.slice(1)}`);
  await migrateInstall(config);
  const files = await transcriptFiles([dir]);
  const tenantId = `demo-${new Date().toISOString().slice(0, 10)}-${randomBytes(3).toString('hex')}`;
  say(`tenant ${tenantId}: importing ${files.length} transcripts from ${dir}`);

  const services = openServices(config, logger);
  const producer = createProducer({
    ...connectionOf(config),
    prefix: config.queuePrefix,
    db: services.database.db,
  });
  const running = startWorker(services, { concurrency: options.concurrency });
  try {
    const imported: ImportedSession[] = [];
    options.progress.start('importing', files.length, 'transcripts');
    for (const file of files) {
      imported.push(await importTranscript(services.database.db, file, { tenantId }));
      options.progress.increment();
    }
    options.progress.stop();
    const importedMessages = imported.reduce((n, s) => n + s.messageCount, 0);
    say(`imported ${imported.length} sessions, ${importedMessages} messages`);

    const jobIds: string[] = [];
    for (const session of imported) {
      const event = { eventId: randomUUID(), tenantId, sessionId: session.sessionId };
      const { jobId } = await producer.runCompleted(event);
      await producer.runCompleted(event); // the duplicate: same eventId, absorbed by BullMQ and the ledger
      jobIds.push(jobId);
    }
    say(
      `enqueued ${jobIds.length} events and ${jobIds.length} duplicates; worker concurrency ${options.concurrency}`,
    );

    await waitSettled(producer.queue, jobIds, options.timeoutMs ?? 300_000, say, options.progress);
    const rows = await keyedLedgerLines(services.database.db, tenantId);
    const report = await audit(services.database.db, tenantId);
    const wallMs = performance.now() - started;
    const lines = renderTable(rows);
    const problems = checks(rows, imported, report, importedMessages);
    options.out.write(`${lines.join('\n')}\n\n`);
    options.out.write(
      `${summaryLines(rows, importedMessages, report, services.summarizers.primary.name, wallMs, jobIds.length).join('\n')}\n`,
    );
    for (const p of problems) options.out.write(`CHECK FAILED: ${p}\n`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    options.progress.stop();
    await running.close();
    await producer.close();
  }
}

/**
 * Waits until every job is completed or failed: a bar on a terminal, else a line once a second.
 * @throws {Error} when they have not settled within `timeoutMs`.
 */
async function waitSettled(
  queue: { getJobState(id: string): Promise<string> },
  jobIds: string[],
  timeoutMs: number,
  say: (line: string) => void,
  progress: Progress,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastReport = 0;
  progress.start('settling', jobIds.length, 'events');
  for (;;) {
    const states = await Promise.all(jobIds.map((id) => queue.getJobState(id)));
    const settled = states.filter((s) => s === 'completed' || s === 'failed').length;
    progress.update(settled);
    if (settled === jobIds.length) {
      progress.stop();
      say(`settled ${settled}/${jobIds.length} events`);
      return;
    }
    if (!progress.drawing && performance.now() - lastReport > 1_000) {
      say(`settled ${settled}/${jobIds.length} events...`);
      lastReport = performance.now();
    }
    if (performance.now() > deadline) throw new Error(`events not settled within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function renderTable(rows: LedgerLine[]): string[] {
  const header = ['session', 'status', 'messages', 'tokens', 'strategy', 'summarizer', 'ms'];
  const body = rows.map((r) => [
    r.sessionId,
    r.status,
    `${r.messagesBefore} → ${r.messagesAfter}`,
    `${r.tokensBefore} → ${r.tokensAfter}`,
    r.strategy,
    r.summarizer,
    String(r.ms),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const fmt = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(fmt)];
}

function summaryLines(
  rows: LedgerLine[],
  importedMessages: number,
  report: Awaited<ReturnType<typeof audit>>,
  summarizer: string,
  wallMs: number,
  duplicates: number,
): string[] {
  const sum = (f: (r: LedgerLine) => number) => rows.reduce((n, r) => n + f(r), 0);
  const applied = rows.filter((r) => r.status === 'applied').length;
  const skipped = rows.filter((r) => r.status === 'skipped');
  const pct = (a: number, b: number) => (b === 0 ? '0%' : `${((100 * (b - a)) / b).toFixed(1)}% smaller`);
  const [mb, ma, tb, ta] = [
    sum((r) => r.messagesBefore),
    sum((r) => r.messagesAfter),
    sum((r) => r.tokensBefore),
    sum((r) => r.tokensAfter),
  ];
  const lines = [
    `sessions: ${rows.length}   compacted: ${applied}   skipped: ${skipped.length}   summarizer: ${summarizer}`,
    `messages: ${mb} → ${ma} (${pct(ma, mb)})   tokens: ${tb} → ${ta} (${pct(ta, tb)})`,
    `nothing lost: ${report.liveOriginals} live + ${report.archivedOriginals} archived = ${
      report.liveOriginals + report.archivedOriginals
    } of ${importedMessages} imported messages; ${violations(report).length === 0 ? 'all invariants hold' : violations(report).join('; ')}`,
    `one decision per event: ${new Set(rows.map((r) => r.sessionId)).size} sessions, ${rows.length} ledger rows ` +
      `(${applied} compacted once, ${skipped.length} skipped with a reason); ` +
      `duplicates: ${duplicates} enqueued, ${rows.length - new Set(rows.map((r) => r.sessionId)).size} extra ledger rows`,
    `wall time: ${(wallMs / 1000).toFixed(2)} s`,
  ];
  for (const r of skipped) lines.push(`skipped ${r.sessionId}: ${r.reason}`);
  return lines;
}

/** The demo's own checks: nothing lost, one ledger decision per session, invariants. */
function checks(
  rows: LedgerLine[],
  imported: ImportedSession[],
  report: Awaited<ReturnType<typeof audit>>,
  importedMessages: number,
) {
  const problems: string[] = [];
  if (report.liveOriginals + report.archivedOriginals !== importedMessages) {
    problems.push(
      `messages lost: ${report.liveOriginals} live + ${report.archivedOriginals} archived ≠ ${importedMessages} imported`,
    );
  }
  problems.push(...violations(report));
  const perSession = new Map<string, number>();
  for (const r of rows) perSession.set(r.sessionId, (perSession.get(r.sessionId) ?? 0) + 1);
  for (const s of imported) {
    const n = perSession.get(s.sessionId) ?? 0;
    if (n !== 1)
      problems.push(`session ${s.sessionId} has ${n} ledger decisions for its one event (expected 1)`);
  }
  return problems;
}
