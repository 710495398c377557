/**
 * What the benchmark scripts share: a markdown report built section by section, option parsing and
 * medians, the set-based seeding of plain sessions, and a backlog of `session.run.completed` jobs.
 */
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import type postgres from 'postgres';
import type { z } from 'zod';
import { RUN_COMPLETED } from '../../shared/protocol/events.ts';
import type { strategySchema } from '../../shared/strategies/index.ts';

/** A markdown report: a heading, then sections of one table each, also printed as they are added. */
export class Report {
  private readonly parts: string[];
  constructor(title: string, cores: number) {
    this.parts = [
      `# ${title}\n\nRun on ${new Date().toISOString()} (${process.platform}, Node ${process.version}, ${cores} cores).\n`,
    ];
  }

  /** Adds a `## title` section: a table of `header` and `rows`, then the `notes` lines. */
  section(title: string, header: string[], rows: string[][], notes: string[] = []): void {
    const lines = [`## ${title}\n`, `| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
    for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
    if (notes.length > 0) lines.push('', ...notes);
    const text = `${lines.join('\n')}\n`;
    this.parts.push(text);
    console.log(`\n${text}`);
  }

  /** The whole report, as written to a results file. */
  text(): string {
    return this.parts.join('\n');
  }
}

/**
 * `text` (an option's value) as a positive integer.
 * @throws {Error} naming the option `--<option>` when it is not one.
 */
export function positiveInteger(option: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${option}: "${text}" is not a positive integer`);
  return n;
}

/** The median of `xs` (the upper one of an even count), 0 when empty. */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
}

/** `n` with `digits` decimals; `n/a` for NaN or an infinity (a ratio with a side that did not run). */
export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/**
 * Replaces every session with `count` fresh sessions of tenant `tenantId`, named `<prefixId>1` ..
 * `<prefixId><count>` (`prefixId` default `s`), of `perSession` plain messages (30 tokens each),
 * and the ledger with `ledgerRows` (default `count`) earlier rows of the tenant
 * ({@link addLedgerHistory}), set-based, then `vacuum analyze`.
 */
export async function seedSessions(
  sql: postgres.Sql,
  tenantId: string,
  count: number,
  perSession: number,
  { prefixId = 's', ledgerRows = count }: { prefixId?: string; ledgerRows?: number } = {},
): Promise<void> {
  await sql`truncate messages, archived_messages, compactions, sessions, summary_batches, append_requests`;
  await addSessions(sql, tenantId, count, perSession, prefixId);
  await addLedgerHistory(sql, tenantId, ledgerRows);
  await sql`vacuum analyze`;
}

/**
 * Adds `count` skipped compactions of tenant `tenantId` (sessions `h1` .. `h<count>`, which have no
 * rows of their own) to the ledger, as a running deployment's ledger holds the tenant's earlier
 * events, most of them skipped. The planner needs them: a statement prepared on an empty ledger
 * (its first executions, on every new connection) keeps a plan that reads the whole table, and on
 * a server with autovacuum off no later `analyze` replaces it, so every ledger lookup read more
 * pages as a run filled the ledger (part 2 at 128: a gate read 445 pages on average, where its
 * index reads 3). They belong to the bench's own tenant: statistics that saw only another tenant
 * estimate none of this one's rows, and a session's lookups then walk all of them by the smallest
 * index that starts with the tenant (the soak: 2,479 pages a leaving read after four runs).
 */
export async function addLedgerHistory(sql: postgres.Sql, tenantId: string, count: number): Promise<void> {
  await sql`
    insert into compactions (tenant_id, session_id, idempotency_key, trigger, strategy, status, reason,
      messages_before, messages_after, tokens_before, tokens_after, messages_archived)
    select ${tenantId}, 'h' || g, 'history:' || g, 'event', 'slidingWindow', 'skipped', 'below the trigger',
      20, 20, 600, 600, 0
    from generate_series(1, ${count}::int) g`;
}

/**
 * Adds `count` sessions of tenant `tenantId`, `<prefixId>1` .. `<prefixId><count>`, of `perSession`
 * plain messages (30 tokens each), set-based, beside the sessions already there.
 */
export async function addSessions(
  sql: postgres.Sql,
  tenantId: string,
  count: number,
  perSession: number,
  prefixId: string,
): Promise<void> {
  await sql`
    insert into sessions (tenant_id, id, last_seq, message_count, token_count)
    select ${tenantId}, ${prefixId} || g, ${perSession - 1}, ${perSession}, ${perSession * 30}
    from generate_series(1, ${count}::int) g`;
  await sql`
    insert into messages (tenant_id, session_id, seq, role, kind, content, content_blocks, token_count, pinned)
    select tenant_id, session_id, seq, role, kind, content, to_json(content), 30, false
    from (
      select ${tenantId} as tenant_id, ${prefixId} || g as session_id, q as seq,
        case when q % 2 = 0 then 'user' else 'assistant' end as role, 'message' as kind,
        'message ' || q || ' of session ' || g || ': ' || repeat('lorem ipsum dolor sit amet ', 4) as content
      from generate_series(1, ${count}::int) g, generate_series(0, ${perSession - 1}::int) q
    ) m`;
}

/** What a bench job carries besides its session: compactor's strategy, or the floor's `keep`. */
export type RunCompletedExtra = { strategy: z.input<typeof strategySchema> } | { keep: number };

/**
 * `count` run-completed jobs for sessions `s1` .. `s<count>` of `tenantId`, each with its own
 * event id (also its BullMQ job id) and the fields of `extra` (`{ strategy }` as the event carries
 * it, defaults unfilled; `{ keep }` for the floor), as `Queue.addBulk` takes them. Failed jobs stay.
 */
export function runCompletedJobs(
  tenantId: string,
  count: number,
  extra: RunCompletedExtra,
  removeOnComplete: boolean,
) {
  return Array.from({ length: count }, (_, i) => {
    const eventId = randomUUID();
    return {
      name: RUN_COMPLETED,
      data: { tenantId, sessionId: `s${i + 1}`, eventId, ...extra },
      opts: { jobId: eventId, removeOnComplete, removeOnFail: false },
    };
  });
}

/**
 * Jobs/s while all `concurrency` slots were busy: completions after the first wave's (the
 * `concurrency`-th completion, so ramp-up is left out) up to the start of the last job (after it the
 * queue is empty and the worker drains the last wave).
 */
export function steadyJobsPerS(jobs: Job[], concurrency: number): number {
  const finished = jobs.map((j) => j.finishedOn ?? 0).sort((a, b) => a - b);
  const from = finished[concurrency - 1] ?? 0;
  const to = Math.max(...jobs.map((j) => j.processedOn ?? 0));
  const n = finished.filter((t) => t > from && t <= to).length;
  return to > from ? (n * 1000) / (to - from) : 0;
}
